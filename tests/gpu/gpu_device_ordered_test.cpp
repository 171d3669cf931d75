// Ordered-set aggregates and count(DISTINCT) kept and sorted on the device
// (gpu/engine/device_ordered_rows.hpp) against the CPU engine: int and float
// inputs, NULL keys and NULL values, groups whose every value is NULL, one
// group, 1e5 groups, and a second run over resident columns that reads no
// column on the host. Skips without a GPU. Alone: --gtest_filter='GpuDeviceOrdered.*'.
#include <gtest/gtest.h>

#include <string>

#include "common/engine_counters.hpp"
#include "gpu/rules/device_info.hpp"
#include "tests/executor/packed_key_cases.hpp"

namespace tally {
namespace {

using executor::testing::PackedKeyTables;

// Asserts that sql answers the same on both engines, that the GPU ran it and
// kept the ordered aggregates' rows on the device.
void expect_as_cpu(PackedKeyTables& tables, const std::string& sql) {
  const auto cpu = tables.rows_on("cpu", sql);
  const auto gpu = tables.rows_on("gpu", sql);
  EXPECT_EQ(gpu, cpu) << sql;
  const std::string plan = tables.explain_on("gpu", sql);
  EXPECT_NE(plan.find("Engine: gpu"), std::string::npos) << sql << "\n" << plan;
  EXPECT_NE(plan.find("rows kept on the device"), std::string::npos) << sql << "\n" << plan;
}

TEST(GpuDeviceOrdered, PercentilesModeDistinctAsTheCpuEngine) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  PackedKeyTables tables("tally-gpu-device-ordered");
  ASSERT_NE(tables.database().gpu_engine(), nullptr);
  tables.create();
  const char* queries[] = {
      // One int key with NULLs; int and float inputs with NULLs.
      "SELECT id4, percentile_cont(0.5) WITHIN GROUP (ORDER BY v), percentile_disc(0.25) WITHIN GROUP (ORDER BY f), "
      "mode() WITHIN GROUP (ORDER BY v), count(DISTINCT f), count(DISTINCT big), count(*) FROM h GROUP BY id4",
      // A packed key of two columns with NULLs, several percentiles of one input, DESC.
      "SELECT id4, id5, percentile_cont(0.5) WITHIN GROUP (ORDER BY f), percentile_cont(0.9) WITHIN GROUP (ORDER BY f DESC), "
      "percentile_disc(0.5) WITHIN GROUP (ORDER BY v), sum(v) FROM h GROUP BY id4, id5",
      // Groups whose every value is NULL: empty ordered sets.
      "SELECT id4, percentile_cont(0.5) WITHIN GROUP (ORDER BY f), mode() WITHIN GROUP (ORDER BY f), "
      "count(DISTINCT v), count(*) FROM h WHERE f IS NULL OR id4 = 1 GROUP BY id4",
      // One group.
      "SELECT percentile_cont(0.25) WITHIN GROUP (ORDER BY f), percentile_disc(0.75) WITHIN GROUP (ORDER BY big), "
      "count(DISTINCT v), min(v) FROM h",
      // No row.
      "SELECT id4, percentile_cont(0.5) WITHIN GROUP (ORDER BY v), count(DISTINCT v) FROM h WHERE false GROUP BY id4",
  };
  for (const char* sql : queries) expect_as_cpu(tables, sql);
}

// Percentiles alone read one or two values per group: the device picks them
// after its sort, or selects them where the keys are few
// (gpu/engine/ordered_select.cuh), and copies back only those
// (common/ordered_pick.hpp's OrderedPick). Fractions at the ends and
// between, ASC and DESC, cont and disc, int and float inputs, NULL keys, a
// NULL fraction, one group.
TEST(GpuDeviceOrdered, PickedPercentilesAsTheCpuEngine) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  PackedKeyTables tables("tally-gpu-device-picked");
  ASSERT_NE(tables.database().gpu_engine(), nullptr);
  tables.create();
  const char* queries[] = {
      "SELECT id4, percentile_cont(0) WITHIN GROUP (ORDER BY f), percentile_cont(1) WITHIN GROUP (ORDER BY f), "
      "percentile_cont(0.37) WITHIN GROUP (ORDER BY f DESC), percentile_disc(0.999) WITHIN GROUP (ORDER BY v DESC), "
      "percentile_disc(0) WITHIN GROUP (ORDER BY big), stddev(v) FROM h GROUP BY id4",
      "SELECT id4, id5, percentile_cont(0.5) WITHIN GROUP (ORDER BY v), percentile_disc(0.5) WITHIN GROUP (ORDER BY f) "
      "FROM h GROUP BY id4, id5",
      "SELECT percentile_cont(0.9) WITHIN GROUP (ORDER BY f), percentile_disc(0.1) WITHIN GROUP (ORDER BY v) FROM h",
      "SELECT id4, percentile_cont(NULL) WITHIN GROUP (ORDER BY f), percentile_disc(0.5) WITHIN GROUP (ORDER BY v) "
      "FROM h GROUP BY id4",
  };
  for (const char* sql : queries) expect_as_cpu(tables, sql);
  const std::string plan = tables.explain_on("gpu", queries[0]);
  EXPECT_NE(plan.find("picked on the device"), std::string::npos) << plan;
  // Two packed key columns: few keys, so the percentiles are selected, not sorted.
  const std::string packed = tables.explain_on("gpu", queries[1]);
  EXPECT_NE(packed.find("selected by value buckets"), std::string::npos) << packed;
}

// FILTER (WHERE ...) aggregates on the GPU engine (the mask folded into each
// aggregate's input validity), percentiles with a FILTER on the device
// collector, against the CPU engine; count(*) FILTER stays on the CPU.
TEST(GpuDeviceOrdered, FilterAggregatesAsTheCpuEngine) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  PackedKeyTables tables("tally-gpu-filter");
  ASSERT_NE(tables.database().gpu_engine(), nullptr);
  tables.create();
  const char* queries[] = {
      "SELECT id4, sum(v) FILTER (WHERE f > 50), count(v) FILTER (WHERE id5 = 101), avg(big) FILTER (WHERE v < 5), "
      "min(f) FILTER (WHERE v IS NULL), max(v), count(*) FROM h GROUP BY id4",
      // (Exact moments only: float sums differ in their last digits between
      // the engines' summation orders.)
      "SELECT id4, id5, stddev(v) FILTER (WHERE f > 20), var_pop(s) FILTER (WHERE big >= 0), sum(s) FROM h GROUP BY id4, id5",
      "SELECT id4, percentile_cont(0.5) WITHIN GROUP (ORDER BY f) FILTER (WHERE v > 3), sum(v) FILTER (WHERE false) "
      "FROM h GROUP BY id4",
  };
  for (const char* sql : queries) {
    const auto cpu = tables.rows_on("cpu", sql);
    const auto gpu = tables.rows_on("gpu", sql);
    EXPECT_EQ(gpu, cpu) << sql;
    const std::string plan = tables.explain_on("gpu", sql);
    EXPECT_NE(plan.find("Engine: gpu"), std::string::npos) << sql << "\n" << plan;
  }
  const std::string star = "SELECT id4, count(*) FILTER (WHERE v > 2) FROM h GROUP BY id4";
  EXPECT_EQ(tables.rows_on("gpu", star), tables.rows_on("cpu", star));
  EXPECT_NE(tables.explain_on("gpu", star).find("count(*) has a FILTER"), std::string::npos);
}

TEST(GpuDeviceOrdered, ManyGroupsAndResidentColumns) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  PackedKeyTables tables("tally-gpu-device-ordered-many");
  ASSERT_NE(tables.database().gpu_engine(), nullptr);
  tables.run("CREATE TABLE m (k int, j int, v int, f float8)");
  // 2e5 rows, 1e5 groups of k (two rows each), some values NULL.
  for (int batch = 0; batch < 40; ++batch) {
    std::string insert = "INSERT INTO m VALUES ";
    for (int i = 0; i < 5000; ++i) {
      const int r = batch * 5000 + i;
      insert += std::string(i ? ", " : "") + "(" + std::to_string(r % 100000) + ", " + std::to_string(r % 7) + ", " +
                (r % 13 == 0 ? std::string("NULL") : std::to_string((r * 7919) % 1000 - 500)) + ", " +
                (r % 17 == 0 ? std::string("NULL") : std::to_string(((r * 104729) % 10007) / 16.0)) + ")";
    }
    tables.run(insert);
  }
  const std::string q6 =
      "SELECT k, percentile_cont(0.5) WITHIN GROUP (ORDER BY f) AS median_f, stddev(f) AS sd_f, "
      "count(DISTINCT v) FROM m GROUP BY k";
  expect_as_cpu(tables, q6);
  expect_as_cpu(tables,
                "SELECT j, k % 10 AS k10, percentile_disc(0.5) WITHIN GROUP (ORDER BY v) FROM m GROUP BY j, k % 10");
  // (stddev of floats over 2e5 rows differs in the last digits between the
  // engines' summation orders, so none here.)
  expect_as_cpu(tables, "SELECT j, percentile_cont(0.5) WITHIN GROUP (ORDER BY f), count(f) FROM m GROUP BY j");
  // A second run finds its columns resident (the first one cached them):
  // the ordered aggregates' rows are kept without reading a column on the host.
  const std::string plan = tables.explain_on("gpu", q6);
  EXPECT_NE(plan.find("Host reads: 0 of"), std::string::npos) << plan;
}

// A top-n per partition whose rows are the partition keys, the ORDER BY
// column and the row numbers runs as an aggregation with one pick per rank
// (executor/top_n_groups.hpp): on the GPU each key's few best values are
// kept in a device table (up to 8 ranks) or its values sorted by (key,
// value) on the device. Against the CPU engine's own top-n: int, packed and
// text keys with NULLs, int and float orders with NULLs, ASC and DESC, NULLS
// FIRST and LAST, k = 1, 2 and 16, a WHERE, an empty input. With a device
// table the groups are its keys: it counts the rows without a value too,
// and no GPU run goes beside it, so a WHERE's error is the table's to raise.
TEST(GpuDeviceOrdered, TopNPerPartitionAsTheCpuEngine) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  PackedKeyTables tables("tally-gpu-device-top-n");
  ASSERT_NE(tables.database().gpu_engine(), nullptr);
  tables.create();
  const char* queries[] = {
      "SELECT id4, f, rn FROM (SELECT id4, f, row_number() OVER (PARTITION BY id4 ORDER BY f DESC) AS rn FROM h "
      "WHERE f IS NOT NULL) s WHERE rn <= 2",
      "SELECT id4, f, rn FROM (SELECT id4, f, row_number() OVER (PARTITION BY id4 ORDER BY f DESC) AS rn FROM h) s "
      "WHERE rn <= 2",
      "SELECT id4, id5, v, rn FROM (SELECT id4, id5, v, row_number() OVER (PARTITION BY id4, id5 ORDER BY v NULLS FIRST) "
      "AS rn FROM h) s WHERE rn <= 16",
      "SELECT id3, big, rn FROM (SELECT id3, big, row_number() OVER (PARTITION BY id3 ORDER BY big DESC NULLS LAST) AS rn "
      "FROM h WHERE v > 3) s WHERE rn = 1",
      "SELECT u, f FROM (SELECT u, f, row_number() OVER (PARTITION BY u ORDER BY f) AS rn FROM h) s WHERE rn < 3",
      "SELECT id4, v FROM (SELECT id4, v, row_number() OVER (PARTITION BY id4 ORDER BY v) AS rn FROM h WHERE false) s "
      "WHERE rn <= 2",
  };
  for (const char* sql : queries) {
    const uint64_t gpu_runs = engine_counters().gpu_aggregations.load();
    const auto on_gpu = tables.rows_on("gpu", sql);
    // The aggregation runs inside the derived table, whose EXPLAIN ANALYZE
    // lines are not shown: the engine counters say where it ran.
    EXPECT_GT(engine_counters().gpu_aggregations.load(), gpu_runs) << sql;
    EXPECT_EQ(on_gpu, tables.rows_on("cpu", sql)) << sql;
    const std::string plan = tables.explain_on("gpu", sql);
    EXPECT_NE(plan.find("Top-N by groups"), std::string::npos) << sql << "\n" << plan;
    // Up to 8 ranks: each key's count and best codes in a device table, no
    // sort (gpu/engine/top_codes_table.cuh); 16 ranks: the picks, here over
    // a packed 7-bit key, so selected by value buckets instead of sorted
    // (gpu/engine/ordered_select.cuh). (No row: nothing reaches the device.)
    const std::string text = sql;
    if (text.find("WHERE false") != std::string::npos) continue;
    const bool table = text.find("rn <= 16") == std::string::npos;
    EXPECT_NE(plan.find(table ? "best codes kept on the device" : "selected by value buckets"), std::string::npos)
        << sql << "\n" << plan;
    if (table) EXPECT_NE(plan.find("counts of rows and values"), std::string::npos) << sql << "\n" << plan;
    // id4's statistics bound its keys to a short range: one direct entry per key.
    if (text.find("PARTITION BY id4 ORDER BY f") != std::string::npos) {
      EXPECT_NE(plan.find("a direct entry per key of the range"), std::string::npos) << sql << "\n" << plan;
    }
  }
  const std::string divides =
      "SELECT id4, f FROM (SELECT id4, f, row_number() OVER (PARTITION BY id4 ORDER BY f DESC) AS rn FROM h "
      "WHERE 10 / (v - 3) > 0) s WHERE rn <= 2";
  const executor::testing::QueryOutcome cpu = tables.outcome_on("cpu", divides);
  const executor::testing::QueryOutcome gpu = tables.outcome_on("gpu", divides);
  EXPECT_EQ(cpu.sqlstate, "22012");
  EXPECT_EQ(gpu.sqlstate, cpu.sqlstate) << gpu.message;
}

// count(DISTINCT) alone in its slot is counted on the device after the sort
// (one number per key comes back, not every value). A statement whose
// aggregates are all count(DISTINCT) of one column is, on the CPU engine,
// rewritten as a grouping of (keys, value) and a count; with the GPU it
// runs as written (SelectPlan::distinct_rows_form). Against the CPU engine:
// int and float values with -0 beside 0, NaN, NULLs, NULL keys, a key
// whose values are all NULL, a WHERE, a global count, ORDER BY ... LIMIT,
// and a count(DISTINCT) beside other aggregates.
TEST(GpuDeviceOrdered, DistinctCountedOnTheDevice) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  PackedKeyTables tables("tally-gpu-device-distinct");
  ASSERT_NE(tables.database().gpu_engine(), nullptr);
  tables.run("CREATE TABLE d (k int, j int, u int8, f float8)");
  const char* specials[] = {"'-0'", "0", "'NaN'", "'-Infinity'", "NULL"};
  for (int batch = 0; batch < 10; ++batch) {
    std::string insert = "INSERT INTO d VALUES ";
    for (int i = 0; i < 3000; ++i) {
      const int r = batch * 3000 + i;
      const std::string key = r % 97 == 0 ? "NULL" : std::to_string(r % 300);
      const std::string u = r % 300 == 7 || r % 11 == 0 ? "NULL" : std::to_string((r * 7919LL) % 5000 - 2500);
      const std::string f = r % 5 == 0 ? specials[(r / 5) % 5] : std::to_string(((r * 104729) % 997) / 4.0);
      insert += std::string(i ? ", " : "") + "(" + key + ", " + std::to_string(r % 7) + ", " + u + ", " + f + ")";
    }
    tables.run(insert);
  }
  const char* queries[] = {
      "SELECT k, count(DISTINCT u) FROM d GROUP BY k",
      "SELECT k, count(DISTINCT f) AS n FROM d GROUP BY k ORDER BY n DESC, k LIMIT 7",
      "SELECT k, j, count(DISTINCT f) FROM d WHERE j <> 3 GROUP BY k, j",
      "SELECT count(DISTINCT f), count(DISTINCT f) FROM d",
      "SELECT count(DISTINCT u) FROM d WHERE k IS NULL",
      "SELECT k, count(*), count(DISTINCT f), sum(u) FROM d GROUP BY k",
      "SELECT k, count(DISTINCT u) FROM d WHERE f > 100 AND j IN (1, 2, 5) GROUP BY k",
      "SELECT k, percentile_cont(0.5) WITHIN GROUP (ORDER BY f), count(DISTINCT u) FROM d WHERE j <> 2 GROUP BY k",
  };
  for (const char* sql : queries) {
    expect_as_cpu(tables, sql);
    const std::string plan = tables.explain_on("gpu", sql);
    EXPECT_NE(plan.find("distinct values counted on the device"), std::string::npos) << sql << "\n" << plan;
  }
  // A WHERE beside them is evaluated on the device over the resident
  // columns (the raw path), for the collector's rows as for the GPU run's.
  for (const char* sql : {queries[2], queries[6], queries[7]}) {
    const std::string plan = tables.explain_on("gpu", sql);
    EXPECT_NE(plan.find("Filter on GPU engine"), std::string::npos) << sql << "\n" << plan;
    EXPECT_NE(plan.find("Host reads: 0 of"), std::string::npos) << sql << "\n" << plan;
  }
  // The CPU engine runs the rewrite: no ordered rows kept.
  const std::string cpu_plan = tables.explain_on("cpu", queries[0]);
  EXPECT_EQ(cpu_plan.find("Ordered-set and DISTINCT"), std::string::npos) << cpu_plan;
}

}  // namespace
}  // namespace tally
