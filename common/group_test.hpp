#pragma once
// HAVING's conjuncts as tests of a group's exact aggregate value, which an
// engine may make on its groups before it builds their result arrays
// (AggregationRun::keep_groups_where): a GPU run whose HAVING keeps a few
// of millions of groups then builds a few.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/host_device.hpp"

namespace tally {

// `value op constant` over integer values of one scale (mantissa /
// 10^scale), exact, as cheap per group as a comparison of two integers: the
// constant is brought to the values' scale once. A test it cannot make in
// 128 bits passes (the group is kept; HAVING decides). Default: passes all.
// Trivially copyable, and tested on the GPU as on the host.
class ScaledGroupTest {
 public:
  ScaledGroupTest() = default;
  // op: <, <=, >, >=, =, <> ; the constant is mantissa / 10^constant_scale.
  ScaledGroupTest(std::string_view op, __int128 mantissa, int32_t constant_scale, int32_t scale);
  TALLY_HD bool passes(__int128 value) const {
    if (decided_) return true;
    __int128 v = value;
    if (factor_ != 1) {
      // factor_ is a power of ten above 1: a product past 127 bits passes.
      const auto max = static_cast<__int128>(~static_cast<unsigned __int128>(0) >> 1);
      if (value > max / factor_ || value < -(max / factor_)) return true;
      v = value * factor_;
    }
    switch (op_) {
      case Op::lt: return v < constant_;
      case Op::le: return v <= constant_;
      case Op::gt: return v > constant_;
      case Op::ge: return v >= constant_;
      case Op::eq: return v == constant_;
      case Op::ne: return v != constant_;
    }
    return true;
  }

 private:
  enum class Op : uint8_t { lt, le, gt, ge, eq, ne };
  Op op_ = Op::eq;
  bool decided_ = true;      // the constant is out of reach: every value passes
  __int128 constant_ = 0;    // at the values' scale, or its own when factor_ > 1
  __int128 factor_ = 1;      // brings a value to the constant's larger scale
};

// One test of aggregate `aggregate` (a PartialAggregate of the run's spec):
// of its count, or of its value (an exact integer sum, min or max at the
// test's scale), which a group whose count is 0 fails (the value is NULL,
// the comparison not true). A group is dropped only where a test fails:
// the tests are looser than HAVING, which still runs over the groups kept.
struct GroupTest {
  size_t aggregate = 0;
  bool on_count = false;
  ScaledGroupTest test;
};

}  // namespace tally
