#include "common/shared_zeros.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

namespace tally {

const int64_t* shared_zeros(size_t n) {
  static std::mutex mutex;
  // Never freed, and a run is never replaced in place: a run handed out
  // stays valid while a larger one is made.
  static auto* runs = new std::vector<std::unique_ptr<int64_t[]>>;
  static size_t longest = 0;
  std::lock_guard lock(mutex);
  if (n > longest || runs->empty()) {
    constexpr size_t first = size_t{1} << 20;  // a default chunk
    longest = std::max({n, first, 2 * longest});
    runs->push_back(std::make_unique<int64_t[]>(longest));  // value-initialized: zeros
  }
  return runs->back().get();
}

}  // namespace tally
