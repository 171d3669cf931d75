// The CPU aggregation engine: multi-threaded, vectorized per chunk.
// Variants (chosen by can_use_* predicates, most specialized first):
//  * dense: direct-indexed per-thread state arrays when the key range (from
//    chunk statistics) is small; merged by index ranges in parallel;
//  * hash: per-thread open-addressing tables; merged by radix partitions of the
//    key hash in parallel (each partition owned by one thread, no locks);
//    when the estimated state exceeds the memory budget, the key space is
//    split into passes over the input (each pass keeps only its partitions).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "common/error.hpp"
#include "executor/aggregate_engine.hpp"
#include "executor/finalize.hpp"

namespace tally::executor {
namespace {

// Key ranges up to this many slots always use the dense variant (small
// per-thread arrays); up to kDenseMaxRange when the groups fill at least a
// quarter of the range (then arrays cost no more than a hash table would).
constexpr int64_t kDenseAlwaysRange = int64_t{1} << 20;
constexpr int64_t kDenseMaxRange = int64_t{1} << 24;
// Per-worker dense state above this is left to the hash variant: zeroing and
// faulting in gigabytes costs more than hashing saves.
constexpr uint64_t kDenseMaxBytesPerWorker = uint64_t{512} << 20;
// Rows per thread below which a chunk is processed by one thread (thread
// start-up would cost more than it saves).
constexpr size_t kMinRowsPerThread = 1 << 14;
// Radix partitions per merge thread: enough to balance skewed partitions.
constexpr int kPartitionsPerThread = 8;
// Open-addressing load factor limit (grow at 1/2 full).
constexpr double kMaxLoad = 0.5;

inline uint64_t hash_key(int64_t key) {
  uint64_t x = static_cast<uint64_t>(key);
  x ^= x >> 31;
  x *= 0x9E3779B97F4A7C15ULL;
  x ^= x >> 29;
  return x;
}

template <class F>
void with_values(ColumnWidth width, const void* data, F&& f) {
  switch (width) {
    case ColumnWidth::int32: f(static_cast<const int32_t*>(data)); break;
    case ColumnWidth::int64: f(static_cast<const int64_t*>(data)); break;
    case ColumnWidth::float32: f(static_cast<const float*>(data)); break;
    case ColumnWidth::float64: f(static_cast<const double*>(data)); break;
  }
}

bool float_less(double a, double b) {  // PostgreSQL order: NaN greatest
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return a < b;
}

// Per-group states of all aggregates, struct-of-arrays.
struct StateSet {
  std::vector<PartialStates> states;
  size_t size = 0;

  void init(const std::vector<PartialAggregate>& aggs) { states.assign(aggs.size(), {}); }

  void resize(const std::vector<PartialAggregate>& aggs, size_t n) {
    for (size_t a = 0; a < aggs.size(); ++a) {
      PartialStates& s = states[a];
      switch (aggs[a].op) {
        case PartialOp::count_rows:
        case PartialOp::count_valid: s.count.resize(n, 0); break;
        case PartialOp::sum_int: s.count.resize(n, 0); s.sum_int.resize(n, 0); break;
        case PartialOp::sum_float: s.count.resize(n, 0); s.sum_float.resize(n, 0); break;
        case PartialOp::min_int:
        case PartialOp::max_int: s.count.resize(n, 0); s.extreme_int.resize(n, 0); break;
        case PartialOp::min_float:
        case PartialOp::max_float: s.count.resize(n, 0); s.extreme_float.resize(n, 0); break;
        case PartialOp::moments_int: s.count.resize(n, 0); s.sum_int.resize(n, 0); s.sum2_int.resize(n, 0); break;
        case PartialOp::moments_float: s.n.resize(n, 0); s.sx.resize(n, 0); s.sxx.resize(n, 0); break;
        case PartialOp::moments2_float:
          s.n.resize(n, 0); s.sx.resize(n, 0); s.sxx.resize(n, 0);
          s.sy.resize(n, 0); s.syy.resize(n, 0); s.sxy.resize(n, 0);
          break;
      }
    }
    size = n;
  }

  // Merges group `from` of other into group `to` of this.
  void combine(const std::vector<PartialAggregate>& aggs, size_t to, const StateSet& other, size_t from) {
    for (size_t a = 0; a < aggs.size(); ++a) {
      PartialStates& s = states[a];
      const PartialStates& o = other.states[a];
      switch (aggs[a].op) {
        case PartialOp::count_rows:
        case PartialOp::count_valid: s.count[to] += o.count[from]; break;
        case PartialOp::sum_int: s.count[to] += o.count[from]; s.sum_int[to] += o.sum_int[from]; break;
        case PartialOp::sum_float: s.count[to] += o.count[from]; s.sum_float[to] += o.sum_float[from]; break;
        case PartialOp::min_int:
        case PartialOp::max_int:
          if (o.count[from] == 0) break;
          if (s.count[to] == 0 || (aggs[a].op == PartialOp::min_int ? o.extreme_int[from] < s.extreme_int[to]
                                                                    : o.extreme_int[from] > s.extreme_int[to])) {
            s.extreme_int[to] = o.extreme_int[from];
          }
          s.count[to] += o.count[from];
          break;
        case PartialOp::min_float:
        case PartialOp::max_float:
          if (o.count[from] == 0) break;
          if (s.count[to] == 0 || (aggs[a].op == PartialOp::min_float ? float_less(o.extreme_float[from], s.extreme_float[to])
                                                                      : float_less(s.extreme_float[to], o.extreme_float[from]))) {
            s.extreme_float[to] = o.extreme_float[from];
          }
          s.count[to] += o.count[from];
          break;
        case PartialOp::moments_int:
          s.count[to] += o.count[from];
          s.sum_int[to] += o.sum_int[from];
          s.sum2_int[to] += o.sum2_int[from];
          break;
        case PartialOp::moments_float: {
          FloatMoments m{s.n[to], s.sx[to], s.sxx[to]};
          m.combine(FloatMoments{o.n[from], o.sx[from], o.sxx[from]});
          s.n[to] = m.n; s.sx[to] = m.sx; s.sxx[to] = m.sxx;
          break;
        }
        case PartialOp::moments2_float: {
          FloatMoments2 m{s.n[to], s.sx[to], s.sxx[to], s.sy[to], s.syy[to], s.sxy[to]};
          m.combine(FloatMoments2{o.n[from], o.sx[from], o.sxx[from], o.sy[from], o.syy[from], o.sxy[from]});
          s.n[to] = m.n; s.sx[to] = m.sx; s.sxx[to] = m.sxx;
          s.sy[to] = m.sy; s.syy[to] = m.syy; s.sxy[to] = m.sxy;
          break;
        }
      }
    }
  }
};

// One aggregate over rows [begin, end): a tight loop per (op, input type,
// NULL/FILTER checking) so that the inner loop has no dispatch.
template <PartialOp Op, class T, bool Check>
void apply_op(PartialStates& s, const T* v, const uint8_t* valid, const uint8_t* filter, const uint32_t* gids,
              size_t begin, size_t end) {
  int64_t* count = s.count.data();
  for (size_t r = begin; r < end; ++r) {
    if constexpr (Check) {
      if ((filter && !filter[r]) || (valid && !valid[r])) continue;
    }
    const uint32_t g = gids[r - begin];
    if constexpr (Op == PartialOp::count_valid) {
      ++count[g];
    } else if constexpr (Op == PartialOp::sum_int) {
      ++count[g];
      s.sum_int[g] += static_cast<int64_t>(v[r]);
    } else if constexpr (Op == PartialOp::sum_float) {
      ++count[g];
      s.sum_float[g] += static_cast<double>(v[r]);
    } else if constexpr (Op == PartialOp::min_int) {
      const auto x = static_cast<int64_t>(v[r]);
      if (count[g]++ == 0 || x < s.extreme_int[g]) s.extreme_int[g] = x;
    } else if constexpr (Op == PartialOp::max_int) {
      const auto x = static_cast<int64_t>(v[r]);
      if (count[g]++ == 0 || x > s.extreme_int[g]) s.extreme_int[g] = x;
    } else if constexpr (Op == PartialOp::min_float) {
      const auto x = static_cast<double>(v[r]);
      if (count[g]++ == 0 || float_less(x, s.extreme_float[g])) s.extreme_float[g] = x;
    } else if constexpr (Op == PartialOp::max_float) {
      const auto x = static_cast<double>(v[r]);
      if (count[g]++ == 0 || float_less(s.extreme_float[g], x)) s.extreme_float[g] = x;
    } else if constexpr (Op == PartialOp::moments_int) {
      const __int128 y = static_cast<int64_t>(v[r]);
      ++count[g];
      s.sum_int[g] += y;
      s.sum2_int[g] += y * y;
    } else if constexpr (Op == PartialOp::moments_float) {
      FloatMoments m{s.n[g], s.sx[g], s.sxx[g]};
      m.add(static_cast<double>(v[r]));
      s.n[g] = m.n;
      s.sx[g] = m.sx;
      s.sxx[g] = m.sxx;
    }
  }
}

template <PartialOp Op, class T>
void apply_checked(PartialStates& s, const T* v, const uint8_t* valid, const uint8_t* filter, const uint32_t* gids,
                   size_t begin, size_t end) {
  if (valid || filter) apply_op<Op, T, true>(s, v, valid, filter, gids, begin, end);
  else apply_op<Op, T, false>(s, v, valid, filter, gids, begin, end);
}

// Applies every aggregate to rows [begin, end) whose group ids are in gids.
void update_states(const std::vector<PartialAggregate>& aggs, StateSet& set, const ChunkInput& chunk,
                   const uint32_t* gids, size_t begin, size_t end) {
  for (size_t a = 0; a < aggs.size(); ++a) {
    PartialStates& s = set.states[a];
    const PartialAggregate& agg = aggs[a];
    const uint8_t* filter = chunk.filters.empty() ? nullptr : chunk.filters[a];
    if (agg.op == PartialOp::count_rows) {
      int64_t* count = s.count.data();
      if (filter) {
        for (size_t r = begin; r < end; ++r) count[gids[r - begin]] += filter[r];
      } else {
        for (size_t r = begin; r < end; ++r) ++count[gids[r - begin]];
      }
      continue;
    }
    const ColumnView& in = chunk.values[static_cast<size_t>(agg.input)];
    const uint8_t* valid = in.validity;
    if (agg.op == PartialOp::moments2_float) {
      const ColumnView& in2 = chunk.values[static_cast<size_t>(agg.input2)];
      with_values(in.width, in.data, [&](auto* ys) {
        with_values(in2.width, in2.data, [&](auto* xs) {
          for (size_t r = begin; r < end; ++r) {
            if ((filter && !filter[r]) || (valid && !valid[r]) || (in2.validity && !in2.validity[r])) continue;
            const uint32_t g = gids[r - begin];
            FloatMoments2 m{s.n[g], s.sx[g], s.sxx[g], s.sy[g], s.syy[g], s.sxy[g]};
            m.add(static_cast<double>(ys[r]), static_cast<double>(xs[r]));
            s.n[g] = m.n; s.sx[g] = m.sx; s.sxx[g] = m.sxx; s.sy[g] = m.sy; s.syy[g] = m.syy; s.sxy[g] = m.sxy;
          }
        });
      });
      continue;
    }
    with_values(in.width, in.data, [&](auto* v) {
      using T = std::remove_cv_t<std::remove_pointer_t<decltype(v)>>;
      switch (agg.op) {
        case PartialOp::count_valid: apply_checked<PartialOp::count_valid, T>(s, v, valid, filter, gids, begin, end); break;
        case PartialOp::sum_int: apply_checked<PartialOp::sum_int, T>(s, v, valid, filter, gids, begin, end); break;
        case PartialOp::sum_float: apply_checked<PartialOp::sum_float, T>(s, v, valid, filter, gids, begin, end); break;
        case PartialOp::min_int: apply_checked<PartialOp::min_int, T>(s, v, valid, filter, gids, begin, end); break;
        case PartialOp::max_int: apply_checked<PartialOp::max_int, T>(s, v, valid, filter, gids, begin, end); break;
        case PartialOp::min_float: apply_checked<PartialOp::min_float, T>(s, v, valid, filter, gids, begin, end); break;
        case PartialOp::max_float: apply_checked<PartialOp::max_float, T>(s, v, valid, filter, gids, begin, end); break;
        case PartialOp::moments_int: apply_checked<PartialOp::moments_int, T>(s, v, valid, filter, gids, begin, end); break;
        case PartialOp::moments_float: apply_checked<PartialOp::moments_float, T>(s, v, valid, filter, gids, begin, end); break;
        default: break;
      }
    });
  }
}

// Open-addressing hash table from int64 keys to dense group ids.
class KeyTable {
 public:
  explicit KeyTable(size_t expected_groups = 512) {
    size_t capacity = 1024;
    while (static_cast<double>(capacity) * kMaxLoad < static_cast<double>(expected_groups)) capacity *= 2;
    rehash(capacity);
    keys_.reserve(expected_groups);
  }
  size_t groups() const { return keys_.size(); }
  const std::vector<int64_t>& keys() const { return keys_; }

  // Group id of key, adding it when new.
  uint32_t find_or_insert(int64_t key) {
    size_t slot = hash_key(key) & mask_;
    while (true) {
      const uint32_t id = slots_[slot];
      if (id == kEmpty) {
        const auto new_id = static_cast<uint32_t>(keys_.size());
        slots_[slot] = new_id;
        keys_.push_back(key);
        if (keys_.size() > static_cast<size_t>(static_cast<double>(slots_.size()) * kMaxLoad)) rehash(slots_.size() * 2);
        return new_id;
      }
      if (keys_[id] == key) return id;
      slot = (slot + 1) & mask_;
    }
  }
  // A group that is not found by key (the NULL-key group).
  uint32_t add_unindexed(int64_t key) {
    keys_.push_back(key);
    unindexed_.push_back(static_cast<uint32_t>(keys_.size() - 1));
    return static_cast<uint32_t>(keys_.size() - 1);
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  void rehash(size_t capacity) {
    slots_.assign(capacity, kEmpty);
    mask_ = capacity - 1;
    for (uint32_t id = 0; id < keys_.size(); ++id) {
      if (std::find(unindexed_.begin(), unindexed_.end(), id) != unindexed_.end()) continue;
      size_t slot = hash_key(keys_[id]) & mask_;
      while (slots_[slot] != kEmpty) slot = (slot + 1) & mask_;
      slots_[slot] = id;
    }
  }
  std::vector<uint32_t> slots_;
  std::vector<int64_t> keys_;
  std::vector<uint32_t> unindexed_;
  size_t mask_ = 0;
};

// One worker's local aggregation state.
struct LocalTable {
  KeyTable table;
  StateSet states;
  int64_t null_group = -1;  // group id of the NULL key
  // dense variant
  std::vector<uint8_t> dense_seen;
};

template <class F>
void parallel_for(int threads, size_t n, F&& f) {
  if (threads <= 1 || n < 2) {
    f(0, size_t{0}, n);
    return;
  }
  std::vector<std::thread> workers;
  std::exception_ptr error;
  std::mutex error_mutex;
  const size_t per = (n + static_cast<size_t>(threads) - 1) / static_cast<size_t>(threads);
  for (int t = 0; t < threads; ++t) {
    const size_t begin = static_cast<size_t>(t) * per, end = std::min(n, begin + per);
    if (begin >= end) break;
    workers.emplace_back([&, t, begin, end] {
      try {
        f(t, begin, end);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    });
  }
  for (auto& w : workers) w.join();
  if (error) std::rethrow_exception(error);
}

class CpuRun final : public AggregationRun {
 public:
  explicit CpuRun(const AggregationSpec& spec) : spec_(spec) {
    threads_ = spec.threads > 0 ? spec.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    dense_ = can_use_dense(spec);
    if (spec.forced_variant == "hash") dense_ = false;
    if (dense_) {
      range_ = static_cast<size_t>(spec.key_max - spec.key_min + 1);
    }
    // Memory-bounded passes: the estimated hash state must fit the budget.
    const uint64_t per_group = bytes_per_group(spec);
    if (!dense_ && spec.memory_budget > 0 && spec.estimated_groups > 0) {
      const uint64_t need = spec.estimated_groups * per_group * static_cast<uint64_t>(threads_ + 1);
      passes_ = static_cast<int>(std::min<uint64_t>(64, (need + spec.memory_budget - 1) / spec.memory_budget));
      if (passes_ < 1) passes_ = 1;
    }
    locals_.resize(static_cast<size_t>(threads_));
    // Presize each worker's table for its share of the estimated groups
    // (capped: an overestimate must not allocate gigabytes up front).
    const size_t expected = static_cast<size_t>(std::min<uint64_t>(spec.estimated_groups, uint64_t{1} << 23));
    for (auto& l : locals_) {
      if (!dense_ && expected > 0) l.table = KeyTable(expected);
      l.states.init(spec.aggregates);
      if (dense_) {
        l.states.resize(spec.aggregates, range_ + 1);  // last slot: the NULL key
        l.dense_seen.assign(range_ + 1, 0);
      }
    }
  }

  bool keys_in_range(const ChunkInput& chunk) const {
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

  void switch_to_hash() {
    for (auto& l : locals_) {
      LocalTable h;
      h.states.init(spec_.aggregates);
      for (size_t i = 0; i <= range_; ++i) {
        if (!l.dense_seen[i]) continue;
        uint32_t g;
        if (i == range_) {
          g = h.table.add_unindexed(0);
          h.null_group = g;
        } else {
          g = h.table.find_or_insert(spec_.key_min + static_cast<int64_t>(i));
        }
        if (h.table.groups() > h.states.size) {
          h.states.resize(spec_.aggregates, std::max<size_t>(h.table.groups(), h.states.size * 2));
        }
        h.states.combine(spec_.aggregates, g, l.states, i);
      }
      l = std::move(h);
    }
    dense_ = false;
    switched_ = true;
  }

  // Dense needs a known, small key range.
  static bool can_use_dense(const AggregationSpec& spec) {
    if (spec.forced_variant == "dense") return spec.key_range_known;
    if (!spec.key_range_known || spec.key_max < spec.key_min) return false;
    const __int128 range = static_cast<__int128>(spec.key_max) - spec.key_min + 1;
    if (range <= kDenseAlwaysRange) return true;
    if (range > kDenseMaxRange) return false;
    const uint64_t threads = spec.threads > 0 ? static_cast<uint64_t>(spec.threads) : std::thread::hardware_concurrency();
    if (spec.memory_budget > 0 &&
        static_cast<uint64_t>(range) * bytes_per_group(spec) * std::max<uint64_t>(threads, 1) > spec.memory_budget) {
      return false;
    }
    if (static_cast<uint64_t>(range) * bytes_per_group(spec) > kDenseMaxBytesPerWorker) return false;
    return static_cast<__int128>(spec.estimated_groups) * 4 >= range;
  }

  static uint64_t bytes_per_group(const AggregationSpec& spec) {
    uint64_t bytes = 8 + 8;  // key + slot
    for (const auto& a : spec.aggregates) {
      switch (a.op) {
        case PartialOp::moments2_float: bytes += 48; break;
        case PartialOp::moments_int: bytes += 40; break;
        case PartialOp::moments_float: bytes += 24; break;
        default: bytes += 24; break;
      }
    }
    return bytes;
  }

  int passes() const override { return passes_; }
  void begin_pass(int pass) override {
    if (pass != pass_) {
      flush_pass();
      pass_ = pass;
    }
  }

  void sink(const ChunkInput& chunk) override {
    const auto started = std::chrono::steady_clock::now();
    rows_ += chunk.rows;
    // The dense range comes from statistics; a key outside it (stale or
    // missing statistics) moves this run to the hash variant, keeping its state.
    if (dense_ && !keys_in_range(chunk)) switch_to_hash();
    const int threads = chunk.rows >= kMinRowsPerThread * 2 ? threads_ : 1;
    parallel_for(threads, chunk.rows, [&](int t, size_t begin, size_t end) {
      sink_range(locals_[static_cast<size_t>(t)], chunk, begin, end);
    });
    sink_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  }

  AggregationResult finalize() override {
    const auto started = std::chrono::steady_clock::now();
    flush_pass();
    finalize_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    groups_ = result_.groups();
    return std::move(result_);
  }

  AggregationReport report() const override {
    AggregationReport r;
    r.engine = "cpu";
    r.variant = dense_ ? "dense" : (switched_ ? "hash-partitioned (left dense: key outside statistics range)" : "hash-partitioned");
    r.configuration = "threads=" + std::to_string(threads_) +
                      (dense_ ? " range=" + std::to_string(range_)
                              : " partitions=" + std::to_string(threads_ * kPartitionsPerThread));
    r.rows = rows_;
    r.groups = groups_;
    r.passes = static_cast<uint64_t>(passes_);
    r.sink_ms = sink_ms_;
    r.finalize_ms = finalize_ms_;
    return r;
  }

 private:
  bool in_pass(int64_t key) const {
    if (passes_ <= 1) return true;
    return static_cast<int>(hash_key(key) >> 58) % passes_ == pass_;
  }

  void sink_range(LocalTable& local, const ChunkInput& chunk, size_t begin, size_t end) {
    std::vector<uint32_t> gids(end - begin);
    const uint8_t* key_valid = chunk.keys.validity;
    size_t out = 0;
    if (dense_) {
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
      update_states(spec_.aggregates, local.states, chunk, gids.data(), begin, end);
      return;
    }
    // Hash: rows of other passes are dropped by a filter vector.
    bool all_in = passes_ <= 1;
    std::vector<uint8_t> keep;
    if (!all_in) keep.assign(chunk.rows, 0);
    auto assign = [&](auto* keys) {
      for (size_t r = begin; r < end; ++r) {
        uint32_t g;
        if (key_valid && !key_valid[r]) {
          if (!all_in && pass_ != 0) { gids[r - begin] = 0; continue; }
          if (local.null_group < 0) local.null_group = local.table.add_unindexed(0);
          g = static_cast<uint32_t>(local.null_group);
        } else {
          const int64_t key = static_cast<int64_t>(keys[r]);
          if (!all_in && !in_pass(key)) { gids[r - begin] = 0; continue; }
          g = local.table.find_or_insert(key);
        }
        if (!all_in) keep[r] = 1;
        gids[r - begin] = g;
      }
    };
    (void)out;
    if (chunk.keys.width == ColumnWidth::int32) assign(static_cast<const int32_t*>(chunk.keys.data));
    else assign(static_cast<const int64_t*>(chunk.keys.data));
    if (local.table.groups() > local.states.size) {
      local.states.resize(spec_.aggregates, std::max(local.table.groups(), local.states.size * 2));
    }
    if (all_in) {
      update_states(spec_.aggregates, local.states, chunk, gids.data(), begin, end);
    } else {
      ChunkInput filtered = chunk;
      std::vector<std::vector<uint8_t>> masks(spec_.aggregates.size());
      for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
        masks[a] = keep;
        const uint8_t* f = chunk.filters.empty() ? nullptr : chunk.filters[a];
        if (f) for (size_t r = begin; r < end; ++r) masks[a][r] &= f[r];
        if (filtered.filters.size() < spec_.aggregates.size()) filtered.filters.resize(spec_.aggregates.size(), nullptr);
        filtered.filters[a] = masks[a].data();
      }
      update_states(spec_.aggregates, local.states, filtered, gids.data(), begin, end);
    }
  }

  // Merges the locals of the current pass into result_, then clears them.
  void flush_pass() {
    if (flushed_pass_ == pass_ && flushed_any_) return;
    flushed_any_ = true;
    flushed_pass_ = pass_;
    if (dense_) { merge_dense(); return; }
    merge_hash();
    for (auto& l : locals_) l.null_group = -1;
    for (auto& l : locals_) {
      l = LocalTable{};
      l.states.init(spec_.aggregates);
    }
  }

  void merge_dense() {
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
    std::vector<uint32_t> ids;
    for (size_t i = 0; i < slots; ++i) {
      if (into.dense_seen[i]) ids.push_back(static_cast<uint32_t>(i));
    }
    append_groups(into.states, ids, [&](uint32_t i) { return spec_.key_min + static_cast<int64_t>(i); },
                  [&](uint32_t i) { return i != range_; });
  }

  void merge_hash() {
    // Radix-partition every local's groups by key hash, then merge each
    // partition on one thread (no locks: a partition has one owner).
    const int partitions = locals_.size() == 1 ? 1 : threads_ * kPartitionsPerThread;
    struct PartitionOut {
      KeyTable table;
      StateSet states;
    };
    std::vector<PartitionOut> parts(static_cast<size_t>(partitions));
    std::vector<std::vector<std::vector<uint32_t>>> lists(
        locals_.size(), std::vector<std::vector<uint32_t>>(static_cast<size_t>(partitions)));
    if (partitions == 1) {
      // One worker: its table is already the result.
      LocalTable& l = locals_[0];
      std::vector<uint32_t> ids;
      ids.reserve(l.table.groups());
      for (uint32_t i = 0; i < l.table.groups(); ++i) {
        if (static_cast<int64_t>(i) != l.null_group) ids.push_back(i);
      }
      append_groups(l.states, ids, [&](uint32_t i) { return l.table.keys()[i]; }, [](uint32_t) { return true; });
    } else {
      parallel_for(static_cast<int>(locals_.size()), locals_.size(), [&](int, size_t begin, size_t end) {
        for (size_t t = begin; t < end; ++t) {
          const LocalTable& l = locals_[t];
          for (uint32_t i = 0; i < l.table.groups(); ++i) {
            if (static_cast<int64_t>(i) == l.null_group) continue;
            const size_t p = hash_key(l.table.keys()[i]) % static_cast<uint64_t>(partitions);
            lists[t][p].push_back(i);
          }
        }
      });
      parallel_for(threads_, static_cast<size_t>(partitions), [&](int, size_t begin, size_t end) {
        for (size_t p = begin; p < end; ++p) {
          PartitionOut& out = parts[p];
          size_t upper = 0;  // groups of this partition over all workers: sizes the table once
          for (size_t t = 0; t < locals_.size(); ++t) upper += lists[t][p].size();
          out.table = KeyTable(upper);
          out.states.init(spec_.aggregates);
          out.states.resize(spec_.aggregates, std::max<size_t>(upper, 1));
          for (size_t t = 0; t < locals_.size(); ++t) {
            const LocalTable& l = locals_[t];
            for (uint32_t i : lists[t][p]) {
              const uint32_t g = out.table.find_or_insert(l.table.keys()[i]);
              if (out.table.groups() > out.states.size) {
                out.states.resize(spec_.aggregates, std::max<size_t>(out.table.groups(), out.states.size * 2));
              }
              out.states.combine(spec_.aggregates, g, l.states, i);
            }
          }
        }
      });
      for (auto& part : parts) {
        std::vector<uint32_t> ids(part.table.groups());
        for (uint32_t i = 0; i < ids.size(); ++i) ids[i] = i;
        append_groups(part.states, ids, [&](uint32_t i) { return part.table.keys()[i]; }, [](uint32_t) { return true; });
      }
    }
    // The NULL-key group: every local's NULL group combined.
    StateSet nulls;
    nulls.init(spec_.aggregates);
    bool any_null = false;
    for (auto& l : locals_) {
      if (l.null_group < 0) continue;
      if (!any_null) { nulls.resize(spec_.aggregates, 1); any_null = true; }
      nulls.combine(spec_.aggregates, 0, l.states, static_cast<size_t>(l.null_group));
    }
    if (any_null) append_groups(nulls, {0}, [](uint32_t) { return int64_t{0}; }, [](uint32_t) { return false; });
  }

  template <class KeyOf, class ValidOf>
  void append_groups(const StateSet& set, const std::vector<uint32_t>& ids, KeyOf key_of, ValidOf valid_of) {
    if (result_.states.empty()) result_.states.resize(spec_.aggregates.size());
    for (uint32_t i : ids) {
      result_.keys.push_back(key_of(i));
      result_.key_valid.push_back(valid_of(i) ? 1 : 0);
    }
    for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
      const PartialStates& s = set.states[a];
      PartialStates& r = result_.states[a];
      auto take = [&](const auto& src, auto& dst) {
        if (src.empty()) return;
        for (uint32_t i : ids) dst.push_back(src[i]);
      };
      take(s.count, r.count);
      take(s.sum_int, r.sum_int);
      take(s.sum2_int, r.sum2_int);
      take(s.sum_float, r.sum_float);
      take(s.extreme_int, r.extreme_int);
      take(s.extreme_float, r.extreme_float);
      take(s.n, r.n);
      take(s.sx, r.sx);
      take(s.sxx, r.sxx);
      take(s.sy, r.sy);
      take(s.syy, r.syy);
      take(s.sxy, r.sxy);
    }
  }

  AggregationSpec spec_;
  int threads_ = 1;
  bool dense_ = false;
  bool switched_ = false;
  size_t range_ = 0;
  int passes_ = 1;
  int pass_ = 0;
  int flushed_pass_ = -1;
  bool flushed_any_ = false;
  std::vector<LocalTable> locals_;
  AggregationResult result_;
  uint64_t rows_ = 0, groups_ = 0;
  double sink_ms_ = 0, finalize_ms_ = 0;
};

class CpuEngine final : public AggregateEngine {
 public:
  std::string name() const override { return "cpu"; }
  bool can_run(const AggregationSpec&) const override { return true; }
  std::unique_ptr<AggregationRun> start(const AggregationSpec& spec) override { return std::make_unique<CpuRun>(spec); }
};

}  // namespace

std::unique_ptr<AggregateEngine> make_cpu_engine() { return std::make_unique<CpuEngine>(); }

}  // namespace tally::executor
