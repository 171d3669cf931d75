#pragma once
// Anonymous records (PostgreSQL's type "record"): the rows a set-returning
// function with OUT parameters gives in a select list, such as
// information_schema._pg_expandarray's (x, n) that pgjdbc's getPrimaryKeys
// reads as (keys).x. A record value is held in record_out's text form,
// "(1,2)"; its fields' names and types are a shape in a process-wide table
// that the SqlType's typmod indexes, so that (r).x can be bound by name.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/sql_type.hpp"

namespace tally::executor {

struct RecordField {
  std::string name;
  SqlType type;
  bool operator==(const RecordField&) const = default;
};

// The record type with these fields (one typmod per distinct shape).
SqlType record_type(const std::vector<RecordField>& fields);
// The fields of a record type; empty for one without a known shape.
std::vector<RecordField> record_fields(SqlType type);

// record_out: each field's text (nullopt: NULL, written as nothing), quoted
// when it is empty or holds a quote, backslash, parenthesis, comma or space.
std::string record_text(const std::vector<std::optional<std::string>>& fields);
// The fields' texts of a record_out text (the inverse of record_text).
std::vector<std::optional<std::string>> record_field_texts(std::string_view text);

}  // namespace tally::executor
