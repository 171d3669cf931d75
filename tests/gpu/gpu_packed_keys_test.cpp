// Several GROUP BY key columns packed on the device (gpu/pipeline/
// key_packing.hpp) answer what the CPU engine answers, for every case of
// tests/executor/packed_key_cases.hpp, cold (columns copied) and warm (key
// columns resident in the device column cache); the cases the GPU engine
// takes run there (EXPLAIN ANALYZE says so) with the key mode each case
// names; once resident, no column is read on the host. Skips without a GPU.
#include <gtest/gtest.h>

#include "gpu/rules/device_info.hpp"
#include "tests/executor/packed_key_cases.hpp"

namespace tally {
namespace {

using executor::testing::packed_key_cases;
using executor::testing::PackedKeyTables;

TEST(GpuPackedKeys, GpuEngineAnswersAsTheCpuEngine) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  PackedKeyTables tables("tally-gpu-packed-keys");
  ASSERT_NE(tables.database().gpu_engine(), nullptr) << "a device exists but the database has no GPU engine";
  tables.create();
  for (const auto& c : packed_key_cases()) {
    const auto cpu = tables.rows_on("cpu", c.sql);
    const auto cold = tables.rows_on("gpu", c.sql);
    const auto warm = tables.rows_on("gpu", c.sql);
    EXPECT_EQ(cold, cpu) << "cold: " << c.sql;
    EXPECT_EQ(warm, cpu) << "warm: " << c.sql;
    const std::string plan = tables.explain_on("gpu", c.sql);
    EXPECT_NE(plan.find("Group key: " + c.key_mode), std::string::npos) << c.sql << "\n" << plan;
    if (c.gpu_runs) EXPECT_NE(plan.find("Engine: gpu"), std::string::npos) << c.sql << "\n" << plan;
    // Raw chunks whose columns the earlier runs left resident are not read
    // on the host at all (AggregationRun::hold). Ordered-set aggregates by a
    // key tuple are the exception: their tuple ids and values are made on
    // the host (executor/cpu/tuple_key_run.hpp).
    const size_t reads = plan.find("Host reads: ");
    const bool host_tuple = c.key_mode.rfind("tuple", 0) == 0 && c.sql.find("WITHIN GROUP") != std::string::npos;
    if (reads != std::string::npos && !host_tuple) {
      EXPECT_EQ(plan.compare(reads, 15, "Host reads: 0 o"), 0) << c.sql << "\n" << plan;
    }
  }
}

// Every forced variant over a packed key (dense from the packed range, the
// hash variants otherwise) against the CPU engine.
// (GpuPackedKeys.EveryVariantOverTupleKeys below: the same over key tuples.)
TEST(GpuPackedKeys, EveryVariantOverPackedKeys) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  PackedKeyTables tables("tally-gpu-packed-variants");
  tables.create();
  // A packed range of 9 bits: small enough for the dense variant's shared slots.
  const std::string sql = "SELECT id2, b, s, count(*), sum(v), min(v), max(big) FROM h GROUP BY id2, b, s";
  const auto cpu = tables.rows_on("cpu", sql);
  for (const char* variant : {"dense", "shared_memory", "global", "sort", "partitioned"}) {
    tables.run(std::string("SET tally.variant = ") + variant);
    const auto gpu = tables.rows_on("gpu", sql);
    EXPECT_EQ(gpu, cpu) << variant;
  }
}

// The group estimate EXPLAIN ANALYZE prints ("Estimated groups: N ...").
uint64_t estimated_groups(const std::string& plan) {
  const auto at = plan.find("Estimated groups: ");
  return at == std::string::npos ? 0 : std::stoull(plan.substr(at + 18));
}

// Every forced hash variant over key tuples (device tuple ids, no range for
// the dense variant) against the CPU engine: with NULLs and text columns,
// many groups, and one group (whose tuple table starts too small and grows).
TEST(GpuPackedKeys, EveryVariantOverTupleKeys) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  PackedKeyTables tables("tally-gpu-tuple-variants");
  tables.create();
  const std::vector<std::string> queries = {
      "SELECT u, id1, count(*), sum(v), min(v), max(big) FROM h GROUP BY u, id1",
      "SELECT w63, id2, s, b, count(*), sum(v) FROM h GROUP BY w63, id2, s, b",
      "SELECT b2, w63, count(*), sum(v) FROM h WHERE w63 = 0 AND b2 GROUP BY b2, w63",  // one group
      // A text column without NULLs (its 32-bit codes taken as they come
      // back) and HAVING's cut of the groups' arrays; w63 beside u keeps the
      // key a tuple (u with c2 alone packs: c2's one value takes 0 bits).
      "SELECT u, c2, w63, count(*), sum(v) FROM h GROUP BY u, c2, w63 HAVING count(*) > 1",
      // The top groups cut before the key columns are built.
      "SELECT id1, u, sum(v) FROM h GROUP BY id1, u ORDER BY sum(v) DESC NULLS LAST, id1, u LIMIT 7",
  };
  for (const std::string& sql : queries) {
    const auto cpu = tables.rows_on("cpu", sql);
    for (const char* variant : {"shared_memory", "global", "sort", "partitioned"}) {
      tables.run(std::string("SET tally.variant = ") + variant);
      const auto gpu = tables.rows_on("gpu", sql);
      EXPECT_EQ(gpu, cpu) << variant << ": " << sql;
      const std::string plan = tables.explain_on("gpu", sql);
      EXPECT_NE(plan.find("Group key: tuple of"), std::string::npos) << sql << "\n" << plan;
      EXPECT_NE(plan.find("GPU: key tuples: "), std::string::npos) << sql << "\n" << plan;
      // The one-group query: when its estimate makes a table smaller than a
      // chunk's rows, the table must have grown (and lost nothing: the rows
      // above). An estimate of the whole table's rows starts it big enough.
      if (sql.find("WHERE w63 = 0") != std::string::npos && estimated_groups(plan) < 5000)
        EXPECT_EQ(plan.find("table grown 0 times"), std::string::npos) << sql << "\n" << plan;
    }
    tables.run("RESET tally.variant");
  }
}

}  // namespace
}  // namespace tally
