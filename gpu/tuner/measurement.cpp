#include "gpu/tuner/measurement.hpp"

#include <algorithm>
#include <numeric>

namespace tally::gpu {

bool Measurement::add(double seconds_per_row) {
  if (done_) return true;
  ++chunks_;
  minimum_ = chunks_ == 1 ? seconds_per_row : std::min(minimum_, seconds_per_row);
  window_.push_back(seconds_per_row);
  if (static_cast<int>(window_.size()) > params_.window) window_.pop_front();  // discard the oldest
  if (static_cast<int>(window_.size()) >= params_.window && variation() <= params_.v_max) done_ = true;
  if (chunks_ >= std::max(params_.b_max, 1)) done_ = true;
  return done_;
}

double Measurement::result() const {
  if (window_.empty()) return 0.0;
  return std::accumulate(window_.begin(), window_.end(), 0.0) / static_cast<double>(window_.size());
}

double Measurement::variation() const {
  if (window_.empty()) return 0.0;
  const auto [lo, hi] = std::minmax_element(window_.begin(), window_.end());
  const double mean = result();
  return mean > 0 ? (*hi - *lo) / mean : 0.0;
}

}  // namespace tally::gpu
