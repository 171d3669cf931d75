#pragma once
// The HAVING conjuncts an aggregator can test on its partial states before
// it builds result columns (GroupAggregator::set_group_filter).
#include <cstdint>
#include <vector>

#include "executor/expression.hpp"
#include "executor/group_aggregator.hpp"

namespace tally::executor {

// `aggregate op constant` or `constant op aggregate` among HAVING's
// conjuncts: the aggregate a bare reference to one of the aggregation's
// aggregate columns (`having` is bound over [keys..., aggregates...]), the
// constant foldable to an integer or a finite numeric, op one of <, <=, >,
// >=, =, <>. Other conjuncts, and a HAVING that is not a conjunction of
// them, give nothing: the filter may only be looser than HAVING.
std::vector<GroupFilter> having_group_filter(const Expr& having, size_t keys, size_t aggregates,
                                             const std::vector<Value>* parameters);

// A GroupFilter over values of one scale (mantissa / 10^scale), exact, as
// cheap per group as a comparison of two integers: the constant is brought
// to the values' scale once. A test it cannot make in 128 bits passes (the
// group is kept, HAVING decides).
class ScaledGroupTest {
 public:
  ScaledGroupTest(const GroupFilter& filter, int32_t scale);
  bool passes(__int128 value) const;

 private:
  enum class Op : uint8_t { lt, le, gt, ge, eq, ne };
  Op op_ = Op::eq;
  bool decided_ = false;     // the constant is out of reach: every value passes
  __int128 constant_ = 0;    // at the values' scale, or its own when factor_ > 1
  __int128 factor_ = 1;      // brings a value to the constant's larger scale
};

}  // namespace tally::executor
