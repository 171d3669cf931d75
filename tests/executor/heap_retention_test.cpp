// common/heap_retention.hpp: a large array freed by one query is reused by
// the next without faulting in fresh pages, and release_retained_heap_over
// gives the memory back when more than the bound is free; pretouch_heap's
// pages serve the first large array after a start.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstring>
#include <thread>
#include <vector>

#include "common/heap_retention.hpp"

namespace {

// As tallyd does (the CPU engine's static initializer): before any thread.
[[maybe_unused]] const bool kRetained = (tally::retain_large_allocations(), true);

long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

constexpr size_t kBytes = size_t{256} << 20;        // larger than any mmap threshold glibc allows
constexpr long kFreshFaults = (256L << 20) / 4096 / 2;  // at least half its pages, were they fresh

// Page faults of allocating, filling and freeing one kBytes vector (what a
// query does with a result array), on a thread of its own as a session would.
long faults_of_one_array() {
  long faults = 0;
  std::thread worker([&] {
    const long before = minor_faults();
    std::vector<uint64_t> array(kBytes / sizeof(uint64_t));
    std::memset(array.data(), 0x5a, kBytes);
    faults = minor_faults() - before;
    ASSERT_EQ(array[12345], 0x5a5a5a5a5a5a5a5aULL);
  });
  worker.join();
  return faults;
}

bool malloc_is_glibc() {
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
  return false;
#endif
#endif
  return true;
#else
  return false;
#endif
}

TEST(HeapRetention, RepeatedLargeArrayReusesItsPages) {
  if (!malloc_is_glibc()) GTEST_SKIP() << "malloc is not glibc's (sanitizer build): the policy does not apply";
  faults_of_one_array();  // the first one grows the heap
  const long again = faults_of_one_array();
  EXPECT_LT(again, kFreshFaults / 16) << "a repeated 256 MB array faulted " << again << " pages";
}

TEST(HeapRetention, ReleaseOverBoundGivesMemoryBack) {
  if (!malloc_is_glibc()) GTEST_SKIP() << "malloc is not glibc's (sanitizer build): the policy does not apply";
  faults_of_one_array();
  tally::release_retained_heap_over(tally::retained_heap_bytes());  // under the bound: kept
  EXPECT_LT(faults_of_one_array(), kFreshFaults / 16);
  tally::release_retained_heap_over(0);  // over a zero bound: everything goes back
  EXPECT_GT(faults_of_one_array(), kFreshFaults) << "the freed array was not returned to the kernel";
}

TEST(HeapRetention, PretouchedHeapServesTheFirstLargeArray) {
  if (!malloc_is_glibc()) GTEST_SKIP() << "malloc is not glibc's (sanitizer build): the policy does not apply";
  tally::release_retained_heap_over(0);  // what earlier tests left goes back: the next array would be fresh
  ASSERT_GT(faults_of_one_array(), kFreshFaults) << "the array did not start on fresh pages";
  tally::release_retained_heap_over(0);
  const long before = minor_faults();
  ASSERT_TRUE(tally::pretouch_heap(kBytes + (size_t{16} << 20), 2));
  EXPECT_GT(minor_faults() - before, kFreshFaults) << "the pretouch faulted nothing in";
  EXPECT_LT(faults_of_one_array(), kFreshFaults / 16) << "the first array after the pretouch faulted fresh pages";
}

}  // namespace
