// The device column cache (gpu/column_cache.hpp) and the GPU engine reading
// through it. The LRU bookkeeping runs everywhere (entries without device
// memory); the engine tests need a device and skip without one: hits on a
// second query, evictions, a table three times the cache, resident chunks
// joined into fewer launches, and results equal to the CPU engine's in every
// case; chunks kept ahead of any query (pg_prewarm); column placement (column_regions.hpp): adjacent slots, mapped in
// blocks, freed with the last column of each block.
#include <gtest/gtest.h>

#if TALLY_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include <cstdlib>
#include <map>
#include <random>
#include <string>

#include "common/engine_counters.hpp"
#include "common/aggregate_engine.hpp"
#include "gpu/pipeline/column_cache.hpp"
#include "gpu/pipeline/column_regions.hpp"
#include "gpu/rules/device_info.hpp"
#include "gpu/engine/gpu_engine.hpp"
#include "executor/cpu/cpu_engine.hpp"

namespace tally::gpu::test {
namespace {

std::shared_ptr<const DeviceColumn> fake_column(uint64_t bytes) {
  auto c = std::make_shared<DeviceColumn>();
  c->bytes = bytes;  // no device memory: the LRU logic alone
  return c;
}

ColumnKey key(uint64_t chunk, uint32_t column = 0) { return ColumnKey{7, chunk, column, 4}; }

TEST(ColumnCacheLru, MissThenHit) {
  ColumnCache cache(0, 1000);
  EXPECT_EQ(cache.find(key(1)), nullptr);
  auto c = fake_column(100);
  cache.insert(key(1), c);
  EXPECT_EQ(cache.find(key(1)), c);
  EXPECT_EQ(cache.find(key(1, 1)), nullptr);                    // other column
  EXPECT_EQ(cache.find(ColumnKey{7, 1, 0, 8}), nullptr);        // other width
  EXPECT_EQ(cache.find(ColumnKey{8, 1, 0, 4}), nullptr);        // other table
  const ColumnCacheStats s = cache.stats();
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 4u);
  EXPECT_EQ(s.resident_bytes, 100u);
  EXPECT_EQ(s.entries, 1u);
}

TEST(ColumnCacheLru, EvictsLeastRecentlyUsedWithinCapacity) {
  ColumnCache cache(0, 300);
  for (uint64_t c = 0; c < 3; ++c) cache.insert(key(c), fake_column(100));
  ASSERT_NE(cache.find(key(0)), nullptr);  // 0 becomes most recent: 1 is the LRU
  cache.insert(key(3), fake_column(100));
  EXPECT_EQ(cache.find(key(1)), nullptr);
  EXPECT_NE(cache.find(key(0)), nullptr);
  EXPECT_NE(cache.find(key(2)), nullptr);
  EXPECT_NE(cache.find(key(3)), nullptr);
  EXPECT_LE(cache.stats().resident_bytes, 300u);
  EXPECT_EQ(cache.stats().evictions, 1u);
  // A large entry evicts as many as it needs.
  cache.insert(key(9), fake_column(250));
  EXPECT_EQ(cache.stats().entries, 1u);
  EXPECT_EQ(cache.stats().resident_bytes, 250u);
}

TEST(ColumnCacheLru, RejectsColumnsLargerThanTheCache) {
  ColumnCache cache(0, 100);
  EXPECT_FALSE(cache.admits(101));
  EXPECT_TRUE(cache.admits(100));
  cache.insert(key(1), fake_column(101));
  EXPECT_EQ(cache.find(key(1)), nullptr);
  EXPECT_EQ(cache.stats().rejected, 1u);
  ColumnCache none(0, 0);
  EXPECT_FALSE(none.admits(1));
}

TEST(ColumnCacheLru, EvictedEntryLivesWhileLeased) {
  ColumnCache cache(0, 100);
  cache.insert(key(1), fake_column(100));
  std::shared_ptr<const DeviceColumn> lease = cache.find(key(1));
  ASSERT_NE(lease, nullptr);
  cache.insert(key(2), fake_column(100));  // evicts key 1
  EXPECT_EQ(cache.find(key(1)), nullptr);
  EXPECT_EQ(lease->bytes, 100u);  // still readable by the query holding it
  EXPECT_EQ(lease.use_count(), 1);
}

TEST(ColumnCacheLru, DuplicateInsertKeepsTheFirst) {
  ColumnCache cache(0, 1000);
  auto first = fake_column(10);
  cache.insert(key(1), first);
  cache.insert(key(1), fake_column(20));
  EXPECT_EQ(cache.find(key(1)), first);
  EXPECT_EQ(cache.stats().resident_bytes, 10u);
}

// ---- on the device ----

using tally::ColumnWidth;
using tally::PartialOp;

struct Table {
  size_t chunk_rows = 0;
  std::vector<std::vector<int32_t>> keys, values;
  std::vector<std::vector<uint8_t>> value_valid;
};

Table make_table(size_t chunks, size_t chunk_rows, int32_t groups, uint64_t seed) {
  Table t;
  t.chunk_rows = chunk_rows;
  std::mt19937_64 rng(seed);
  for (size_t c = 0; c < chunks; ++c) {
    t.keys.emplace_back(chunk_rows);
    t.values.emplace_back(chunk_rows);
    t.value_valid.emplace_back(chunk_rows);
    for (size_t r = 0; r < chunk_rows; ++r) {
      t.keys[c][r] = static_cast<int32_t>(rng() % static_cast<uint64_t>(groups));
      t.values[c][r] = static_cast<int32_t>(rng() % 2000001) - 1000000;
      t.value_valid[c][r] = rng() % 10 != 0;
    }
  }
  return t;
}

tally::AggregationSpec spec_for(int32_t groups) {
  tally::AggregationSpec s;
  s.key_width = ColumnWidth::int64;
  s.value_widths = {ColumnWidth::int64};
  s.aggregates = {{PartialOp::count_rows, -1, -1}, {PartialOp::sum_int, 0, -1}, {PartialOp::max_int, 0, -1}};
  s.key_range_known = true;
  s.key_min = 0;
  s.key_max = groups - 1;
  s.estimated_groups = static_cast<uint64_t>(groups);
  return s;
}

struct Totals {
  int64_t rows = 0;
  __int128 sum = 0;
  int64_t max = 0;
  int64_t nonnull = 0;
  bool operator==(const Totals&) const = default;
};

std::map<int64_t, Totals> run(tally::AggregateEngine& engine, const Table& t, int32_t groups, bool identities,
                              uint64_t table_oid = 42) {
  auto r = engine.start(spec_for(groups));
  for (size_t c = 0; c < t.keys.size(); ++c) {
    tally::ChunkInput in;
    in.rows = t.chunk_rows;
    in.keys = {ColumnWidth::int32, t.keys[c].data(), nullptr};
    in.values = {{ColumnWidth::int32, t.values[c].data(), t.value_valid[c].data()}};
    if (identities) {
      in.keys.identity = {table_oid, 100 + c, 0};
      in.values[0].identity = {table_oid, 100 + c, 1};
    }
    in.filters.assign(3, nullptr);
    r->sink(in);
  }
  const tally::AggregationResult res = r->finalize();
  std::map<int64_t, Totals> out;
  for (size_t g = 0; g < res.groups(); ++g) {
    Totals& x = out[res.keys[g]];
    x.rows = res.states[0].count[g];
    x.sum = res.states[1].sum_int[g];
    x.nonnull = res.states[1].count[g];
    x.max = res.states[2].count[g] ? res.states[2].extreme_int[g] : 0;
  }
  return out;
}

class GpuColumnCache : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(GpuColumnCache, SecondQueryHitsAndMatchesTheCpuEngine) {
  const Table t = make_table(6, 1 << 16, 1000, 1);
  auto cpu = executor::make_cpu_engine();
  const auto expected = run(*cpu, t, 1000, false);
  auto gpu = make_gpu_engine(-1, GpuEngineOptions{0, uint64_t{64} << 20});
  ASSERT_NE(gpu, nullptr);
  const auto before = gpu->column_cache().stats();
  EXPECT_EQ(run(*gpu, t, 1000, true), expected);
  const auto cold = gpu->column_cache().stats();
  EXPECT_EQ(cold.misses - before.misses, 12u);  // 6 chunks x (key, value)
  EXPECT_EQ(cold.entries, 12u);
  EXPECT_EQ(run(*gpu, t, 1000, true), expected);
  const auto warm = gpu->column_cache().stats();
  EXPECT_EQ(warm.hits - cold.hits, 12u);
  EXPECT_EQ(warm.misses, cold.misses);
  // Without identities nothing is cached, and the answer is the same.
  EXPECT_EQ(run(*gpu, t, 1000, false), expected);
  EXPECT_EQ(gpu->column_cache().stats().entries, 12u);
}

// pg_prewarm's keep(): a chunk's columns copied in without a query, so the
// first query over them finds every column resident (no miss) and answers
// as the CPU engine does; a second keep() copies nothing; a table larger
// than the cache keeps what fits without evicting what it kept.
TEST_F(GpuColumnCache, KeptChunksMakeTheFirstQueryAllHits) {
  const Table t = make_table(6, 1 << 16, 1000, 5);
  auto cpu = executor::make_cpu_engine();
  const auto expected = run(*cpu, t, 1000, false);
  auto keep_all = [&](tally::AggregateEngine& engine) {
    uint64_t copied = 0;
    for (size_t c = 0; c < t.keys.size(); ++c) {
      tally::KeptChunk k;
      k.table = 42;
      k.chunk = 100 + c;
      k.rows = t.chunk_rows;
      k.columns = {0, 1};
      k.widths = {ColumnWidth::int32, ColumnWidth::int32};
      k.host = {{t.keys[c].data(), nullptr}, {t.values[c].data(), t.value_valid[c].data()}};
      copied += engine.keep(k);
    }
    return copied;
  };
  auto gpu = make_gpu_engine(-1, GpuEngineOptions{0, uint64_t{64} << 20});
  ASSERT_NE(gpu, nullptr);
  const uint64_t rows = uint64_t{6} << 16;
  EXPECT_GE(keep_all(*gpu), rows * 4 + rows * 5);  // keys; values and their validity
  const auto kept = gpu->column_cache().stats();
  EXPECT_EQ(kept.entries, 12u);
  EXPECT_EQ(keep_all(*gpu), 0u);
  EXPECT_EQ(run(*gpu, t, 1000, true), expected);
  const auto after = gpu->column_cache().stats();
  EXPECT_EQ(after.misses, kept.misses);
  EXPECT_EQ(after.hits - kept.hits, 12u);

  // A cache for four of the six chunks: keep() fills it and stops, and the
  // query still answers (the other chunks copied as they come).
  const uint64_t per_chunk = (uint64_t{1} << 16) * 4 + ((uint64_t{1} << 16) * 4 + (uint64_t{1} << 16));
  auto small = make_gpu_engine(-1, GpuEngineOptions{0, per_chunk * 4 + 1024});
  ASSERT_NE(small, nullptr);
  EXPECT_GT(keep_all(*small), 0u);
  const ColumnCacheStats s = small->column_cache().stats();
  EXPECT_EQ(s.evictions, 0u);
  EXPECT_LE(s.resident_bytes, per_chunk * 4 + 1024);
  EXPECT_GE(s.entries, 7u);
  EXPECT_EQ(run(*small, t, 1000, true), expected);
}

TEST_F(GpuColumnCache, TableThreeTimesTheCacheStreamsAndEvicts) {
  // 12 chunks x 2^16 rows x (4-byte key + 4-byte value + validity) ~ 9.4 MB;
  // the cache holds a third of that.
  const Table t = make_table(12, 1 << 16, 5000, 2);
  const uint64_t per_chunk = (uint64_t{1} << 16) * 4 + ((uint64_t{1} << 16) * 4 + (uint64_t{1} << 16));
  const uint64_t capacity = per_chunk * 12 / 3;
  auto cpu = executor::make_cpu_engine();
  const auto expected = run(*cpu, t, 5000, false);
  auto gpu = make_gpu_engine(-1, GpuEngineOptions{0, capacity});
  ASSERT_NE(gpu, nullptr);
  for (int pass = 0; pass < 3; ++pass) EXPECT_EQ(run(*gpu, t, 5000, true), expected) << "pass " << pass;
  const ColumnCacheStats s = gpu->column_cache().stats();
  EXPECT_LE(s.resident_bytes, capacity);
  EXPECT_GT(s.evictions, 0u);
  EXPECT_GE(s.entries, 2u);
  // An LRU scan over a table larger than the cache finds nothing it needs
  // resident: every look-up misses, every pass still answers right.
  EXPECT_EQ(s.hits, 0u);
  EXPECT_EQ(s.misses, 3u * 24u);
}

TEST_F(GpuColumnCache, ChangedChunkIdentityIsAMiss) {
  // Same table oid and chunk numbers, other bytes under other chunk ids
  // (what a TRUNCATE and reload gives): the cache must not serve the old copy.
  const Table a = make_table(3, 1 << 15, 100, 3);
  const Table b = make_table(3, 1 << 15, 100, 4);
  auto gpu = make_gpu_engine(-1, GpuEngineOptions{0, uint64_t{64} << 20});
  ASSERT_NE(gpu, nullptr);
  auto cpu = executor::make_cpu_engine();
  EXPECT_EQ(run(*gpu, a, 100, true, 42), run(*cpu, a, 100, false));
  // b under a different table oid (identities differ): right answer for b.
  EXPECT_EQ(run(*gpu, b, 100, true, 43), run(*cpu, b, 100, false));
}

// Resident NOT NULL columns of consecutive chunks sit next to each other in
// device memory (column_regions.hpp), so a warm query aggregates them in
// joined launches; the answer must not change, with a short last chunk too.
struct JoinedRun {
  std::map<int64_t, Totals> groups;
  long launches = -1;
};

// `valid`: the values' validity per chunk (nullptr: a NOT NULL column).
JoinedRun run_chunks(tally::AggregateEngine& engine, const std::vector<std::vector<int32_t>>& keys,
                     const std::vector<std::vector<int32_t>>& values, int32_t groups, bool identities,
                     const std::string& variant = "", uint64_t estimate = 0,
                     const std::vector<std::vector<uint8_t>>* valid = nullptr) {
  tally::AggregationSpec s = spec_for(groups);
  s.value_not_null = {valid == nullptr ? uint8_t{1} : uint8_t{0}};
  s.forced_variant = variant;
  if (estimate) s.estimated_groups = estimate;
  auto r = engine.start(s);
  for (size_t c = 0; c < keys.size(); ++c) {
    tally::ChunkInput in;
    in.rows = keys[c].size();
    in.keys = {ColumnWidth::int32, keys[c].data(), nullptr};
    in.values = {{ColumnWidth::int32, values[c].data(), valid ? (*valid)[c].data() : nullptr}};
    if (identities) {
      // Another table where the values have NULLs: its own regions.
      const uint64_t table = valid ? 78 : 77;
      in.keys.identity = {table, 500 + c, 0};
      in.values[0].identity = {table, 500 + c, 1};
    }
    in.filters.assign(3, nullptr);
    r->sink(in);
  }
  const tally::AggregationResult res = r->finalize();
  JoinedRun out;
  for (size_t g = 0; g < res.groups(); ++g) {
    Totals& x = out.groups[res.keys[g]];
    x.rows = res.states[0].count[g];
    x.sum = res.states[1].sum_int[g];
    x.nonnull = res.states[1].count[g];
    x.max = res.states[2].count[g] ? res.states[2].extreme_int[g] : 0;
  }
  for (const std::string& d : r->report().details) {
    const std::string tag = "GPU: launches: ";
    if (d.rfind(tag, 0) == 0) out.launches = std::strtol(d.c_str() + tag.size(), nullptr, 10);
  }
  return out;
}

TEST_F(GpuColumnCache, ResidentChunksRunInJoinedLaunches) {
  // 8 chunks: 7 of 2^20 rows (4 MiB per int4 column, above the 2 MiB
  // allocation granularity) and a short last one.
  std::vector<std::vector<int32_t>> keys, values;
  std::mt19937_64 rng(11);
  for (int c = 0; c < 8; ++c) {
    const size_t rows = c < 7 ? size_t{1} << 20 : (size_t{1} << 19) + 123;
    keys.emplace_back(rows);
    values.emplace_back(rows);
    for (size_t r = 0; r < rows; ++r) {
      keys.back()[r] = static_cast<int32_t>(rng() % 300);
      values.back()[r] = static_cast<int32_t>(rng() % 2000001) - 1000000;
    }
  }
  auto cpu = executor::make_cpu_engine();
  const auto expected = run_chunks(*cpu, keys, values, 300, false).groups;
  ASSERT_EQ(expected.size(), 300u);
  auto gpu = make_gpu_engine(-1, GpuEngineOptions{0, uint64_t{256} << 20});
  ASSERT_NE(gpu, nullptr);
  // Cold: every chunk waits for its copy, one launch each.
  const JoinedRun cold = run_chunks(*gpu, keys, values, 300, true);
  EXPECT_EQ(cold.groups, expected);
  EXPECT_EQ(cold.launches, 8);
  // Warm: the first chunk alone, then the others (7.5 x 2^20 rows, below one
  // joined launch's limit) in one launch; the short last chunk may get a
  // configuration of its own from the rules (sized by its rows) and run alone.
  const JoinedRun warm = run_chunks(*gpu, keys, values, 300, true);
  EXPECT_EQ(warm.groups, expected);
  EXPECT_GE(warm.launches, 2);
  EXPECT_LE(warm.launches, 3);
  // Not cached (no identities): separate allocations, one launch per chunk.
  const JoinedRun transient = run_chunks(*gpu, keys, values, 300, false);
  EXPECT_EQ(transient.groups, expected);
  EXPECT_EQ(transient.launches, 8);
  // Every hashing variant over joined launches, with an estimate 20x too low
  // so that the global table grows inside a joined launch.
  for (const char* v : {"shared_memory", "global", "sort", "partitioned"}) {
    const JoinedRun r = run_chunks(*gpu, keys, values, 300, true, v, 16);
    EXPECT_EQ(r.groups, expected) << v;
    EXPECT_LT(r.launches, 8) << v;
  }
}

TEST_F(GpuColumnCache, ResidentChunksWithNullsRunInJoinedLaunches) {
  // As above, the values with NULLs: their validity bytes (1 MiB a chunk,
  // below the allocation granularity) are placed in a region of their own,
  // so the resident chunks still join.
  std::vector<std::vector<int32_t>> keys, values;
  std::vector<std::vector<uint8_t>> valid;
  std::mt19937_64 rng(12);
  for (int c = 0; c < 8; ++c) {
    const size_t rows = c < 7 ? size_t{1} << 20 : (size_t{1} << 19) + 123;
    keys.emplace_back(rows);
    values.emplace_back(rows);
    valid.emplace_back(rows);
    for (size_t r = 0; r < rows; ++r) {
      keys.back()[r] = static_cast<int32_t>(rng() % 300);
      values.back()[r] = static_cast<int32_t>(rng() % 2000001) - 1000000;
      valid.back()[r] = rng() % 20 != 0;
    }
  }
  auto cpu = executor::make_cpu_engine();
  const auto expected = run_chunks(*cpu, keys, values, 300, false, "", 0, &valid).groups;
  ASSERT_EQ(expected.size(), 300u);
  auto gpu = make_gpu_engine(-1, GpuEngineOptions{0, uint64_t{256} << 20});
  ASSERT_NE(gpu, nullptr);
  const JoinedRun cold = run_chunks(*gpu, keys, values, 300, true, "", 0, &valid);
  EXPECT_EQ(cold.groups, expected);
  EXPECT_EQ(cold.launches, 8);
  const JoinedRun warm = run_chunks(*gpu, keys, values, 300, true, "", 0, &valid);
  EXPECT_EQ(warm.groups, expected);
  EXPECT_GE(warm.launches, 2);
  EXPECT_LE(warm.launches, 3);
  for (const char* v : {"shared_memory", "global", "sort", "partitioned"}) {
    const JoinedRun r = run_chunks(*gpu, keys, values, 300, true, v, 16, &valid);
    EXPECT_EQ(r.groups, expected) << v;
    EXPECT_LT(r.launches, 8) << v;
  }
}

#if TALLY_HAVE_CUDA
TEST_F(GpuColumnCache, PlacedColumnsAreAdjacentAndFreedWithTheirBlocks) {
  constexpr uint64_t kBytes = uint64_t{4} << 20;  // above the 2 MiB granularity
  const ColumnKey column{0x7a11e5, 0, 3, 4};
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  size_t free_before = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  std::vector<PlacedColumn> placed;
  // 1 + 2 + 4 + 8 + 16 + 16 + ... slots: blocks of one region, which holds
  // more than 64 columns of this size (a table of 2^20-row chunks is one
  // region: its 96 chunks' copies run in joined launches).
  constexpr int kColumns = 100;
  for (int i = 0; i < kColumns; ++i) {
    auto p = place_column(0, column, ColumnPart::values, kBytes);
    ASSERT_TRUE(p) << "column " << i;
    if (!placed.empty()) {
      EXPECT_EQ(static_cast<char*>(p->data), static_cast<char*>(placed.front().data) + i * kBytes) << "column " << i;
    }
    placed.push_back(std::move(*p));
  }
  // Writable device memory, every slot.
  for (const PlacedColumn& p : placed) ASSERT_EQ(cudaMemset(p.data, 0xab, kBytes), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  size_t free_held = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_held, &total), cudaSuccess);
  EXPECT_GE(free_before - free_held, kColumns * kBytes);
  // Every column gone: every block with them (the last block's untaken slots too).
  placed.clear();
  size_t free_after = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_GE(free_after + kBytes, free_before);
  // The next column starts a fresh block after the freed one's slots.
  auto next = place_column(0, column, ColumnPart::values, kBytes);
  ASSERT_TRUE(next);
  EXPECT_NE(next->data, nullptr);
}

TEST_F(GpuColumnCache, SmallPlacementsAreAdjacentAcrossBlocks) {
  // Validity bytes of 2^20-row chunks and an odd size (rounded up to 256):
  // below the 2 MiB granularity, so blocks hold several and a placement may
  // straddle two; each stays writable while only it is held.
  const ColumnKey column{0x7a11e6, 0, 3, 4};
  for (const uint64_t bytes : {uint64_t{1} << 20, uint64_t{300000}}) {
    const uint64_t step = (bytes + 255) / 256 * 256;
    std::vector<PlacedColumn> placed;
    for (int i = 0; i < 40; ++i) {
      auto p = place_column(0, ColumnKey{column.table + bytes, 0, 3, 4}, ColumnPart::validity, bytes);
      ASSERT_TRUE(p) << "column " << i;
      if (!placed.empty()) {
        EXPECT_EQ(static_cast<char*>(p->data), static_cast<char*>(placed.front().data) + i * step) << "column " << i;
      }
      placed.push_back(std::move(*p));
    }
    // Every other one dropped: the others' memory (straddling ones' both
    // blocks) stays mapped.
    for (size_t i = 0; i < placed.size(); i += 2) placed[i].backing.reset();
    for (size_t i = 1; i < placed.size(); i += 2) ASSERT_EQ(cudaMemset(placed[i].data, 0x5a, bytes), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
}
#endif

}  // namespace
}  // namespace tally::gpu::test
