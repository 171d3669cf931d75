// CpuRun's thread-local hash variant: per-thread open-addressing tables,
// merged by radix partitions of the key hash; and the escalation to a radix
// variant when the groups outgrow it.
#include <algorithm>

#include "executor/cpu/cpu_run.hpp"
#include "executor/cpu/parallel.hpp"

namespace tally::executor::cpu {

void CpuRun::sink_hash(LocalTable& local, const ChunkInput& chunk, size_t begin, size_t end) {
  std::vector<uint32_t> gids(end - begin);
  const uint8_t* key_valid = chunk.keys.validity;
  // Rows of other passes are left out through a row list.
  const bool all_in = passes_ <= 1;
  std::vector<uint32_t> rows;
  if (!all_in) rows.reserve(end - begin);
  size_t kept = 0;
  auto assign = [&](auto* keys) {
    for (size_t r = begin; r < end; ++r) {
      uint32_t g;
      if (key_valid && !key_valid[r]) {
        if (!all_in && pass_ != 0) continue;
        if (local.null_group < 0) local.null_group = local.table.add_unindexed(0);
        g = static_cast<uint32_t>(local.null_group);
      } else {
        const int64_t key = static_cast<int64_t>(keys[r]);
        if (!all_in && !in_pass(key)) continue;
        g = local.table.find_or_insert(key);
      }
      if (!all_in) rows.push_back(static_cast<uint32_t>(r));
      gids[kept++] = g;
    }
  };
  if (chunk.keys.width == ColumnWidth::int32) assign(static_cast<const int32_t*>(chunk.keys.data));
  else assign(static_cast<const int64_t*>(chunk.keys.data));
  local.states.ensure(spec_.aggregates, local.table.groups());
  update_states(spec_.aggregates, local.states, chunk, gids.data(), all_in ? nullptr : rows.data(), begin, kept);
}

// The thread-local hash variant was chosen from the group estimate, which a
// sample can get badly wrong (a 32K-row sample of 10M rows with 8M groups
// estimated 85K). Once the groups actually seen no longer fit what the
// thread-local variant is for, the run moves to a radix variant.
// rows_seen: rows sunk so far. Also true early, once the state outgrows L2
// while nearly every row is a new group (it will outgrow the limit too, and
// escalating early leaves fewer groups to move).
bool CpuRun::local_state_too_large(uint64_t rows_seen) const {
  if (passes_ > 1 || !spec_.forced_variant.empty()) return false;
  uint64_t groups = 0;  // the merged table holds at least max, at most sum of these
  for (const auto& l : locals_) groups += l.table.groups();
  const uint64_t bytes = groups * bytes_per_group(spec_);
  if (bytes > l2_bytes_ * kLocalStateL2Multiple) return true;
  // Each worker's groups are new to it: their sum over the rows is the share of new groups.
  return bytes > l2_bytes_ && static_cast<double>(groups) >= kNewGroupFraction * static_cast<double>(rows_seen);
}

// Moves the thread-local hash state into the radix variant the groups seen
// so far call for (dense-radix when the key range allows), then continues
// there. Combining is order-independent, so the result is the same.
void CpuRun::escalate_to_radix(uint64_t rows_seen) {
  std::vector<LocalTable> locals = std::move(locals_);
  locals_.clear();
  uint64_t seen = 0;
  for (const auto& l : locals) seen += l.table.groups();
  // While most rows so far started a new group, the groups keep growing with
  // the input: assume several times what was seen, and with a known key
  // range that fits, that the range fills (dense-radix).
  const bool growing = seen * 2 >= rows_seen;
  spec_.estimated_groups = std::max(spec_.estimated_groups, growing ? seen * kGrowingGroupsFactor : seen);
  AggregationSpec probe = spec_;
  if (growing && spec_.key_range_known && spec_.key_max >= spec_.key_min) {
    probe.estimated_groups = static_cast<uint64_t>(spec_.key_max - spec_.key_min) + 1;
  }
  const bool dense = !switched_ && spec_.key_range_known && spec_.key_max >= spec_.key_min && can_use_dense(probe, 1);
  variant_ = dense ? Variant::dense_radix : Variant::hash_radix;
  if (dense) range_ = static_cast<size_t>(spec_.key_max - spec_.key_min + 1);
  escalated_ = true;
  setup_radix(bytes_per_group(spec_), /*defer=*/false);
  const size_t null_part = parts_.size() - 1;
  // Partition p is merged by thread p % threads: each thread reads every
  // local's keys but writes only its own partitions.
  const int threads = threads_;
  parallel_for(threads, static_cast<size_t>(threads), [&](int, size_t begin, size_t end) {
    for (size_t owner = begin; owner < end; ++owner) {
      for (const LocalTable& l : locals) {
        const std::vector<int64_t>& keys = l.table.keys();
        for (uint32_t i = 0; i < keys.size(); ++i) {
          const bool null_key = static_cast<int64_t>(i) == l.null_group;
          size_t p;
          if (null_key) p = null_part;
          else if (dense) p = static_cast<size_t>(keys[i] - spec_.key_min) >> shift_;
          else p = hash_key(keys[i]) >> (64 - hash_bits_);
          if (p % static_cast<size_t>(threads) != owner) continue;
          if (dense) {
            const size_t slot = null_key ? range_ : static_cast<size_t>(keys[i] - spec_.key_min);
            dense_.dense_seen[slot] = 1;
            dense_.states.combine(spec_.aggregates, slot, l.states, i);
            continue;
          }
          Partition& part = parts_[p];
          uint32_t g = 0;
          if (null_key) {
            part.seen[0] = 1;
          } else {
            g = part.table.find_or_insert(keys[i]);
            part.states.ensure(spec_.aggregates, part.table.groups());
          }
          part.states.combine(spec_.aggregates, g, l.states, i);
        }
      }
    }
  });
}

void CpuRun::merge_hash() {
  // Radix-partition every local's groups by key hash, then merge each
  // partition on one thread (no locks: a partition has one owner).
  const int partitions = locals_.size() == 1 ? 1 : threads_ * kPartitionsPerThread;
  if (partitions == 1) {
    // One worker: its table is already the result.
    LocalTable& l = locals_[0];
    std::vector<uint32_t> ids;
    ids.reserve(l.table.groups());
    CancelTicker ticker;
    for (uint32_t i = 0; i < l.table.groups(); ++i) {
      ticker.tick();
      if (static_cast<int64_t>(i) != l.null_group) ids.push_back(i);
    }
    append_groups(l.states, ids, [&](uint32_t i) { return l.table.keys()[i]; }, true);
  } else {
    struct PartitionOut {
      KeyTable table;
      StateSet states;
    };
    std::vector<PartitionOut> parts(static_cast<size_t>(partitions));
    std::vector<std::vector<std::vector<uint32_t>>> lists(
        locals_.size(), std::vector<std::vector<uint32_t>>(static_cast<size_t>(partitions)));
    parallel_for(static_cast<int>(locals_.size()), locals_.size(), [&](int, size_t begin, size_t end) {
      for (size_t t = begin; t < end; ++t) {
        const LocalTable& l = locals_[t];
        CancelTicker ticker;  // millions of groups: a look at the token every 64K
        for (uint32_t i = 0; i < l.table.groups(); ++i) {
          ticker.tick();
          if (static_cast<int64_t>(i) == l.null_group) continue;
          const size_t p = hash_key(l.table.keys()[i]) % static_cast<uint64_t>(partitions);
          lists[t][p].push_back(i);
        }
      }
    });
    parallel_tasks(threads_, static_cast<size_t>(partitions), [&](int, size_t p) {
      PartitionOut& out = parts[p];
      size_t upper = 0;  // groups of this partition over all workers: sizes the table once
      for (size_t t = 0; t < locals_.size(); ++t) upper += lists[t][p].size();
      out.table = KeyTable(upper);
      out.states.init(spec_.aggregates, narrow_);
      out.states.resize(spec_.aggregates, std::max<size_t>(upper, 1));
      for (size_t t = 0; t < locals_.size(); ++t) {
        const LocalTable& l = locals_[t];
        for (uint32_t i : lists[t][p]) {
          const uint32_t g = out.table.find_or_insert(l.table.keys()[i]);
          out.states.combine(spec_.aggregates, g, l.states, i);
        }
      }
    });
    for (auto& part : parts) {
      check_cancel_point();
      std::vector<uint32_t> ids(part.table.groups());
      for (uint32_t i = 0; i < ids.size(); ++i) ids[i] = i;
      append_groups(part.states, ids, [&](uint32_t i) { return part.table.keys()[i]; }, true);
    }
  }
  // The NULL-key group: every local's NULL group combined.
  StateSet nulls;
  nulls.init(spec_.aggregates, narrow_);
  bool any_null = false;
  for (auto& l : locals_) {
    if (l.null_group < 0) continue;
    if (!any_null) { nulls.resize(spec_.aggregates, 1); any_null = true; }
    nulls.combine(spec_.aggregates, 0, l.states, static_cast<size_t>(l.null_group));
  }
  if (any_null) append_groups(nulls, {0}, [](uint32_t) { return int64_t{0}; }, false);
}

}  // namespace tally::executor::cpu
