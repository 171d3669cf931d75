#pragma once
// The catalog functions clients call in their metadata queries (psql's \d
// family, pgjdbc, psqlODBC): format_type, pg_get_userbyid, the visibility and
// privilege tests, the definition and comment look-ups (views, indexes and
// key constraints through their seams; NULL for comments, triggers and
// partition keys, which Tally's tables do not have), quote_ident,
// pg_encoding_to_char, pg_tablespace_location and pg_size_pretty;
// current_schemas and pg_get_serial_sequence.
#include <string>
#include <vector>

#include "executor/binder.hpp"

namespace tally::executor::scalar {

// The call when `name` with these arguments is one of them; nullptr, the
// arguments untouched, when it is not.
ExprPtr make_catalog_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context);

// PostgreSQL's quote_ident (identifiers that are keywords stay unquoted).
std::string quote_ident(const std::string& s);

// current_schemas(include_implicit): the schemas of search_path that exist,
// pg_catalog first when implicit ones are asked for and it is not listed.
std::vector<std::string> current_schemas(bool include_implicit, const Settings* settings);

}  // namespace tally::executor::scalar
