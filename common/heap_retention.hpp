#pragma once
// Keeps the memory of large per-query arrays in the process between queries,
// so that a repeated large aggregation does not fault in and zero fresh pages
// from the kernel every time.
//
// Why: glibc serves every allocation above 32 MB (and, in a thread's own
// arena, above 64 MB) with its own mmap and munmaps it on free. A GROUP BY
// over 8M groups hands about 1.4 GB of such arrays from the engine to the
// encoder; each query then took ~380K page faults, and fault handling, kernel
// zeroing and memcg charging were about a quarter of tallyd's CPU. With one
// arena and no mmap, freed arrays stay in the heap and the next query reuses
// them: one page fault per repeated query instead of hundreds of thousands.
//
// What it costs: one malloc arena for every thread (small allocations go
// through glibc's per-thread cache first, so sessions rarely meet on its
// lock), and memory that stays with the process after a large query, bounded
// by release_retained_heap_over() (the CPU engine calls it before runs
// estimated at 64K groups or more, and before others at most every 10 s):
// when more than the bound of free heap is resident, all of it goes back to
// the kernel.
//
// glibc only; elsewhere (and under sanitizers, which replace malloc) these
// calls do nothing that matters.
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <unistd.h>

#include "common/host_memory.hpp"
#include "common/log.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tally {

// Free heap bytes kept for reuse before they are handed back: an eighth of
// the memory this process may use (common/host_memory.hpp), and at least
// 3 GB, above what an 8M-group query with five aggregates (~1.5 GB) needs.
// A GROUP BY of 1e8 groups (H2O's q10) builds about 10 GB of result arrays:
// on a 128 GiB GPU host they stay for the next such query instead of being
// faulted in again (a fresh page costs its fault and the kernel's zeroing).
inline size_t retained_heap_bytes() {
  static const size_t bytes = std::max<size_t>(size_t{3} << 30, host_memory_bytes() / 8);
  return bytes;
}

// Sets the process's malloc policy; call before any thread starts (a static
// initializer), since threads that already own an arena keep it.
inline void retain_large_allocations() {
#if defined(__GLIBC__)
  mallopt(M_ARENA_MAX, 1);      // thread arenas cannot hold chunks over 64 MB: one shared heap
  mallopt(M_MMAP_MAX, 0);       // large blocks from the heap, not a private mmap each
  mallopt(M_TRIM_THRESHOLD, -1);  // never trim on free (-1: off); release_retained_heap_over bounds it
#endif
}

// Resident bytes of this process (/proc/self/statm); 0 when unknown.
inline size_t resident_bytes() {
  size_t pages_total = 0, pages_resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%zu %zu", &pages_total, &pages_resident) != 2) pages_resident = 0;
    std::fclose(f);
  }
  return pages_resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// Gives every free heap page back to the kernel when more than `bound` bytes
// of free heap are resident (a query larger than usual must not pin its
// memory for the life of the process). Resident free heap is estimated as
// the process's resident bytes less the heap bytes in use: glibc's own free
// count (mallinfo2's fordblks) still counts the pages malloc_trim gave back,
// so after one trim it would call for another before every large query, and
// each would fault its arrays in again. mallinfo2 walks the free lists (tens
// of ms with 100K free chunks): it runs only when the process's
// whole resident size is over the bound, and callers do not check before
// every small query.
inline void release_retained_heap_over(size_t bound) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const size_t resident = resident_bytes();
  if (resident <= bound) return;  // free resident heap cannot be more
  const struct mallinfo2 info = mallinfo2();
  const size_t in_use = info.uordblks + info.hblkhd;
  if (resident <= in_use + bound) return;
  malloc_trim(0);
  log::info("heap_released", {{"resident_bytes", resident},
                              {"in_use_bytes", in_use},
                              {"bound_bytes", bound},
                              {"resident_after_bytes", resident_bytes()}});
#else
  (void)bound;
#endif
}

// Faults `bytes` of heap in, a slice on each of `threads` threads, and frees
// them into the heap, where retain_large_allocations keeps them for the
// queries to come: the first large queries after a start then write into
// resident pages, as later ones do, instead of faulting in fresh ones (on a
// virtualized host a fresh page costs microseconds, and a first GROUP BY of
// millions of groups builds gigabytes of arrays). Returns false when the
// heap could not grow by `bytes`.
inline bool pretouch_heap(size_t bytes, int threads) {
  auto* block = static_cast<unsigned char*>(std::malloc(bytes));
  if (block == nullptr) return false;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t pages = (bytes + page - 1) / page;
  const size_t workers = static_cast<size_t>(std::max(threads, 1));
  std::vector<std::thread> touching;
  for (size_t w = 0; w < workers; ++w) {
    touching.emplace_back([=] {
      volatile unsigned char* bytes_of = block;  // written, though freed unread
      for (size_t p = pages * w / workers; p < pages * (w + 1) / workers; ++p) bytes_of[std::min(p * page, bytes - 1)] = 0;
    });
  }
  for (auto& t : touching) t.join();
  std::free(block);
  return true;
}

}  // namespace tally
