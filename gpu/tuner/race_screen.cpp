// ChunkTuner's race screens: a raced variant's first look on a slice of a
// chunk, judged against the reference (the best measured variant).
#include <algorithm>
#include <cmath>

#include "common/engine_counters.hpp"
#include "gpu/tuner/chunk_tuner.hpp"
#include "gpu/tuner/chunk_tuner_slot.hpp"

namespace tally::gpu {

// Why a slice is enough, and why its bias is acceptable. A launch costs a
// fixed part (set-up, the partitioned variant's partition pass, the tail of
// the grid) plus a part per row, and on a quarter chunk the fixed part weighs
// four times what it does on a whole one. The reference runs a slice of the
// same size in the same chunk, and its rest gives its time per row, so its
// fixed part f is measured here, not assumed: f = t_ref_slice - rows_slice *
// (t_rest - t_ref_slice) / (rows_rest - rows_slice). The verdict compares the
// two slices less f, i.e. the raced variant's kernel on the slice as if its
// fixed part were the reference's. A variant with a smaller fixed part
// (global hash, no partition pass) then looks no worse than it is; one with a
// larger fixed part looks worse by (its f - the reference's f) / rows_slice
// per row. It is wrongly dropped only if that excess exceeds (abandon - its
// true ratio) x the reference's kernel time on the slice, i.e. for a variant
// that would win on whole chunks (ratio < 1), a fixed part more than half
// (abandon 1.5) of the reference's slice kernel above the reference's own: a
// variant paying that much per launch loses most of its gain on every chunk
// anyway, and warm queries still explore a screened-out variant (vw-greedy).
// A variant that passes is measured on whole chunks, so the screen can only
// shorten the race, never change what a finished race measured. Every raced
// variant still to be screened shares the chunk (kMaxJointScreenShare): one
// chunk, one wait, a launch per raced variant and two. Without the
// reference's slice its measured best (a launch of span_ chunks) and the rest
// give the same two unknowns, but not on a slice's scale (a pair runs cheaper
// per row than the line through the rest predicts), so the engine runs the
// slice.
void ChunkTuner::report_screen(const TunedChoice& proposed, const ScreenTimes& t) {
  screen_outstanding_ = false;
  pending_.reset();
  forget_unreported(proposed.variant, proposed.config.launch);
  for (const auto& a : proposed.also_screened) forget_unreported(a.variant, a.config.launch);
  if (!refine_) return;
  const Slot& ref = slot(proposed.reference_variant);
  const auto ref_best = ref.best_time();
  const auto no_verdict = [&] {  // measure them on whole chunks
    slot(proposed.variant).screen_passed = true;
    for (const auto& a : proposed.also_screened) slot(a.variant).screen_passed = true;
  };
  if (!ref_best || !(t.rest_ms > 0) || !std::isfinite(t.rest_ms)) return no_verdict();
  double raced_min = t.raced_ms > 0 ? t.raced_ms : t.rest_ms;
  for (const auto& a : t.also)
    if (a.ms > 0) raced_min = std::min(raced_min, a.ms);
  double fixed = 0, per_row = 0;  // the reference's fixed launch part (ms) and kernel (ms per row)
  if (t.reference_ms > 0) {
    // A reference slice beside the raced ones: its fixed part from slice vs rest.
    const int64_t ref_rows = t.reference_rows > 0 ? t.reference_rows : t.slice_rows;
    if (t.rest_rows > ref_rows && t.rest_ms > t.reference_ms) {
      per_row = (t.rest_ms - t.reference_ms) / static_cast<double>(t.rest_rows - ref_rows);
      fixed = std::clamp(t.reference_ms - per_row * static_cast<double>(ref_rows), 0.0,
                         0.9 * std::min(t.reference_ms, raced_min));
    }
    if (ref_rows > 0) per_row = (t.reference_ms - fixed) / static_cast<double>(ref_rows);
  } else {
    // No reference slice: its measured best is one launch of span_ chunks
    // (rows_m rows, time T = best x rows_m), the rest one launch of rest_rows;
    // both pay the same fixed part f, so per row (T - rest) / (rows_m -
    // rest_rows) and f = rest - per_row x rest_rows. rows_m - rest_rows is
    // at least a quarter chunk (kMaxJointScreenShare): a 2% error in T moves
    // per_row ~4%, but launches of 2 chunks and of a slice do not lie on one
    // line (see above), which biases the verdict low.
    const double rows_m = static_cast<double>(span_) * static_cast<double>(chunk_rows_);
    const double measured_ms = *ref_best * rows_m * 1e3;
    const double rest_rows = static_cast<double>(t.rest_rows);
    if (rows_m > rest_rows && measured_ms > t.rest_ms) {
      per_row = (measured_ms - t.rest_ms) / (rows_m - rest_rows);
      fixed = std::clamp(t.rest_ms - per_row * rest_rows, 0.0, 0.9 * std::min(t.rest_ms, raced_min));
      per_row = rest_rows > 0 ? (t.rest_ms - fixed) / rest_rows : per_row;
    } else {
      per_row = *ref_best * 1e3;  // no fixed part separable: the measured per-row time
    }
  }
  if (!(per_row > 0) || !std::isfinite(per_row)) return no_verdict();
  // A raced slice faster than the reference's (ratio m < 1) is the bar the
  // screen's other slices are judged by: each is m times the reference's
  // per-row time away from it. Judged against the reference alone, a variant
  // between the two would pass to whole launches though the faster one would
  // then be the best.
  const auto slice_ratio = [&](double ms, int64_t rows) {
    return ms > 0 && std::isfinite(ms) && rows > 0 ? (ms - fixed) / (per_row * static_cast<double>(rows)) : INFINITY;
  };
  double bar = std::min(1.0, slice_ratio(t.raced_ms, t.slice_rows));
  for (size_t i = 0; i < proposed.also_screened.size() && i < t.also.size(); ++i)
    bar = std::min(bar, slice_ratio(t.also[i].ms, t.also[i].rows));
  bar = std::max(bar, 1e-3);  // a slice of no time: no bar from it
  const auto judge = [&](Variant v, const LaunchConfig& c, double share, double ms, int64_t rows) {
    const double own = slice_ratio(ms, rows);
    const double by = own > bar ? bar : 1.0;  // the fastest slice is judged against the reference
    judge_screen(v, c, share, ms, rows, fixed, per_row * by, *ref_best * by);
  };
  judge(proposed.variant, proposed.config.launch, proposed.screen_share, t.raced_ms, t.slice_rows);
  for (size_t i = 0; i < proposed.also_screened.size(); ++i) {
    const auto& a = proposed.also_screened[i];
    if (i < t.also.size()) judge(a.variant, a.config.launch, a.share, t.also[i].ms, t.also[i].rows);
    else slot(a.variant).screen_passed = true;  // its slice did not run: whole chunks
  }
}

double ChunkTuner::judge_screen(Variant v, const LaunchConfig& c, double share, double raced_ms, int64_t rows,
                                double fixed_ms, double ref_ms_per_row, double ref_best) {
  Slot& s = slot(v);
  if (!(raced_ms > 0) || !std::isfinite(raced_ms) || rows <= 0) {
    s.screen_passed = true;  // no verdict: measure it on whole chunks
    return 0;
  }
  const double ratio = (raced_ms - fixed_ms) / (ref_ms_per_row * static_cast<double>(rows));
  last_screen_ratio_ = ratio;
  if (ratio > screen_abandon_factor(share)) {
    // Its time, for the records and explain(): the reference's per-row time
    // scaled by the slices' ratio (an estimate: what a whole chunk would show).
    s.search->report(c, ratio * ref_best);
    s.search->abandon_measurement();
    s.touched = true;
    s.screened = true;
    count(engine_counters().tuner_measurements);
  } else if (share < race_slice_ && ratio > 1) {
    // Slower than the reference but within the small slice's tolerance for
    // a larger fixed part: undecided, so it gets the full slice's screen
    // next (a variant 1.5-3x off costs a small screen more than without the
    // prior, one far off a quarter of its screen). A small slice only drops
    // or clears a faster variant: its pass for one up to 1.5x slower would
    // rest on a fixed part that is most of a small slice, which can pass a
    // loser to whole launches.
    s.screen_share = race_slice_;
  } else {
    s.screen_passed = true;
  }
  return ratio;
}

// A winner (true ratio <= 1) whose fixed launch part exceeds the
// reference's by x is dropped when x > (abandon - 1) * the reference's slice
// kernel time, and that kernel time shrinks with the slice: a slice k times
// smaller than race_slice_ gets (abandon - 1) * k + 1, the same tolerance in
// microseconds as the full slice.
double ChunkTuner::screen_share_for(double prior, uint64_t chunk_rows, const DeviceInfo& d) const {
  if (!(race_slice_ > 0) || !(prior > 1) || !(race_abandon_factor_ > 1) || chunk_rows == 0) return race_slice_;
  // screen_abandon_factor(share) = 1 + (r - 1) / margin.
  const double excess = (prior - 1) / kScreenPriorMargin;
  const double share = (race_abandon_factor_ - 1) * race_slice_ / excess;
  const double resident_threads = static_cast<double>(std::max(d.sm_count, 1)) * std::max(d.max_threads_per_sm, 1);
  const double floor = resident_threads / static_cast<double>(chunk_rows);
  return std::min(race_slice_, std::max(share, floor));
}

double ChunkTuner::screen_abandon_factor(double share) const {
  if (!(share > 0) || !(race_slice_ > 0) || share >= race_slice_) return race_abandon_factor_;
  return 1.0 + (race_abandon_factor_ - 1.0) * (race_slice_ / share);
}

}  // namespace tally::gpu
