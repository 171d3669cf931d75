#include "gpu/tuner/measurement.hpp"

#include <gtest/gtest.h>

namespace tally::gpu {
namespace {

TEST(Measurement, StableTimesNeedThreeChunks) {
  Measurement m;
  EXPECT_FALSE(m.add(1.00));
  EXPECT_FALSE(m.add(1.01));
  EXPECT_TRUE(m.add(0.995));
  EXPECT_EQ(m.chunks(), 3);
  EXPECT_NEAR(m.result(), (1.00 + 1.01 + 0.995) / 3, 1e-12);
}

TEST(Measurement, OutlierAtTheStartIsDiscarded) {
  Measurement m;
  m.add(1.5);  // cold first chunk
  m.add(1.0);
  EXPECT_FALSE(m.add(1.0));  // range 0.5 / mean 1.17 > v_max
  EXPECT_TRUE(m.add(1.005));
  EXPECT_EQ(m.chunks(), 4);
  EXPECT_NEAR(m.result(), (1.0 + 1.0 + 1.005) / 3, 1e-12);
  EXPECT_LE(m.variation(), 0.019);
}

TEST(Measurement, StopsAfterBMaxChunks) {
  MeasurementParams p;
  p.b_max = 6;
  Measurement m(p);
  const double noisy[] = {1.0, 1.2, 0.9, 1.3, 0.8, 1.25, 1.0};
  int chunks = 0;
  for (double t : noisy) {
    ++chunks;
    if (m.add(t)) break;
  }
  EXPECT_EQ(chunks, 6);
  EXPECT_TRUE(m.done());
  EXPECT_NEAR(m.result(), (1.3 + 0.8 + 1.25) / 3, 1e-12);  // the last window
}

TEST(Measurement, VMaxIsTheNormalizedRange) {
  MeasurementParams p;
  p.v_max = 0.1;
  Measurement m(p);
  m.add(1.0);
  m.add(1.05);
  EXPECT_TRUE(m.add(0.96));  // (1.05 - 0.96) / 1.003 < 0.1
}

}  // namespace
}  // namespace tally::gpu
