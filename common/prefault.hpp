#pragma once
// Fresh memory faulted in on every core before it is written: a page fault
// costs microseconds on a virtualized host, and the gigabytes of a hundred
// million groups' arrays hold hundreds of thousands of pages, most of a
// second when each array's one thread takes its own.
#include <cstddef>
#include <utility>
#include <vector>

namespace tally {

// A region of memory, its first byte and length.
using MemoryPiece = std::pair<unsigned char*, size_t>;

// Adds the megabyte pieces of [first, first + bytes) that hold a page not
// yet in memory (mincore) to `pieces`; all of them where it cannot tell.
void add_unfaulted_pieces(unsigned char* first, size_t bytes, std::vector<MemoryPiece>& pieces);

// Writes zeros over `pieces`, taken by every core.
void fault_in(const std::vector<MemoryPiece>& pieces);

// The reserved capacity of each vector up to n elements (after its size),
// faulted in on every core: a resize() to n then writes pages already there.
template <class Vector>
void reserve_faulted_in(const std::vector<Vector*>& vectors, size_t n) {
  std::vector<MemoryPiece> pieces;
  for (Vector* v : vectors) {
    if (v->capacity() < n) {
      v->clear();
      v->reserve(n);
    }
    if (v->size() >= n) continue;
    auto* first = reinterpret_cast<unsigned char*>(v->data() + v->size());
    add_unfaulted_pieces(first, (n - v->size()) * sizeof(v->front()), pieces);
  }
  fault_in(pieces);
}

}  // namespace tally
