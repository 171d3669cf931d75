// CpuRun's dense variant: per-thread direct-indexed state arrays, merged by
// index ranges; and the move to a hash variant when a key leaves the range.
#include <functional>
#include <type_traits>

#include "common/shared_zeros.hpp"
#include "executor/cpu/cpu_run.hpp"
#include "executor/cpu/parallel.hpp"

namespace tally::executor::cpu {

void CpuRun::sink_dense(LocalTable& local, const ChunkInput& chunk, size_t begin, size_t end) {
  if (spec_.global_aggregate) {  // every key is 0 and not NULL: every row is group 0
    local.dense_seen[0] = 1;
    update_states(spec_.aggregates, local.states, chunk, shared_zero_ids(end - begin), nullptr, begin, end - begin, true);
    return;
  }
  const uint8_t* key_valid = chunk.keys.validity;
  // One key and no NULL keys: every row is group 0.
  const bool single = range_ == 1 && key_valid == nullptr;
  std::vector<uint32_t> gids(end - begin);
  const int64_t base = spec_.key_min;
  auto assign = [&](auto* keys) {
    for (size_t r = begin; r < end; ++r) {
      const uint32_t g = (key_valid && !key_valid[r]) ? static_cast<uint32_t>(range_)
                                                      : static_cast<uint32_t>(static_cast<int64_t>(keys[r]) - base);
      gids[r - begin] = g;
    }
    // Seen marks after the loop keep the hot loop store-light.
    uint8_t* seen = local.dense_seen.data();
    for (size_t r = begin; r < end; ++r) seen[gids[r - begin]] = 1;
  };
  if (chunk.keys.width == ColumnWidth::int32) assign(static_cast<const int32_t*>(chunk.keys.data));
  else assign(static_cast<const int64_t*>(chunk.keys.data));
  update_states(spec_.aggregates, local.states, chunk, gids.data(), nullptr, begin, end - begin, single);
}

bool CpuRun::keys_in_range(const ChunkInput& chunk) const {
  if (spec_.global_aggregate) return true;  // every key is 0
  const uint8_t* valid = chunk.keys.validity;
  bool ok = true;
  auto check = [&](auto* keys) {
    for (size_t r = 0; r < chunk.rows; ++r) {
      if (valid && !valid[r]) continue;
      const int64_t k = static_cast<int64_t>(keys[r]);
      ok &= k >= spec_.key_min && k <= spec_.key_max;
    }
  };
  if (chunk.keys.width == ColumnWidth::int32) check(static_cast<const int32_t*>(chunk.keys.data));
  else check(static_cast<const int64_t*>(chunk.keys.data));
  return ok;
}

// Moves the dense state into thread-local hash tables (combining is
// order-independent, so the result is the same).
void CpuRun::switch_to_hash() {
  std::vector<LocalTable> hashed(variant_ == Variant::dense ? static_cast<size_t>(threads_) : 1);
  for (auto& h : hashed) h.states.init(spec_.aggregates, narrow_);
  auto add = [&](LocalTable& h, bool null_key, int64_t key, const StateSet& from, size_t i) {
    uint32_t g;
    if (null_key) {
      if (h.null_group < 0) h.null_group = h.table.add_unindexed(0);
      g = static_cast<uint32_t>(h.null_group);
    } else {
      g = h.table.find_or_insert(key);
    }
    h.states.ensure(spec_.aggregates, h.table.groups());
    h.states.combine(spec_.aggregates, g, from, i);
  };
  if (variant_ == Variant::dense_radix) {
    if (deferred_) materialize_deferred();
    locals_.assign(1, std::move(dense_));
    dense_ = LocalTable{};
    parts_.clear();
  }
  for (size_t t = 0; t < locals_.size(); ++t) {
    const LocalTable& l = locals_[t];
    for (size_t i = 0; i <= range_; ++i) {
      if (l.dense_seen[i]) add(hashed[t], i == range_, spec_.key_min + static_cast<int64_t>(i), l.states, i);
    }
  }
  locals_ = std::move(hashed);
  variant_ = Variant::hash;
  switched_ = true;
}

void CpuRun::merge_dense() {
  LocalTable& into = locals_[0];
  const size_t slots = range_ + 1;
  parallel_for(threads_, slots, [&](int, size_t begin, size_t end) {
    for (size_t t = 1; t < locals_.size(); ++t) {
      const LocalTable& from = locals_[t];
      for (size_t i = begin; i < end; ++i) {
        if (!from.dense_seen[i]) continue;
        into.states.combine(spec_.aggregates, i, from.states, i);
        into.dense_seen[i] = 1;
      }
    }
  });
  emit_dense(into);
}

// The result of a dense variant (range_ slots + the NULL key's) without
// copying: the slots that got rows are compacted in place, every state
// array on its own thread, and the arrays are moved into result_.
void CpuRun::emit_dense(LocalTable& table) {
  const std::vector<uint8_t>& seen = table.dense_seen;
  std::vector<PartialStates>& states = table.states.states;
  StateSet& set = table.states;
  std::vector<size_t> kept;  // slots that got rows, when not all did
  size_t count = 0;
  for (size_t i = 0; i < range_; ++i) count += seen[i];
  const bool all = count == range_;
  if (!all) {
    kept.reserve(count);
    for (size_t i = 0; i < range_; ++i) {
      if (seen[i]) kept.push_back(i);
    }
  }
  const bool null_group = seen[range_] != 0;
  const size_t groups = count + (null_group ? 1 : 0);
  // Every (aggregate, array) pair is one task.
  std::vector<std::function<void()>> tasks;
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    auto compact = [&](auto& v) {
      if (!all) {
        for (size_t j = 0; j < kept.size(); ++j) v[j] = v[kept[j]];
      }
      if (null_group) v[count] = v[range_];
      v.resize(groups);
    };
    if (count_source_[a] != static_cast<int>(a)) states[a].count = {};  // another aggregate's count serves
    visit_result_fields(a, [&](auto member) {
      if constexpr (std::is_same_v<decltype(member), std::vector<int64_t> PartialStates::*>) {
        if (member == &PartialStates::sum_int64) {  // int64 sums as they are (compact form)
          tasks.emplace_back([&, a, compact] {
            compact(set.narrow_sum[a]);
            states[a].sum_int64 = std::move(set.narrow_sum[a]);
          });
          return;
        }
      }
      if constexpr (std::is_same_v<decltype(member), std::vector<__int128> PartialStates::*>) {
        if (member == &PartialStates::sum_int && set.narrow[a]) {
          tasks.emplace_back([&, a, compact] {
            compact(set.narrow_sum[a]);
            set.widen(a);
          });
          return;
        }
      }
      tasks.emplace_back([&, a, member, compact] { compact(states[a].*member); });
    });
  }
  tasks.emplace_back([&] {
    result_.keys.resize(groups);
    result_.key_valid.assign(groups, 1);
    for (size_t j = 0; j < count; ++j) result_.keys[j] = spec_.key_min + static_cast<int64_t>(all ? j : kept[j]);
    if (null_group) {
      result_.keys[count] = 0;
      result_.key_valid[count] = 0;
    }
  });
  parallel_tasks(threads_, tasks.size(), [&](int, size_t t) { tasks[t](); });
  result_.states = std::move(states);
  table = LocalTable{};
}

}  // namespace tally::executor::cpu
