#pragma once
// One piece of work split over threads: the host's column programs and the
// gather of a dictionary's bytes for the device.
#include <algorithm>
#include <cstddef>
#include <future>
#include <vector>

namespace tally {

// f(part, begin, end) over [0, n) split into `parts` contiguous parts, part 0
// on the calling thread and each other on a thread of its own.
template <class F>
void for_parts(size_t parts, size_t n, F&& f) {
  if (parts <= 1) {
    f(size_t{0}, size_t{0}, n);
    return;
  }
  const size_t per = (n + parts - 1) / parts;
  std::vector<std::future<void>> others;
  for (size_t t = 1; t < parts; ++t) {
    others.push_back(std::async(std::launch::async, [&f, t, per, n] { f(t, std::min(n, t * per), std::min(n, (t + 1) * per)); }));
  }
  f(size_t{0}, size_t{0}, std::min(n, per));
  for (auto& o : others) o.get();  // rethrows a part's exception
}

}  // namespace tally
