// OrderedValuesRun's picked forms (ordered_values_run.hpp): the groups'
// values at the positions their readers take, selected on the host, placed
// from a collector's picks, or with the groups themselves taken from a
// collector's keys.
#include <algorithm>
#include <atomic>
#include <chrono>

#include "common/elapsed.hpp"
#include "common/error.hpp"
#include "executor/cpu/group_index.hpp"
#include "executor/cpu/key_table.hpp"
#include "executor/cpu/ordered_values_run.hpp"
#include "executor/cpu/parallel.hpp"

namespace tally::executor::cpu {

OrderedValuesRun::Sorted OrderedValuesRun::select_picks(const std::vector<OrderedPick>& picks,
                                                        std::vector<uint64_t> offsets, OrderCodes& codes) const {
  const size_t groups = offsets.size() - 1;
  const auto per = static_cast<uint64_t>(ordered_picks_per_group(picks));
  Sorted out;
  out.per = per;
  // Each group with values keeps a block of `per` picks.
  resize_prefaulted(out.offsets, groups + 1);
  resize_prefaulted(out.n, groups);
  resize_prefaulted(out.from, groups);
  uint64_t at = 0;
  for (size_t g = 0; g < groups; ++g) {
    out.offsets[g] = at;
    out.from[g] = at;
    out.n[g] = offsets[g + 1] - offsets[g];
    if (out.n[g] > 0) at += per;
  }
  out.offsets[groups] = at;
  resize_prefaulted(out.codes, at);
  resize_prefaulted(out.positions, at);
  constexpr size_t kBlock = 64;
  parallel_tasks(threads_, (groups + kBlock - 1) / kBlock, [&](int, size_t block) {
    std::vector<uint64_t> wanted;
    for (size_t g = block * kBlock, e = std::min(groups, g + kBlock); g < e; ++g) {
      const uint64_t n = out.n[g];
      if (n == 0) continue;
      uint64_t* values = codes.data() + offsets[g];
      uint64_t* block_codes = out.codes.data() + out.from[g];
      uint64_t* block_positions = out.positions.data() + out.from[g];
      size_t j = 0;
      for (const OrderedPick& p : picks) {
        uint64_t positions[2];
        const int count = ordered_pick_positions(p, n, positions);
        for (int i = 0; i < count; ++i) block_positions[j++] = positions[i];
      }
      // Ascending distinct positions, each selected in what the previous left.
      wanted.assign(block_positions, block_positions + per);
      std::sort(wanted.begin(), wanted.end());
      wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
      uint64_t* low = values;
      for (const uint64_t position : wanted) {
        std::nth_element(low, values + position, values + n);
        low = values + position + 1;
      }
      for (uint64_t i = 0; i < per; ++i) block_codes[i] = values[block_positions[i]];
    }
  });
  return out;
}

OrderedValuesRun::Sorted OrderedValuesRun::place_picks(KeyedPicks k, const GroupIndex& index, size_t groups) {
  const auto t = std::chrono::steady_clock::now();
  sorted_by_sorter_ = true;
  const auto per = static_cast<uint64_t>(k.per_key);
  const int threads = groups >= kParallelRows ? threads_ : 1;
  Sorted out;
  // Each group's block of picks (the key's index times per_key) and its
  // number of values; a group no key names keeps none (kNoBlock). The arrays
  // are a million groups' megabytes each: faulted in and filled on every
  // thread.
  constexpr uint64_t kNoBlock = ~uint64_t{0};
  resize_prefaulted(out.from, groups);
  resize_prefaulted(out.n, groups);
  parallel_for(threads, groups, [&](int, size_t b, size_t e) { std::fill(out.from.begin() + b, out.from.begin() + e, kNoBlock); });
  std::atomic<uint64_t> values{0};
  parallel_for(k.keys.size() >= kParallelRows ? threads_ : 1, k.keys.size(), [&](int, size_t b, size_t e) {
    uint64_t mine = 0;
    for (size_t i = b; i < e; ++i) {
      if (k.counts[i] == 0) continue;  // a key whose values are all NULL (count_every_row): none to place
      const uint32_t g = index.find(k.keys[i]);
      if (g == KeyTable::kNotFound) throw Error(SqlState::internal_error, "ordered values: a key without a group");
      out.from[g] = i * per;
      out.n[g] = k.counts[i];
      mine += k.counts[i];
    }
    values += mine;
  });
  values_ += values.load();
  if (k.null_key_rows > 0) {
    if (index.null_group() == KeyTable::kNotFound) throw Error(SqlState::internal_error, "ordered values: no NULL-key group");
    out.from[index.null_group()] = k.keys.size() * per;
    out.n[index.null_group()] = k.null_key_rows;
    values_ += k.null_key_rows;
  }
  // offsets: `per` codes for each group with a block (a prefix sum in parts).
  resize_prefaulted(out.offsets, groups + 1);
  const int parts = std::max(threads, 1);
  std::vector<uint64_t> part_sum(static_cast<size_t>(parts) + 1, 0);
  parallel_for(parts, groups, [&](int part, size_t b, size_t e) {
    uint64_t sum = 0;
    for (size_t g = b; g < e; ++g) sum += out.from[g] == kNoBlock ? 0 : per;
    part_sum[static_cast<size_t>(part) + 1] = sum;
  });
  for (size_t p = 1; p < part_sum.size(); ++p) part_sum[p] += part_sum[p - 1];
  parallel_for(parts, groups, [&](int part, size_t b, size_t e) {
    uint64_t at = part_sum[static_cast<size_t>(part)];
    for (size_t g = b; g < e; ++g) {
      out.offsets[g] = at;
      if (out.from[g] == kNoBlock) out.from[g] = 0;
      else at += per;
    }
    if (e == groups) out.offsets[groups] = at;
  });
  if (groups == 0) out.offsets[0] = 0;
  out.codes = std::move(k.codes);
  out.positions = std::move(k.positions);
  out.per = per;
  assign_ms_ += ms_since(t);
  return out;
}

AggregationResult OrderedValuesRun::finalize_keyed() {
  const auto t = std::chrono::steady_clock::now();
  size_t first = 0;  // the slot's first aggregate: its picks are the slot's
  while (slot_of_[first] != 0) ++first;
  KeyedPicks k = collector_->picked(0, *slot_picks(first));
  collector_ms_ = ms_since(t);
  const auto t_place = std::chrono::steady_clock::now();
  const size_t keyed = k.keys.size();
  const bool null_group = k.null_key_every_row > 0;
  const size_t groups = keyed + (null_group ? 1 : 0);
  AggregationResult out;
  out.keys = std::move(k.keys);
  if (null_group) {
    out.keys.push_back(0);
    out.key_valid.assign(groups, 1);
    out.key_valid.back() = 0;
  }
  // Group g's picks are the collector's block g; a group without values
  // keeps none. A million groups' arrays are tens of megabytes: faulted in
  // and filled on every thread, the blocks' offsets a prefix sum in parts.
  const auto per = static_cast<uint64_t>(k.per_key);
  const int parts = groups >= kParallelRows ? threads_ : 1;
  Sorted rows;
  rows.per = per;
  std::vector<int64_t> rows_of, values_of;
  resize_prefaulted(rows_of, groups);
  resize_prefaulted(values_of, groups);
  resize_prefaulted(rows.n, groups);
  resize_prefaulted(rows.from, groups);
  resize_prefaulted(rows.offsets, groups + 1);
  std::vector<uint64_t> part_blocks(static_cast<size_t>(parts) + 1, 0), part_values(static_cast<size_t>(parts), 0),
      part_rows(static_cast<size_t>(parts), 0);
  parallel_for(parts, groups, [&](int part, size_t b, size_t e) {
    uint64_t blocks = 0, values = 0, every = 0;
    for (size_t g = b; g < e; ++g) {
      const uint64_t n = g < keyed ? k.counts[g] : k.null_key_rows;
      rows_of[g] = static_cast<int64_t>(g < keyed ? k.every_row[g] : k.null_key_every_row);
      values_of[g] = static_cast<int64_t>(n);
      rows.n[g] = n;
      rows.from[g] = g * per;
      values += n;
      every += static_cast<uint64_t>(rows_of[g]);
      blocks += n > 0 ? per : 0;
    }
    part_blocks[static_cast<size_t>(part) + 1] = blocks;
    part_values[static_cast<size_t>(part)] = values;
    part_rows[static_cast<size_t>(part)] = every;
  });
  for (size_t p = 1; p < part_blocks.size(); ++p) part_blocks[p] += part_blocks[p - 1];
  for (const uint64_t v : part_values) values_ += v;
  rows.offsets[groups] = part_blocks.back();
  parallel_for(parts, groups, [&](int part, size_t b, size_t e) {
    uint64_t at = part_blocks[static_cast<size_t>(part)];
    for (size_t g = b; g < e; ++g) {
      rows.offsets[g] = at;
      if (rows.n[g] > 0) at += per;
    }
  });
  rows.codes = std::move(k.codes);
  rows.positions = std::move(k.positions);
  out.states.resize(spec_.aggregates.size());
  // The counts: each array to its last reader, copied to the others.
  size_t last_rows = spec_.aggregates.size(), last_values = spec_.aggregates.size();
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    if (inner_of_[a] < 0) continue;
    (spec_.aggregates[a].op == PartialOp::count_rows ? last_rows : last_values) = a;
  }
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    if (inner_of_[a] < 0) continue;
    const bool of_rows = spec_.aggregates[a].op == PartialOp::count_rows;
    std::vector<int64_t>& counts = of_rows ? rows_of : values_of;
    if (a == (of_rows ? last_rows : last_values)) out.states[a].count = std::move(counts);
    else out.states[a].count = counts;
  }
  assign_ms_ += ms_since(t_place);
  const auto t_emit = std::chrono::steady_clock::now();
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    if (inner_of_[a] < 0) emit(a, rows, out);
  }
  emit_ms_ += ms_since(t_emit);
  sort_ms_ = ms_since(t);
  report_.engine = engine_collector_ ? "gpu" : "cpu";
  report_.variant = "top-codes";
  report_.configuration = engine_collector_ ? "device table" : "threads=" + std::to_string(threads_);
  report_.groups = groups;
  report_.rows = 0;
  for (const uint64_t r : part_rows) report_.rows += r;
  report_.finalize_ms = sort_ms_;
  return out;
}

}  // namespace tally::executor::cpu
