#pragma once
// The frame of each row of a window (ROWS, RANGE or GROUPS between
// UNBOUNDED / n PRECEDING / CURRENT ROW / n FOLLOWING, with EXCLUDE), as up
// to three runs of sorted positions. The offsets are evaluated once, with
// PostgreSQL's checks (22004 NULL, 22013 negative).
#include <cstdint>
#include <vector>

#include "executor/row_sort.hpp"
#include "executor/window_call.hpp"

namespace tally::executor {

struct FrameRuns {
  uint32_t begin[3] = {0, 0, 0};
  uint32_t end[3] = {0, 0, 0};
  int count = 0;
  size_t rows() const;
  bool operator==(const FrameRuns& o) const;
};

class FrameCursor {
 public:
  // `order_values`: the one ORDER BY column in input row order (RANGE with
  // an offset reads it), else null.
  FrameCursor(const WindowFrame& frame, const RowOrdering& ordering, const Vector* order_values, bool descending,
              const std::vector<Value>* parameters);
  // The frame of sorted position i of the partition [ps, pe).
  FrameRuns frame(size_t i, size_t ps, size_t pe) const;
  bool excludes() const { return frame_.exclude != WindowFrame::Exclude::none; }
  // Every frame runs to the partition's end and only its start moves (no
  // EXCLUDE): read from the last row, each frame holds the next one.
  bool shrinks_from_start() const {
    return frame_.end == WindowFrame::Bound::unbounded_following &&
           frame_.start != WindowFrame::Bound::unbounded_preceding && !excludes();
  }

 private:
  size_t start_of(size_t i, size_t ps, size_t pe) const;
  size_t end_of(size_t i, size_t ps, size_t pe) const;
  size_t range_bound(size_t i, size_t ps, size_t pe, bool start, bool preceding, const Value& offset) const;

  const WindowFrame& frame_;
  const RowOrdering& ordering_;
  const Vector* order_values_;
  bool descending_;
  int64_t start_rows_ = 0, end_rows_ = 0;  // ROWS / GROUPS offsets
  Value start_value_, end_value_;          // RANGE offsets
};

}  // namespace tally::executor
