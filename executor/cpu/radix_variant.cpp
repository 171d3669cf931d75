// CpuRun's radix variants (dense-radix and hash-radix): rows partitioned by
// key range or key hash into cache-sized partitions, one state per partition.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "executor/cpu/cpu_run.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/cpu/write_combining.hpp"

namespace tally::executor::cpu {

// Partition count from the L2 size: each partition's state should take
// about half of one core's L2 while it is updated.
// defer: dense-radix may keep partitioned rows instead of the state array
// (not when escalating: the thread-local state is combined into the array).
void CpuRun::setup_radix(uint64_t per_group, bool defer) {
  const uint64_t target_groups = std::max<uint64_t>(1024, l2_bytes_ / 2 / per_group);
  if (variant_ == Variant::dense_radix) {
    shift_ = ceil_log2(target_groups);
    while ((range_ >> shift_) + 1 > kMaxRadixPartitions) ++shift_;
    parts_.resize((((range_ - 1) >> shift_) + 1) + 1);  // + the NULL-key partition
    deferred_ = defer;
    if (!deferred_) allocate_dense_state();
    return;
  } else {
    const uint64_t groups = std::max<uint64_t>(spec_.estimated_groups, 1);
    size_t count = size_t{1} << ceil_log2(std::max<uint64_t>(groups / target_groups, 1));
    count = std::clamp<size_t>(count, static_cast<size_t>(threads_) * kPartitionsPerThread, kMaxRadixPartitions);
    count = size_t{1} << ceil_log2(count);
    hash_bits_ = ceil_log2(count);
    parts_.resize(count + 1);
    const size_t expected = static_cast<size_t>(std::min<uint64_t>(groups, uint64_t{1} << 26) / count);
    // The partitions' tables are made on every thread: ten million expected
    // groups are half a gigabyte of slots, whose fresh pages one core would
    // fault in and clear alone before the first row is read.
    parallel_tasks(threads_, count, [&](int, size_t p) {
      parts_[p].table = KeyTable(expected);
      parts_[p].states.init(spec_.aggregates, narrow_);
    });
  }
  parts_.back().states.init(spec_.aggregates, narrow_);
  parts_.back().states.resize(spec_.aggregates, 1);
  parts_.back().seen.assign(1, 0);
}

void CpuRun::sink_radix(const ChunkInput& chunk) {
  const size_t n = chunk.rows;
  if (n == 0) return;
  const int threads = n >= kMinRowsPerThread * 2 ? threads_ : 1;
  const size_t nparts = parts_.size();
  const size_t null_part = nparts - 1;
  part_of_.resize(n);
  dest_.resize(n);
  if (variant_ == Variant::dense_radix) {
    local_slot_.resize(n);  // after a deferred chunk took the buffer: a fresh one
  }
  else local_key_.resize(n);
  const uint8_t* key_valid = chunk.keys.validity;
  const bool dense = variant_ == Variant::dense_radix;
  const int64_t base = spec_.key_min;
  std::vector<std::vector<uint32_t>> histogram(static_cast<size_t>(threads), std::vector<uint32_t>(nparts, 0));
  std::vector<uint8_t> in_pass(nparts);
  for (size_t p = 0; p < nparts; ++p) in_pass[p] = radix_in_pass(p) ? 1 : 0;
  // 1. Partition of every row, and per-thread histograms.
  parallel_for(threads, n, [&](int t, size_t begin, size_t end) {
    uint32_t* hist = histogram[static_cast<size_t>(t)].data();
    auto assign = [&](auto* keys) {
      for (size_t r = begin; r < end; ++r) {
        size_t p;
        if (key_valid && !key_valid[r]) p = null_part;
        else if (dense) p = static_cast<size_t>(static_cast<int64_t>(keys[r]) - base) >> shift_;
        else p = hash_key(static_cast<int64_t>(keys[r])) >> (64 - hash_bits_);
        if (passes_ > 1 && !in_pass[p]) { part_of_[r] = kSkipRow; continue; }
        part_of_[r] = static_cast<uint16_t>(p);
        ++hist[p];
      }
    };
    if (chunk.keys.width == ColumnWidth::int32) assign(static_cast<const int32_t*>(chunk.keys.data));
    else assign(static_cast<const int64_t*>(chunk.keys.data));
  });
  // 2. Partition-major offsets (within a partition: thread order = row order).
  std::vector<std::vector<uint32_t>> cursor(static_cast<size_t>(threads), std::vector<uint32_t>(nparts));
  std::vector<uint32_t> start(nparts + 1);
  uint32_t pos = 0;
  for (size_t p = 0; p < nparts; ++p) {
    start[p] = pos;
    for (int t = 0; t < threads; ++t) {
      cursor[static_cast<size_t>(t)][p] = pos;
      pos += histogram[static_cast<size_t>(t)][p];
    }
  }
  start[nparts] = pos;
  // 3. Destination of every row, and its partition-local key (dense: the
  // slot in the partition; hash: the key). When the aggregates read one
  // 4-byte column without NULLs or FILTER (sum/count/min/max/avg of an int4
  // NOT NULL column), its values move in the same loop (one pass, no dest_).
  const std::vector<MoveJob> jobs = plan_moved_columns(chunk);
  const bool fused = jobs.size() == 1 && jobs[0].width == 4;
  const uint32_t* fused_from = fused ? static_cast<const uint32_t*>(jobs[0].from) : nullptr;
  uint32_t* fused_to = fused ? static_cast<uint32_t*>(jobs[0].to) : nullptr;
  parallel_for(threads, n, [&](int t, size_t begin, size_t end) {
    uint32_t* cur = cursor[static_cast<size_t>(t)].data();
    // The fused move stages rows per partition (write_combining.hpp).
    auto scatter_combined = [&](auto* keys, auto& out, auto local_of) {
      for (size_t r = begin; r < end; ++r) {
        const uint16_t p = part_of_[r];
        if (p == kSkipRow) continue;
        out.add(p, fused_from[r], local_of(p, static_cast<int64_t>(keys[r])));
      }
      out.finish();
    };
    auto fused_run = [&](auto* keys) {
      if (dense) {
        cpu::CombinedScatter<uint32_t, uint32_t> out(nparts, fused_to, local_slot_.data(), cur);
        scatter_combined(keys, out, [&](size_t p, int64_t key) {
          return p == null_part ? static_cast<uint32_t>(range_) : static_cast<uint32_t>(key - base);
        });
      } else {
        cpu::CombinedScatter<uint32_t, int64_t> out(nparts, fused_to, local_key_.data(), cur);
        scatter_combined(keys, out, [](size_t, int64_t key) { return key; });
      }
    };
    if (fused) {
      if (chunk.keys.width == ColumnWidth::int32) fused_run(static_cast<const int32_t*>(chunk.keys.data));
      else fused_run(static_cast<const int64_t*>(chunk.keys.data));
      return;
    }
    auto scatter = [&](auto* keys, auto fuse) {
      for (size_t r = begin; r < end; ++r) {
        const uint16_t p = part_of_[r];
        if (p == kSkipRow) {
          if constexpr (!decltype(fuse)::value) dest_[r] = UINT32_MAX;
          continue;
        }
        const uint32_t at = cur[p]++;
        if constexpr (decltype(fuse)::value) fused_to[at] = fused_from[r];
        else dest_[r] = at;
        const int64_t key = static_cast<int64_t>(keys[r]);
        if (dense) local_slot_[at] = p == null_part ? static_cast<uint32_t>(range_) : static_cast<uint32_t>(key - base);
        else local_key_[at] = key;
      }
    };
    auto run = [&](auto fuse) {
      if (chunk.keys.width == ColumnWidth::int32) scatter(static_cast<const int32_t*>(chunk.keys.data), fuse);
      else scatter(static_cast<const int64_t*>(chunk.keys.data), fuse);
    };
    if (fused) run(std::true_type{});
    else run(std::false_type{});
  });
  // 4. The value columns, validity and FILTER masks in partition order, one
  // column at a time (sequential reads, one write stream per partition), so
  // that each partition's update reads its rows sequentially.
  if (!fused) copy_moved_columns(jobs, threads, n);
  const ChunkInput& moved = moved_;
  if (deferred_) {
    keep_deferred(std::move(start), n);
    return;
  }
  // 5. Each partition's rows into its state, one thread per partition.
  parallel_tasks(threads, nparts, [&](int, size_t p) {
    const uint32_t begin = start[p], end = start[p + 1];
    if (begin == end) return;
    Partition& part = parts_[p];
    const size_t count = end - begin;
    std::vector<uint32_t> gids;
    const uint32_t* ids = nullptr;
    if (dense) {
      // Slots of the one dense array; partitions own disjoint slices.
      ids = local_slot_.data() + begin;
      uint8_t* seen = dense_.dense_seen.data();
      for (size_t i = 0; i < count; ++i) seen[ids[i]] = 1;
      update_states(spec_.aggregates, dense_.states, moved, ids, nullptr, begin, count);
      return;
    }
    if (p == null_part) {
      gids.assign(count, 0);
      ids = gids.data();
      part.seen[0] = 1;
    } else {
      gids.resize(count);
      const int64_t* keys = local_key_.data() + begin;
      for (size_t i = 0; i < count; ++i) gids[i] = part.table.find_or_insert(keys[i]);
      part.states.ensure(spec_.aggregates, part.table.groups());
      ids = gids.data();
    }
    update_states(spec_.aggregates, part.states, moved, ids, nullptr, begin, count);
  });
}

// Points moved_ at buffers for what the aggregates read of `chunk`, and
// returns the copies that fill them.
std::vector<MoveJob> CpuRun::plan_moved_columns(const ChunkInput& chunk) {
  const size_t n = chunk.rows;
  moved_.rows = n;
  moved_.keys = ColumnView{};
  moved_.values.assign(chunk.values.size(), ColumnView{});
  moved_.filters.assign(chunk.filters.size(), nullptr);
  std::vector<char> used(chunk.values.size(), 0);
  for (const auto& a : spec_.aggregates) {
    if (a.input >= 0) used[static_cast<size_t>(a.input)] = 1;
    if (a.input2 >= 0) used[static_cast<size_t>(a.input2)] = 1;
  }
  std::vector<MoveJob> jobs;
  size_t buffer = 0;
  auto take = [&](size_t bytes) -> void* {
    if (buffer == moved_buffers_.size()) moved_buffers_.emplace_back();
    MoveBuffer& b = moved_buffers_[buffer++];
    const size_t words = (bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t);
    if (b.words < words) {
      // Every byte is written before it is read: no zero-filling pass.
      b.data.reset(new uint64_t[words]);
      b.words = words;
    }
    return b.data.get();
  };
  for (size_t c = 0; c < chunk.values.size(); ++c) {
    if (!used[c]) continue;
    const ColumnView& in = chunk.values[c];
    // The planner gives every aggregate its own input, so sum(v), min(v),
    // max(v), avg(v) name the same stored column four times: move it once
    // (and a lone int4 column then takes the fused move).
    size_t same = 0;
    while (same < c && !(used[same] && chunk.values[same].data == in.data && chunk.values[same].width == in.width &&
                         chunk.values[same].validity == in.validity)) {
      ++same;
    }
    if (same < c) {
      moved_.values[c] = moved_.values[same];
      continue;
    }
    const int width = in.width == ColumnWidth::int32 || in.width == ColumnWidth::float32 ? 4 : 8;
    void* to = take(n * static_cast<size_t>(width));
    jobs.push_back({in.data, to, width});
    moved_.values[c].width = in.width;
    moved_.values[c].data = to;
    if (in.validity) {
      void* valid = take(n);
      jobs.push_back({in.validity, valid, 1});
      moved_.values[c].validity = static_cast<const uint8_t*>(valid);
    }
  }
  for (size_t a = 0; a < chunk.filters.size(); ++a) {
    if (!chunk.filters[a]) continue;
    void* mask = take(n);
    jobs.push_back({chunk.filters[a], mask, 1});
    moved_.filters[a] = static_cast<const uint8_t*>(mask);
  }
  return jobs;
}

// The copies of plan_moved_columns, by dest_.
void CpuRun::copy_moved_columns(const std::vector<MoveJob>& jobs, int threads, size_t n) {
  parallel_for(threads, n, [&](int, size_t begin, size_t end) {
    const uint32_t* dest = dest_.data();
    for (const MoveJob& job : jobs) {
      auto copy = [&](auto* from, auto* to) {
        for (size_t r = begin; r < end; ++r) {
          if (dest[r] != UINT32_MAX) to[dest[r]] = from[r];
        }
      };
      if (job.width == 4) copy(static_cast<const uint32_t*>(job.from), static_cast<uint32_t*>(job.to));
      else if (job.width == 8) copy(static_cast<const uint64_t*>(job.from), static_cast<uint64_t*>(job.to));
      else copy(static_cast<const uint8_t*>(job.from), static_cast<uint8_t*>(job.to));
    }
  });
}

// Appends the partitions of the current pass to result_ (in parallel, into
// presized arrays) and frees them.
void CpuRun::flush_radix() {
  if (variant_ == Variant::dense_radix) {
    if (deferred_) {
      emit_deferred();
      aggregated_deferred_ = true;
    }
    else emit_dense(dense_);
    return;
  }
  const size_t nparts = parts_.size();
  const size_t null_part = nparts - 1;
  std::vector<std::vector<uint32_t>> ids(nparts);
  parallel_tasks(threads_, nparts, [&](int, size_t p) {
    if (!radix_in_pass(p)) return;
    const Partition& part = parts_[p];
    if (p == null_part) {
      if (part.seen[0]) ids[p].push_back(0);
    } else {
      ids[p].resize(part.table.groups());
      for (uint32_t i = 0; i < ids[p].size(); ++i) ids[p][i] = i;
    }
  });
  std::vector<size_t> offset(nparts + 1);
  offset[0] = result_.keys.size();
  for (size_t p = 0; p < nparts; ++p) offset[p + 1] = offset[p] + ids[p].size();
  grow_result(offset[nparts]);
  parallel_tasks(threads_, nparts, [&](int, size_t p) {
    if (ids[p].empty()) return;
    Partition& part = parts_[p];
    if (p == null_part) {
      emit_at(offset[p], part.states, ids[p], [](uint32_t) { return int64_t{0}; }, false);
    } else {
      const std::vector<int64_t>& keys = part.table.keys();
      emit_at(offset[p], part.states, ids[p], [&](uint32_t i) { return keys[i]; }, true);
    }
    // Done with this partition: free its memory (a later pass needs none of it).
    part = Partition{};
    part.states.init(spec_.aggregates, narrow_);
  });
}

}  // namespace tally::executor::cpu
