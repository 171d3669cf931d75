#pragma once
// The integer literals of a SELECT's plan, and copies of a plan with other
// values in them: what lets a statement text that differs from an analyzed
// one only in such literals (`... HAVING sum(v) < -95377` after `... < -95376`)
// run without a parse or a plan of its own (statement_shape.hpp says when
// that is the plan a new analysis would make).
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "executor/expression.hpp"

namespace tally::executor {

struct SelectPlan;

// Every constant of the plan that is a literal as written (ConstExpr::literal_location >= 0).
std::vector<const ConstExpr*> plan_literals(const SelectPlan& plan);

// A deep copy of `plan` in which each literal constant whose literal_location
// is listed holds the listed value instead (in its own type: int4 or int8);
// the table snapshot is shared. Null when the plan holds an expression this
// cannot copy, or a listed constant is not an integer.
std::shared_ptr<const SelectPlan> plan_with_literals(const SelectPlan& plan,
                                                     const std::vector<std::pair<int, int64_t>>& values);

}  // namespace tally::executor
