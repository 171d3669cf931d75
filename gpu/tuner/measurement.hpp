#pragma once
// Measurement: DaMoN'19's ProcessBlocksWith(c) — the time per row of one
// configuration measured over several chunks, robust to outliers at the
// start. After three chunks it checks the normalized range (max - min) / mean
// of the window; above v_max it discards the oldest value and runs one more
// chunk, until the window is stable or b_max chunks were spent.
#include <deque>

namespace tally::gpu {

struct MeasurementParams {
  int window = 3;        // chunks per window (the paper's three blocks)
  double v_max = 0.019;  // max normalized range of a window
  int b_max = 10;        // max chunks for one measurement
};

class Measurement {
 public:
  explicit Measurement(const MeasurementParams& params = {}) : params_(params) {}

  // Adds one chunk's time per row; returns true when the measurement is done.
  bool add(double seconds_per_row);
  bool done() const { return done_; }
  int chunks() const { return chunks_; }
  // Mean of the final window (valid once done()).
  double result() const;
  // (max - min) / mean of the current window.
  double variation() const;
  // Fastest chunk so far (0 before the first).
  double minimum() const { return minimum_; }

 private:
  MeasurementParams params_;
  std::deque<double> window_;
  int chunks_ = 0;
  double minimum_ = 0;
  bool done_ = false;
};

}  // namespace tally::gpu
