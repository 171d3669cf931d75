#pragma once
// Software write combining for a radix scatter: rows bound for one of many
// partitions are staged per partition in a cache-line-sized block and
// written to their partition's output a whole block at a time. A plain
// scatter writes one element to each of hundreds of output streams in turn:
// every store is to another page (TLB miss) and another partly written
// line; staged, the stores hit a few L1/L2-resident blocks and the output
// gets 64-byte sequential writes (several times faster a row than the plain
// scatter into hundreds of partitions).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace tally::executor::cpu {

// Two parallel output arrays (A[i], B[i] belong together: a value and its
// key or slot) scattered to partition cursors. One per thread; the cursors
// are that thread's exclusive output positions per partition.
template <class A, class B>
class CombinedScatter {
 public:
  // Elements of A per staged block: one 64-byte line of the narrower type.
  static constexpr size_t kBlock = 64 / (sizeof(A) < sizeof(B) ? sizeof(A) : sizeof(B));

  CombinedScatter(size_t partitions, A* out_a, B* out_b, uint32_t* cursor)
      : a_(partitions * kBlock), b_(partitions * kBlock), fill_(partitions, 0), out_a_(out_a), out_b_(out_b),
        cursor_(cursor) {}

  void add(size_t partition, A a, B b) {
    uint32_t k = fill_[partition];
    const size_t at = partition * kBlock + k;
    a_[at] = a;
    b_[at] = b;
    if (++k == kBlock) {
      write(partition, kBlock);
      k = 0;
    }
    fill_[partition] = k;
  }

  // Writes what is still staged; call once after the last add.
  void finish() {
    for (size_t p = 0; p < fill_.size(); ++p) {
      if (fill_[p] > 0) write(p, fill_[p]);
      fill_[p] = 0;
    }
  }

 private:
  void write(size_t partition, size_t n) {
    const uint32_t at = cursor_[partition];
    std::memcpy(out_a_ + at, a_.data() + partition * kBlock, n * sizeof(A));
    std::memcpy(out_b_ + at, b_.data() + partition * kBlock, n * sizeof(B));
    cursor_[partition] = at + static_cast<uint32_t>(n);
  }

  std::vector<A> a_;
  std::vector<B> b_;
  std::vector<uint32_t> fill_;
  A* out_a_;
  B* out_b_;
  uint32_t* cursor_;
};

}  // namespace tally::executor::cpu
