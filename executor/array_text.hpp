#pragma once
// Array values in their PostgreSQL text form, the form Tally holds them in:
// text[] as an array literal ({a,"b c",NULL}), int2vector and oidvector as
// space-separated numbers ("1 2"). Catalog relations store them so and
// clients receive them so; ANY/ALL, unnest and the array functions read
// their elements here.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/sql_type.hpp"

namespace tally::executor {

// True for the array types Tally holds (text[], int2vector, oidvector).
bool is_array_type(TypeId id);
// The type of an array's elements (text, int2, oid).
TypeId array_element_type(TypeId array_type);
// The elements of a value of that array type; nullopt elements are NULLs.
// 22P02 for a text[] value that is not a well-formed one-dimensional literal.
std::vector<std::optional<std::string>> array_elements(TypeId array_type, std::string_view text);
// A text[] literal of these elements, quoted as PostgreSQL's array_out quotes.
std::string array_literal(const std::vector<std::optional<std::string>>& elements);

}  // namespace tally::executor
