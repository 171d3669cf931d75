// CpuRun's deferred dense-radix: partitioned rows kept until finalize and
// aggregated there one cache-sized partition at a time.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "executor/cpu/cpu_run.hpp"
#include "executor/cpu/parallel.hpp"

namespace tally::executor::cpu {

// One whole-range state array (+ the NULL key's slot at range_):
// partitions are slices of it, so nothing is merged or copied.
void CpuRun::allocate_dense_state() {
  dense_.states.init(spec_.aggregates, narrow_);
  dense_.states.resize(spec_.aggregates, range_ + 1);
  dense_.dense_seen.assign(range_ + 1, 0);
}

// Keeps the chunk just partitioned by sink_radix (its slots, moved columns
// and partition offsets) until finalize; once the kept rows take more
// bytes than the state array would, the array is built and the run goes
// on as plain dense-radix.
void CpuRun::keep_deferred(std::vector<uint32_t> start, size_t rows) {
  DeferredChunk d;
  d.start = std::move(start);
  d.slots = std::move(local_slot_);
  local_slot_ = SlotBuffer();
  d.moved = moved_;
  d.buffers = std::move(moved_buffers_);
  moved_buffers_.clear();
  deferred_bytes_ += rows * sizeof(uint32_t);
  for (const auto& b : d.buffers) deferred_bytes_ += b.words * sizeof(uint64_t);
  deferred_chunks_.push_back(std::move(d));
  if (deferred_bytes_ > (range_ + 1) * bytes_per_group(spec_)) materialize_deferred();
}

// The rows of partition p kept from every deferred chunk, into `set` whose
// index 0 is slot `base` (seen: one flag per slot from base on).
void CpuRun::apply_deferred(size_t p, size_t base, StateSet& set, uint8_t* seen, std::vector<uint32_t>& gids) const {
  for (const DeferredChunk& d : deferred_chunks_) {
    const uint32_t begin = d.start[p], end = d.start[p + 1];
    if (begin == end) continue;
    const size_t count = end - begin;
    gids.resize(count);
    const uint32_t* slots = d.slots.data() + begin;
    for (size_t i = 0; i < count; ++i) gids[i] = static_cast<uint32_t>(slots[i] - base);
    for (size_t i = 0; i < count; ++i) seen[gids[i]] = 1;
    update_states(spec_.aggregates, set, d.moved, gids.data(), nullptr, begin, count);
  }
}

// Leaves deferred mode: the state array, with every kept row applied.
void CpuRun::materialize_deferred() {
  allocate_dense_state();
  // Partitions own disjoint slices of the array (the NULL key: slot range_).
  parallel_tasks(threads_, parts_.size(), [&](int, size_t p) {
    std::vector<uint32_t> gids;
    apply_deferred(p, 0, dense_.states, dense_.dense_seen.data(), gids);
  });
  deferred_chunks_.clear();
  deferred_bytes_ = 0;
  deferred_ = false;
}

// Finalize of deferred dense-radix: each partition's rows are aggregated in
// a per-thread scratch state of one partition's slots (in cache) and its
// groups written into result_ at the partition's place. The places come
// from a first pass that counts each partition's groups from its rows'
// slots alone: the result is then sized to the groups, where sized to the
// key range it was zeroed for every slot (TPC-H Q18's 6M order keys, 33
// bytes each, for 1.5M groups) and its partitions moved together after.
void CpuRun::emit_deferred() {
  if (can_emit_direct()) {
    emit_deferred_direct();
    emitted_direct_ = true;
    return;
  }
  const size_t nparts = parts_.size();
  const size_t null_part = nparts - 1;
  const size_t span = size_t{1} << shift_;
  auto base_of = [&](size_t p) { return p == null_part ? range_ : p << shift_; };
  auto width_of = [&](size_t p) { return p == null_part ? size_t{1} : std::min(span, range_ - base_of(p)); };
  std::vector<size_t> offset(nparts + 1, 0);
  parallel_tasks(threads_, nparts, [&](int, size_t p) {
    const size_t base = base_of(p);
    std::vector<uint8_t> seen(width_of(p), 0);
    for (const DeferredChunk& d : deferred_chunks_) {
      const uint32_t* slots = d.slots.data();
      for (uint32_t i = d.start[p]; i < d.start[p + 1]; ++i) seen[slots[i] - base] = 1;
    }
    offset[p + 1] = static_cast<size_t>(std::count(seen.begin(), seen.end(), uint8_t{1}));
  });
  for (size_t p = 0; p < nparts; ++p) offset[p + 1] += offset[p];
  grow_result_parallel(offset[nparts]);
  std::vector<LocalTable> scratch(static_cast<size_t>(threads_));
  parallel_tasks(threads_, nparts, [&](int t, size_t p) {
    if (offset[p + 1] == offset[p]) return;
    LocalTable& s = scratch[static_cast<size_t>(t)];
    if (s.dense_seen.empty()) {
      s.states.init(spec_.aggregates, narrow_);
      s.states.no_count = count_free_;
      s.states.resize(spec_.aggregates, span);
      s.dense_seen.assign(span, 0);
    }
    const bool null_key = p == null_part;
    const size_t base = base_of(p);
    const size_t width = width_of(p);
    s.states.clear(spec_.aggregates, width);
    std::memset(s.dense_seen.data(), 0, width);
    std::vector<uint32_t> gids;
    apply_deferred(p, base, s.states, s.dense_seen.data(), gids);
    std::vector<uint32_t> ids;
    ids.reserve(offset[p + 1] - offset[p]);
    for (uint32_t i = 0; i < width; ++i) {
      if (s.dense_seen[i]) ids.push_back(i);
    }
    const int64_t first_key = spec_.key_min + static_cast<int64_t>(base);
    if (null_key) emit_at(offset[p], s.states, ids, [](uint32_t) { return int64_t{0}; }, false);
    else emit_at(offset[p], s.states, ids, [&](uint32_t i) { return first_key + static_cast<int64_t>(i); }, true);
  });
  deferred_chunks_.clear();
  deferred_bytes_ = 0;
}

// Whether emit_deferred_direct can take this result: every aggregate
// counts its group's rows (no FILTER, no NULL input) into one shared count
// and is a count, an int64 sum or an integer min/max (the compact form:
// count(*), sum, min, max, avg of an int2/int4 NOT NULL column).
bool CpuRun::can_emit_direct() const {
  if (!spec_.compact_result || passes_ != 1 || spec_.aggregates.empty()) return false;
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    if (!counts_group_rows_[a] || count_source_[a] != count_source_[0]) return false;
    switch (spec_.aggregates[a].op) {
      case PartialOp::count_rows: case PartialOp::count_valid: case PartialOp::min_int: case PartialOp::max_int: break;
      case PartialOp::sum_int:
        if (!compact_sum_[a]) return false;
        break;
      default: return false;
    }
  }
  return true;
}

// emit_deferred for the shapes of can_emit_direct: each partition's rows
// are aggregated straight into its slice of the result arrays (cache-sized,
// zeroed by grow_result_parallel: the shared count marks the slots that
// got rows), then the slice is compacted in place. No scratch state to
// clear and no copy of it into the result (8M groups: the copy wrote the
// result's 390 MB a second time).
void CpuRun::emit_deferred_direct() {
  const size_t nparts = parts_.size();
  const size_t null_part = nparts - 1;
  const size_t span = size_t{1} << shift_;
  const auto source = static_cast<size_t>(count_source_[0]);
  grow_result_parallel(range_ + 1);
  std::vector<int64_t*> arrays;  // every result array (all int64 in this shape), for compaction
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    visit_result_fields(a, [&](auto member) {
      if constexpr (std::is_same_v<decltype(member), std::vector<int64_t> PartialStates::*>) {
        arrays.push_back((result_.states[a].*member).data());
      }
    });
  }
  // sum(v) and avg(v) keep the same sums of the same column (the planner
  // gives each aggregate its own input, but the column is moved once, so
  // their moved data is the same): summed once, copied into the other.
  const size_t naggs = spec_.aggregates.size();
  std::vector<int> same_sums(naggs, -1);
  for (size_t a = 0; a < naggs; ++a) {
    if (spec_.aggregates[a].op != PartialOp::sum_int) continue;
    for (size_t b = 0; b < a && same_sums[a] < 0; ++b) {
      if (spec_.aggregates[b].op != PartialOp::sum_int || same_sums[b] >= 0) continue;
      bool same = true;
      for (const DeferredChunk& d : deferred_chunks_) {
        const ColumnView& x = d.moved.values[static_cast<size_t>(spec_.aggregates[a].input)];
        const ColumnView& y = d.moved.values[static_cast<size_t>(spec_.aggregates[b].input)];
        same &= x.data == y.data && x.width == y.width;
      }
      if (same) same_sums[a] = static_cast<int>(b);
    }
  }
  std::vector<size_t> kept(nparts, 0);
  parallel_tasks(threads_, nparts, [&](int, size_t p) {
    const bool null_key = p == null_part;
    const size_t base = null_key ? range_ : p << shift_;
    const size_t width = null_key ? 1 : std::min(span, range_ - base);
    int64_t* count = result_.states[source].count.data() + base;
    // Every array's slice is written in order first, zeros included
    // (grow_result_parallel's zeros are long out of cache): the random
    // updates below then hit lines already in L2 instead of each missing
    // to memory.
    std::fill_n(count, width, 0);
    for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
      const PartialOp op = spec_.aggregates[a].op;
      if (op == PartialOp::min_int) std::fill_n(result_.states[a].extreme_int.data() + base, width, INT64_MAX);
      if (op == PartialOp::max_int) std::fill_n(result_.states[a].extreme_int.data() + base, width, INT64_MIN);
      if (op == PartialOp::sum_int && same_sums[a] < 0) std::fill_n(result_.states[a].sum_int64.data() + base, width, 0);
    }
    std::vector<uint32_t> gids;
    for (const DeferredChunk& d : deferred_chunks_) {
      const uint32_t begin = d.start[p], end = d.start[p + 1];
      if (begin == end) continue;
      const size_t n = end - begin;
      gids.resize(n);
      const uint32_t* slots = d.slots.data() + begin;
      for (size_t i = 0; i < n; ++i) gids[i] = static_cast<uint32_t>(slots[i] - base);
      const uint32_t* g = gids.data();
      for (size_t i = 0; i < n; ++i) ++count[g[i]];
      for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
        const PartialAggregate& agg = spec_.aggregates[a];
        if (agg.op == PartialOp::count_rows || agg.op == PartialOp::count_valid) continue;  // the shared count
        if (same_sums[a] >= 0) continue;  // copied below
        const ColumnView& in = d.moved.values[static_cast<size_t>(agg.input)];
        with_values(in.width, in.data, [&](auto* column) {
          using T = std::remove_cv_t<std::remove_pointer_t<decltype(column)>>;
          if constexpr (std::is_integral_v<T>) {
            const T* v = column + begin;  // the moved column is in partition order
            if (agg.op == PartialOp::sum_int) {
              int64_t* sum = result_.states[a].sum_int64.data() + base;
              for (size_t i = 0; i < n; ++i) sum[g[i]] += static_cast<int64_t>(v[i]);
            } else if (agg.op == PartialOp::min_int) {
              int64_t* ext = result_.states[a].extreme_int.data() + base;
              for (size_t i = 0; i < n; ++i) ext[g[i]] = std::min(ext[g[i]], static_cast<int64_t>(v[i]));
            } else {
              int64_t* ext = result_.states[a].extreme_int.data() + base;
              for (size_t i = 0; i < n; ++i) ext[g[i]] = std::max(ext[g[i]], static_cast<int64_t>(v[i]));
            }
          }
        });
      }
    }
    for (size_t a = 0; a < naggs; ++a) {
      if (same_sums[a] < 0) continue;
      const int64_t* from = result_.states[static_cast<size_t>(same_sums[a])].sum_int64.data() + base;
      std::memcpy(result_.states[a].sum_int64.data() + base, from, width * sizeof(int64_t));
    }
    // Keys, and the slots without rows squeezed out of the slice.
    int64_t* keys = result_.keys.data() + base;
    const int64_t first_key = spec_.key_min + static_cast<int64_t>(base);
    size_t j = 0;
    for (size_t i = 0; i < width; ++i) {
      if (count[i] == 0) continue;
      if (j != i) {
        for (int64_t* array : arrays) array[base + j] = array[base + i];
      }
      keys[j++] = null_key ? 0 : first_key + static_cast<int64_t>(i);
    }
    std::memset(result_.key_valid.data() + base, null_key ? 0 : 1, j);
    kept[p] = j;
  });
  squeeze_partitions(kept, nparts, null_part);
}

// After a deferred emit wrote partition p's `kept[p]` groups at the
// front of its slice (the NULL key's at range_): moves the slices together
// in partition order, trims the result, and drops the deferred rows.
void CpuRun::squeeze_partitions(const std::vector<size_t>& kept, size_t nparts, size_t null_part) {
  size_t at = 0;
  for (size_t p = 0; p < nparts; ++p) {
    const size_t base = p == null_part ? range_ : p << shift_;
    if (kept[p] > 0 && at != base) move_result_rows(base, at, kept[p]);
    at += kept[p];
  }
  shrink_result(at);
  deferred_chunks_.clear();
  deferred_bytes_ = 0;
}

}  // namespace tally::executor::cpu
