#pragma once
// x op ANY (array) and x op ALL (array) over the arrays Tally holds
// (array_text.hpp): a catalog column (pg_index.indkey, pg_constraint.conkey,
// reloptions) or an array literal ('{1,2}').
#include <string>

#include "executor/binder.hpp"

namespace tally::executor {

// `all` selects ALL; op is a comparison operator (=, <>, <, <=, >, >=).
// 42809 when the right side is not an array, 0A000 for another operator.
ExprPtr make_array_comparison(const std::string& op, bool all, ExprPtr left, ExprPtr right, BindContext& context);

}  // namespace tally::executor
