#include "executor/operators/window_functions.hpp"

#include <memory>

#include "common/error.hpp"
#include "executor/cancel_point.hpp"

namespace tally::executor {

namespace {

using Fn = WindowFunction;

// Ranking functions: they read only partitions and peer groups.
void rank_partition(const WindowCall& call, const RowOrdering& o, size_t ps, size_t pe, Vector& out) {
  const double count = static_cast<double>(pe - ps);
  for (size_t i = ps; i < pe; ++i) {
    const uint32_t row = o.rows[i];
    const uint32_t g = o.group_of[i];
    switch (call.function) {
      case Fn::row_number: out.ints[row] = static_cast<int64_t>(i - ps + 1); break;
      case Fn::rank: out.ints[row] = static_cast<int64_t>(o.groups[g] - ps + 1); break;
      case Fn::dense_rank: out.ints[row] = static_cast<int64_t>(g - o.group_of[ps] + 1); break;
      case Fn::percent_rank:
        out.floats[row] = pe - ps > 1 ? static_cast<double>(o.groups[g] - ps) / (count - 1) : 0.0;
        break;
      default: out.floats[row] = static_cast<double>(o.groups[g + 1] - ps) / count; break;  // cume_dist
    }
  }
}

// PostgreSQL's window_ntile: leading buckets take one row more when the
// partition does not divide evenly.
void ntile_partition(const Vector& buckets, const RowOrdering& o, size_t ps, size_t pe, Vector& out) {
  int64_t ntile = 0, rows_per_bucket = 0, boundary = 0, remainder = 0;
  const auto total = static_cast<int64_t>(pe - ps);
  for (size_t i = ps; i < pe; ++i) {
    const uint32_t row = o.rows[i];
    if (ntile == 0) {
      if (buckets.null_at(row)) { out.set_null(row); continue; }
      const int64_t n = buckets.ints[row];
      if (n <= 0) throw Error(SqlState::invalid_argument_for_ntile_function, "argument of ntile must be greater than zero");
      ntile = 1;
      boundary = total / n;
      if (boundary <= 0) {
        boundary = 1;
      } else {
        remainder = total % n;
        if (remainder != 0) ++boundary;
      }
    }
    if (boundary < ++rows_per_bucket) {
      if (remainder != 0 && ntile == remainder) {
        remainder = 0;
        --boundary;
      }
      ++ntile;
      rows_per_bucket = 1;
    }
    out.ints[row] = ntile;
  }
}

void offset_partition(const WindowCall& call, const std::vector<Vector>& args, const RowOrdering& o, size_t ps,
                      size_t pe, Vector& out) {
  CancelTicker ticker;
  for (size_t i = ps; i < pe; ++i) {
    ticker.tick();
    const uint32_t row = o.rows[i];
    int64_t offset = 1;
    if (args.size() >= 2) {
      if (args[1].null_at(row)) { out.set_null(row); continue; }
      offset = args[1].ints[row];
    }
    const int64_t target = static_cast<int64_t>(i) + (call.function == Fn::lag ? -offset : offset);
    if (target >= static_cast<int64_t>(ps) && target < static_cast<int64_t>(pe)) {
      out.set(row, args[0].get(o.rows[static_cast<size_t>(target)]));
    } else if (args.size() == 3) {
      out.set(row, args[2].get(row));
    } else {
      out.set_null(row);
    }
  }
}

// first_value, last_value, nth_value: a row of the frame (NULL when it has none).
void value_partition(const WindowCall& call, const std::vector<Vector>& args, const RowOrdering& o,
                     const FrameCursor& frame, size_t ps, size_t pe, Vector& out) {
  CancelTicker ticker;
  for (size_t i = ps; i < pe; ++i) {
    ticker.tick();
    const uint32_t row = o.rows[i];
    const FrameRuns runs = frame.frame(i, ps, pe);
    int64_t nth = 1;
    if (call.function == Fn::nth_value) {
      if (args[1].null_at(row)) { out.set_null(row); continue; }
      nth = args[1].ints[row];
      if (nth <= 0) {
        throw Error(SqlState::invalid_argument_for_nth_value_function, "argument of nth_value must be greater than zero");
      }
    }
    const auto size = static_cast<int64_t>(runs.rows());
    if (size == 0 || nth > size) { out.set_null(row); continue; }
    int64_t index = call.function == Fn::last_value ? size - 1 : nth - 1;
    for (int k = 0; k < runs.count; ++k) {
      const int64_t len = runs.end[k] - runs.begin[k];
      if (index < len) {
        out.set(row, args[0].get(o.rows[runs.begin[k] + static_cast<size_t>(index)]));
        break;
      }
      index -= len;
    }
  }
}

// An aggregate over each row's frame. A frame equal to the previous row's
// (peers under RANGE) reuses its result; one that only grows at its end
// continues the same accumulator; any other starts a new one.
void aggregate_partition(const WindowCall& call, const std::vector<Vector>& args, const Vector* filter,
                         const RowOrdering& o, const FrameCursor& frame, size_t ps, size_t pe, Vector& out) {
  CancelTicker ticker;
  std::unique_ptr<Accumulator> acc;
  FrameRuns previous;
  Value result;
  Value values[2];
  auto add = [&](size_t b, size_t e) {
    for (size_t p = b; p < e; ++p) {
      ticker.tick();
      const uint32_t row = o.rows[p];
      if (filter && (filter->null_at(row) || filter->ints[row] == 0)) continue;
      for (size_t a = 0; a < args.size(); ++a) values[a] = args[a].get(row);
      acc->add(values);
    }
  };
  if (frame.shrinks_from_start() && order_insensitive(call.signature)) {
    // Frames [s, pe) (CURRENT ROW AND UNBOUNDED FOLLOWING, say): from the
    // last row backwards each frame only grows at its start, so one
    // accumulator serves the partition instead of one per row.
    acc = make_accumulator(call.signature, false, Null{}, false);
    size_t added_from = pe;
    bool have = false;
    for (size_t i = pe; i-- > ps;) {
      const FrameRuns runs = frame.frame(i, ps, pe);
      const size_t s = runs.count > 0 ? runs.begin[0] : pe;
      if (s < added_from) {
        add(s, added_from);
        added_from = s;
        have = false;
      }
      if (!have) result = acc->result(), have = true;
      out.set(o.rows[i], result);
    }
    return;
  }
  for (size_t i = ps; i < pe; ++i) {
    const FrameRuns runs = frame.frame(i, ps, pe);
    if (!acc || !(runs == previous)) {
      const bool grows = acc && !frame.excludes() && runs.count == 1 && previous.count == 1 &&
                         runs.begin[0] == previous.begin[0] && runs.end[0] >= previous.end[0];
      if (grows) {
        add(previous.end[0], runs.end[0]);
      } else {
        acc = make_accumulator(call.signature, false, Null{}, false);
        for (int k = 0; k < runs.count; ++k) add(runs.begin[k], runs.end[k]);
      }
      result = acc->result();
      previous = runs;
    }
    out.set(o.rows[i], result);
  }
}

}  // namespace

Vector evaluate_window_call(const WindowCall& call, const RowOrdering& ordering, const FrameCursor& frame,
                            const EvalInput& input) {
  Vector out(call.type);
  out.resize(input.rows);
  std::vector<Vector> args;
  for (const auto& a : call.args) args.push_back(a->evaluate(input));
  Vector filter;
  if (call.filter) filter = call.filter->evaluate(input);
  for (size_t p = 0; p + 1 < ordering.partitions.size(); ++p) {
    const size_t ps = ordering.partitions[p], pe = ordering.partitions[p + 1];
    switch (call.function) {
      case Fn::row_number:
      case Fn::rank:
      case Fn::dense_rank:
      case Fn::percent_rank:
      case Fn::cume_dist: rank_partition(call, ordering, ps, pe, out); break;
      case Fn::ntile: ntile_partition(args[0], ordering, ps, pe, out); break;
      case Fn::lag:
      case Fn::lead: offset_partition(call, args, ordering, ps, pe, out); break;
      case Fn::first_value:
      case Fn::last_value:
      case Fn::nth_value: value_partition(call, args, ordering, frame, ps, pe, out); break;
      case Fn::aggregate: aggregate_partition(call, args, call.filter ? &filter : nullptr, ordering, frame, ps, pe, out); break;
    }
  }
  return out;
}

}  // namespace tally::executor
