#pragma once
// The array functions catalog and tool queries call (array_to_string, array_remove,
// array_length, cardinality, array_lower, array_upper), ARRAY[...] and
// subscripts (indkey[0]), over the arrays Tally holds in their text form
// (executor/array_text.hpp): text[], int2vector, oidvector.
#include <string>
#include <vector>

#include "executor/binder.hpp"

namespace tally::executor::scalar {

// The call when `name` with these arguments is one of them; nullptr, the
// arguments untouched, when it is not.
ExprPtr make_array_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context);
// ARRAY[e1, e2, ...]: a text[] of the elements' text forms.
ExprPtr make_array_constructor(std::vector<ExprPtr> elements, BindContext& context);
// a || b where either side is an array: array || array concatenates (a NULL
// side leaves the other), array || element appends, element || array
// prepends; an untyped literal beside an array is an array.
ExprPtr make_array_concat(ExprPtr left, ExprPtr right, BindContext& context);
// array[i]: the element (NULL outside the bounds); 42804 when not an array.
// A name is an array of 64 "char"s from 0, as in PostgreSQL (typname[0]).
ExprPtr make_array_subscript(ExprPtr array, ExprPtr index, BindContext& context);
// array::regtype[] (and regclass[], regnamespace[], regproc[], regoper[],
// smallint[]): each element cast to the element type, held as a text[] of
// their text forms (what PostgreSQL's array prints: type names for
// regtype[]). nullptr, `array` untouched, when `type_name` is no such array.
ExprPtr make_element_array_cast(ExprPtr& array, const nlohmann::json& type_name, BindContext& context);

}  // namespace tally::executor::scalar
