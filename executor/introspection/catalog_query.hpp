#pragma once
// A small row-at-a-time evaluator for the SELECT statements clients send to
// read the catalog (psql's \d family, psqlODBC, pgjdbc metadata): nested-loop
// inner/left/cross joins over the virtual relations of catalog_relations.hpp,
// WHERE, scalar/EXISTS/IN subqueries (correlated too), UNION [ALL], DISTINCT,
// ORDER BY, LIMIT/OFFSET, CASE, ~ / !~ / LIKE, casts to oid, regclass,
// regtype and text, and the catalog functions those clients call. Anything
// else is a clean 0A000, never a wrong answer. Catalogs are small, so
// simplicity wins over speed here.
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/introspection/catalog_relations.hpp"
#include "executor/result_set.hpp"

namespace tally::executor::introspection {

// True when the SELECT (including its subqueries and set operations) reads a
// catalog relation that is not shadowed by a user table of the same name.
bool reads_catalog(const nlohmann::json& select_stmt, const CatalogSource& source);

// Runs the SELECT; parameters are $1.. values with their types.
ResultSet run_catalog_query(const nlohmann::json& select_stmt, const CatalogSource& source,
                            const std::vector<std::pair<SqlType, Value>>& parameters);

// The result columns the statement will produce (for Describe).
std::vector<tally::FieldDescription> catalog_query_fields(const nlohmann::json& select_stmt,
                                                             const CatalogSource& source,
                                                             const std::vector<SqlType>& parameter_types);

}  // namespace tally::executor::introspection
