#include "common/shared_zeros.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

namespace tally {
namespace {

template <class T>
const T* zeros(size_t n) {
  static std::mutex mutex;
  // Never freed, and a run is never replaced in place: a run handed out
  // stays valid while a larger one is made.
  static auto* runs = new std::vector<std::unique_ptr<T[]>>;
  static size_t longest = 0;
  std::lock_guard lock(mutex);
  if (n > longest || runs->empty()) {
    constexpr size_t first = size_t{1} << 20;  // a default chunk
    longest = std::max({n, first, 2 * longest});
    runs->push_back(std::make_unique<T[]>(longest));  // value-initialized: zeros
  }
  return runs->back().get();
}

}  // namespace

const int64_t* shared_zeros(size_t n) { return zeros<int64_t>(n); }
const uint32_t* shared_zero_ids(size_t n) { return zeros<uint32_t>(n); }

}  // namespace tally
