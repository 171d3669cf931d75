#pragma once
// Array values in their PostgreSQL text form, the form Tally holds them in:
// text[] and oid[] as an array literal ({a,"b c",NULL}, with its bounds
// when they do not start at 1: [0:1]={a,b}), int2vector and oidvector as
// space-separated numbers ("1 2"). Catalog relations store them so and
// clients receive them so; ANY/ALL, unnest and the array functions read
// their elements here.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/sql_type.hpp"

namespace tally::executor {

// True for the array types Tally holds (text[], oid[], int2vector, oidvector).
bool is_array_type(TypeId id);
// The type of an array's elements (text, oid, int2, oid).
TypeId array_element_type(TypeId array_type);
// The subscript of an array value's first element: 0 for int2vector and
// oidvector (indkey[0] is the first key column), else its literal's lower
// bound (1 unless written, as in [0:1]={a,b}).
int64_t array_lower_bound(TypeId array_type, std::string_view text);
// The elements of a value of that array type; nullopt elements are NULLs.
// 22P02 for a text[] value that is not a well-formed one-dimensional literal.
std::vector<std::optional<std::string>> array_elements(TypeId array_type, std::string_view text);
// A text[] literal of these elements, quoted as PostgreSQL's array_out
// quotes, with its bounds when the first subscript is not 1.
std::string array_literal(const std::vector<std::optional<std::string>>& elements, int64_t lower_bound = 1);

}  // namespace tally::executor
