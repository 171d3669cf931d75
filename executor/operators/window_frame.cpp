#include "executor/operators/window_frame.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.hpp"

namespace tally::executor {

namespace {

using Bound = WindowFrame::Bound;
using Mode = WindowFrame::Mode;

bool has_offset(Bound b) { return b == Bound::preceding || b == Bound::following; }

Value checked_offset(const ExprPtr& e, Mode mode, bool start, const std::vector<Value>* parameters) {
  if (!e) return Null{};
  Value v = evaluate_constant(*e, parameters);
  const char* which = start ? "starting" : "ending";
  if (is_null(v)) throw Error(SqlState::null_value_not_allowed, std::string("frame ") + which + " offset must not be null");
  bool negative = false;
  if (auto* i = std::get_if<int64_t>(&v)) negative = *i < 0;
  else if (auto* d = std::get_if<double>(&v)) negative = *d < 0 || std::isnan(*d);
  else if (auto* n = std::get_if<Numeric>(&v)) negative = compare_values(*n, Numeric::from_int(0)) < 0;
  if (negative) {
    if (mode == Mode::range) {
      throw Error(SqlState::invalid_preceding_or_following_size, "invalid preceding or following size in window function");
    }
    throw Error(SqlState::invalid_preceding_or_following_size, std::string("frame ") + which + " offset must not be negative");
  }
  return v;
}

// v + offset or v - offset, saturating for integers.
Value shifted(const Value& v, const Value& offset, bool add) {
  if (auto* i = std::get_if<int64_t>(&v)) {
    const __int128 r = add ? static_cast<__int128>(*i) + std::get<int64_t>(offset)
                           : static_cast<__int128>(*i) - std::get<int64_t>(offset);
    constexpr auto hi = std::numeric_limits<int64_t>::max(), lo = std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(r > hi ? hi : (r < lo ? lo : r));
  }
  if (auto* d = std::get_if<double>(&v)) return add ? *d + std::get<double>(offset) : *d - std::get<double>(offset);
  const Numeric& n = std::get<Numeric>(v);
  return add ? n + std::get<Numeric>(offset) : n - std::get<Numeric>(offset);
}

size_t clamp_pos(int64_t p, size_t lo, size_t hi) {
  if (p < static_cast<int64_t>(lo)) return lo;
  if (p > static_cast<int64_t>(hi)) return hi;
  return static_cast<size_t>(p);
}

int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  return r;
}

}  // namespace

size_t FrameRuns::rows() const {
  size_t n = 0;
  for (int k = 0; k < count; ++k) n += end[k] - begin[k];
  return n;
}

bool FrameRuns::operator==(const FrameRuns& o) const {
  if (count != o.count) return false;
  for (int k = 0; k < count; ++k) {
    if (begin[k] != o.begin[k] || end[k] != o.end[k]) return false;
  }
  return true;
}

FrameCursor::FrameCursor(const WindowFrame& frame, const RowOrdering& ordering, const Vector* order_values,
                         bool descending, const std::vector<Value>* parameters)
    : frame_(frame), ordering_(ordering), order_values_(order_values), descending_(descending) {
  start_value_ = checked_offset(frame.start_offset, frame.mode, true, parameters);
  end_value_ = checked_offset(frame.end_offset, frame.mode, false, parameters);
  if (frame.mode != Mode::range) {
    if (has_offset(frame.start)) start_rows_ = std::get<int64_t>(start_value_);
    if (has_offset(frame.end)) end_rows_ = std::get<int64_t>(end_value_);
  }
}

// RANGE n PRECEDING / FOLLOWING: the first position (of the rows with a
// value; NULLs are never within an offset of a value) whose ORDER BY value is
// not before v -/+ n (a start) or not before-or-at it (an end). A NULL
// current row's frame bound is its peer group (the NULLs).
size_t FrameCursor::range_bound(size_t i, size_t ps, size_t pe, bool start, bool preceding, const Value& offset) const {
  const auto& rows = ordering_.rows;
  const Vector& values = *order_values_;
  const uint32_t g = ordering_.group_of[i];
  if (values.null_at(rows[i])) return start ? ordering_.groups[g] : ordering_.groups[g + 1];
  // The rows with a value: NULLs sit at one end of the partition.
  auto is_null_at = [&](size_t p) { return values.null_at(rows[p]); };
  size_t a = ps, b = pe;
  if (is_null_at(ps)) {
    a = ps;
    while (a < pe && is_null_at(a)) a = std::max(a + 1, static_cast<size_t>(ordering_.groups[ordering_.group_of[a] + 1]));
  } else if (is_null_at(pe - 1)) {
    b = ordering_.groups[ordering_.group_of[pe - 1]];
  }
  // Values ascend (or descend) over [a, b): "before" is < (or >).
  const bool add = descending_ ? preceding : !preceding;
  const Value target = shifted(values.get(rows[i]), offset, add);
  size_t lo = a, hi = b;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    int c = compare_values(values.get(rows[mid]), target);
    if (descending_) c = -c;
    const bool before = start ? c < 0 : c <= 0;
    if (before) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

size_t FrameCursor::start_of(size_t i, size_t ps, size_t pe) const {
  const uint32_t g = ordering_.group_of[i];
  switch (frame_.start) {
    case Bound::unbounded_preceding: return ps;
    case Bound::unbounded_following: return pe;
    case Bound::current_row: return frame_.mode == Mode::rows ? i : ordering_.groups[g];
    case Bound::preceding:
    case Bound::following: {
      const bool preceding = frame_.start == Bound::preceding;
      if (frame_.mode == Mode::range) return range_bound(i, ps, pe, true, preceding, start_value_);
      const int64_t n = preceding ? -start_rows_ : start_rows_;
      if (frame_.mode == Mode::rows) return clamp_pos(saturating_add(static_cast<int64_t>(i), n), ps, pe);
      const int64_t first = ordering_.group_of[ps], last = ordering_.group_of[pe - 1];
      const int64_t target = saturating_add(g, n);
      if (target > last) return pe;
      return ordering_.groups[static_cast<size_t>(std::max(first, target))];
    }
  }
  return ps;
}

size_t FrameCursor::end_of(size_t i, size_t ps, size_t pe) const {
  const uint32_t g = ordering_.group_of[i];
  switch (frame_.end) {
    case Bound::unbounded_following: return pe;
    case Bound::unbounded_preceding: return ps;
    case Bound::current_row: return frame_.mode == Mode::rows ? i + 1 : ordering_.groups[g + 1];
    case Bound::preceding:
    case Bound::following: {
      const bool preceding = frame_.end == Bound::preceding;
      if (frame_.mode == Mode::range) return range_bound(i, ps, pe, false, preceding, end_value_);
      const int64_t n = preceding ? -end_rows_ : end_rows_;
      if (frame_.mode == Mode::rows) return clamp_pos(saturating_add(static_cast<int64_t>(i) + 1, n), ps, pe);
      const int64_t first = ordering_.group_of[ps], last = ordering_.group_of[pe - 1];
      const int64_t target = saturating_add(g, n);
      if (target < first) return ps;
      return ordering_.groups[static_cast<size_t>(std::min(last, target)) + 1];
    }
  }
  return pe;
}

FrameRuns FrameCursor::frame(size_t i, size_t ps, size_t pe) const {
  const size_t s = start_of(i, ps, pe);
  const size_t e = std::max(s, end_of(i, ps, pe));
  FrameRuns runs;
  auto add = [&](size_t b, size_t x) {
    if (b < x) {
      runs.begin[runs.count] = static_cast<uint32_t>(b);
      runs.end[runs.count] = static_cast<uint32_t>(x);
      ++runs.count;
    }
  };
  if (frame_.exclude == WindowFrame::Exclude::none) {
    add(s, e);
    return runs;
  }
  size_t xs = i, xe = i + 1;
  if (frame_.exclude != WindowFrame::Exclude::current_row) {
    const uint32_t g = ordering_.group_of[i];
    xs = ordering_.groups[g];
    xe = ordering_.groups[g + 1];
  }
  add(s, std::min(e, xs));
  if (frame_.exclude == WindowFrame::Exclude::ties && i >= s && i < e) add(i, i + 1);
  add(std::max(s, xe), e);
  return runs;
}

}  // namespace tally::executor
