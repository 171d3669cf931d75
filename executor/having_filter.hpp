#pragma once
// The HAVING conjuncts an aggregator can test on its partial states before
// it builds result columns (GroupAggregator::set_group_filter).
#include <cstdint>
#include <vector>

#include "common/group_test.hpp"
#include "executor/expression.hpp"
#include "executor/group_aggregator.hpp"

namespace tally::executor {

// `aggregate op constant` or `constant op aggregate` among HAVING's
// conjuncts: the aggregate a bare reference to one of the aggregation's
// aggregate columns (`having` is bound over [keys..., aggregates...]), the
// constant an integer or a finite numeric that is the same for the whole
// statement (constants, parameters, uncorrelated scalar subqueries, which
// run here, and non-volatile functions of them), op one of <, <=, >,
// >=, =, <>. Other conjuncts, and a HAVING that is not a conjunction of
// them, give nothing: the filter may only be looser than HAVING.
std::vector<GroupFilter> having_group_filter(const Expr& having, size_t keys, size_t aggregates,
                                             const std::vector<Value>* parameters);

// The test of a GroupFilter over values of one scale.
ScaledGroupTest scaled_group_test(const GroupFilter& filter, int32_t scale);

}  // namespace tally::executor
