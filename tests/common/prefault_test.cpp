// common/prefault.hpp: vectors reserved and their fresh capacity faulted in
// on every core, so that a resize afterwards writes resident pages.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "common/prefault.hpp"

namespace tally {
namespace {

// Whether every page of [first, first + bytes) is resident (mincore).
bool resident(const void* first, size_t bytes) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t start = reinterpret_cast<uintptr_t>(first) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(first) + bytes;
  std::vector<unsigned char> in((end - start + page - 1) / page);
  if (mincore(reinterpret_cast<void*>(start), end - start, in.data()) != 0) return false;
  for (unsigned char p : in)
    if ((p & 1) == 0) return false;
  return true;
}

TEST(Prefault, ReservedCapacityIsResidentAndKeptValuesStay) {
  constexpr size_t n = size_t{3} << 20;  // 24 MB of int64: many pieces
  std::vector<int64_t> empty, grown = {7, 8, 9}, larger(n + 5, 4);
  std::vector<int32_t> narrow;
  reserve_faulted_in(std::vector<std::vector<int64_t>*>{&empty, &grown, &larger}, n);
  reserve_faulted_in(std::vector<std::vector<int32_t>*>{&narrow}, n);
  EXPECT_GE(empty.capacity(), n);
  EXPECT_TRUE(resident(empty.data(), n * sizeof(int64_t)));
  EXPECT_GE(narrow.capacity(), n);
  EXPECT_TRUE(resident(narrow.data(), n * sizeof(int32_t)));
  // A vector too small is emptied and reserved afresh: its values are not
  // kept (the callers size it to zeros next).
  EXPECT_TRUE(grown.empty());
  EXPECT_GE(grown.capacity(), n);
  // One already as large keeps its elements.
  EXPECT_EQ(larger.size(), n + 5);
  EXPECT_EQ(larger[n], 4);
  empty.resize(n);
  EXPECT_EQ(empty[n - 1], 0);
}

TEST(Prefault, PiecesCoverOnlyWhatIsNotResident) {
  std::vector<unsigned char> touched(size_t{4} << 20, 1);  // written: resident
  std::vector<MemoryPiece> pieces;
  add_unfaulted_pieces(touched.data(), touched.size(), pieces);
  EXPECT_TRUE(pieces.empty());
  // Fresh anonymous memory: no page resident until written.
  const size_t bytes = size_t{3} << 20;
  void* fresh = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(fresh, MAP_FAILED);
  add_unfaulted_pieces(static_cast<unsigned char*>(fresh), bytes, pieces);
  size_t covered = 0;
  for (const MemoryPiece& p : pieces) covered += p.second;
  EXPECT_EQ(covered, bytes);
  fault_in(pieces);
  EXPECT_TRUE(resident(fresh, bytes));
  munmap(fresh, bytes);
}

}  // namespace
}  // namespace tally
