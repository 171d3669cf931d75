#include "common/prefault.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>

#include <sys/mman.h>
#include <unistd.h>

namespace tally {

namespace {
constexpr size_t kPieceBytes = size_t{1} << 20;
}  // namespace

void add_unfaulted_pieces(unsigned char* first, size_t bytes, std::vector<MemoryPiece>& pieces) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t start = reinterpret_cast<uintptr_t>(first) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(first) + bytes;
  std::vector<unsigned char> resident((end - start + page - 1) / page);
  const bool known = bytes > 0 && mincore(reinterpret_cast<void*>(start), end - start, resident.data()) == 0;
  for (size_t at = 0; at < bytes; at += kPieceBytes) {
    const size_t length = std::min(kPieceBytes, bytes - at);
    const uintptr_t from = (reinterpret_cast<uintptr_t>(first + at) - start) / page;
    const uintptr_t to = (reinterpret_cast<uintptr_t>(first + at + length) - start + page - 1) / page;
    bool all_in = known;
    for (uintptr_t p = from; p < to && all_in; ++p) all_in = (resident[p] & 1) != 0;
    if (!all_in) pieces.emplace_back(first + at, length);
  }
}

void fault_in(const std::vector<MemoryPiece>& pieces) {
  if (pieces.empty()) return;
  const size_t threads = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), pieces.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < pieces.size(); i = next++) std::memset(pieces[i].first, 0, pieces[i].second);
  };
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();
}

}  // namespace tally
