// CRC-32C: the known check value, and a large buffer (three streams,
// combined) against the same bytes in pieces too small for them.
#include "storage/crc32c.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace tally::storage {
namespace {

TEST(Crc32cTest, CheckValue) { EXPECT_EQ(crc32c(0, "123456789", 9), 0xE3069283u); }

TEST(Crc32cTest, LargeBuffersMatchTheirPieces) {
  std::mt19937_64 rng(7);
  std::vector<uint8_t> bytes(200'003);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  for (const size_t n : {size_t{0}, size_t{7}, size_t{12'287}, size_t{12'288}, size_t{12'300}, size_t{65'537},
                         bytes.size()}) {
    uint32_t pieces = 0;
    for (size_t at = 0; at < n; at += 1000) pieces = crc32c(pieces, bytes.data() + at, std::min<size_t>(1000, n - at));
    EXPECT_EQ(crc32c(0, bytes.data(), n), pieces) << n;
    // And continuing from a CRC that is not zero.
    EXPECT_EQ(crc32c(crc32c(0, bytes.data(), 5), bytes.data() + 5, n - std::min<size_t>(n, 5)),
              crc32c(0, bytes.data(), std::max<size_t>(n, 5))) << n;
  }
}

}  // namespace
}  // namespace tally::storage
