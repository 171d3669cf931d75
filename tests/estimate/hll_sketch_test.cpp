#include "executor/estimate/hll_sketch.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace tally::executor::estimate {
namespace {

TEST(HllSketch, EstimatesWithinThreeStandardErrors) {
  for (uint64_t distinct : {uint64_t{10}, uint64_t{1000}, uint64_t{100'000}, uint64_t{2'000'000}}) {
    HllSketch sketch;
    for (uint64_t v = 0; v < distinct; ++v) {
      sketch.add_value_bits(v);
      sketch.add_value_bits(v);  // duplicates change nothing
    }
    const double tolerance = 3 * sketch.relative_standard_error();
    EXPECT_NEAR(sketch.estimate() / static_cast<double>(distinct), 1.0, tolerance) << distinct;
  }
}

TEST(HllSketch, EmptySketchEstimatesZero) {
  HllSketch sketch;
  EXPECT_TRUE(sketch.empty());
  EXPECT_DOUBLE_EQ(sketch.estimate(), 0.0);
}

TEST(HllSketch, MergeIsTheSketchOfTheUnion) {
  HllSketch a, b, both;
  for (uint64_t v = 0; v < 50'000; ++v) {
    a.add_value_bits(v);
    both.add_value_bits(v);
  }
  for (uint64_t v = 30'000; v < 90'000; ++v) {
    b.add_value_bits(v);
    both.add_value_bits(v);
  }
  ASSERT_TRUE(a.merge(b));
  EXPECT_EQ(a.registers(), both.registers());
  EXPECT_NEAR(a.estimate() / 90'000.0, 1.0, 3 * a.relative_standard_error());
}

TEST(HllSketch, MergeRefusesOtherPrecision) {
  HllSketch a(12), b(10);
  b.add_value_bits(1);
  EXPECT_FALSE(a.merge(b));
  EXPECT_TRUE(a.empty());
}

TEST(HllSketch, SerializeRoundTripsAndRejectsMalformedBytes) {
  HllSketch sketch(10);
  for (uint64_t v = 0; v < 5000; ++v) sketch.add_value_bits(v * 7919);
  const std::vector<uint8_t> bytes = sketch.serialize();
  ASSERT_EQ(bytes.size(), 2u + 1024u);
  EXPECT_EQ(bytes[0], kHllFormatVersion);
  EXPECT_EQ(bytes[1], 10);
  const auto back = HllSketch::deserialize(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->registers(), sketch.registers());

  auto bad_version = bytes;
  bad_version[0] = 99;
  EXPECT_FALSE(HllSketch::deserialize(bad_version));
  auto truncated = bytes;
  truncated.pop_back();
  EXPECT_FALSE(HllSketch::deserialize(truncated));
  auto bad_register = bytes;
  bad_register[5] = 64;  // above 64 - p + 1 = 55
  EXPECT_FALSE(HllSketch::deserialize(bad_register));
  EXPECT_FALSE(HllSketch::deserialize(std::vector<uint8_t>{}));
}

TEST(HllSketch, RejectsPrecisionOutOfRange) {
  EXPECT_THROW(HllSketch(3), std::invalid_argument);
  EXPECT_THROW(HllSketch(17), std::invalid_argument);
}

}  // namespace
}  // namespace tally::executor::estimate
