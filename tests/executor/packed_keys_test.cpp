// Several GROUP BY key columns packed into one 64-bit code on the CPU engine
// (common/aggregate_engine.hpp: KeyPart) answer what the generic path
// answers, row for row, for every case of packed_key_cases.hpp; EXPLAIN
// ANALYZE names the key mode each case must take.
#include <gtest/gtest.h>

#include "tests/executor/packed_key_cases.hpp"

namespace tally::executor {
namespace {

using testing::packed_key_cases;
using testing::PackedKeyTables;

TEST(PackedKeys, CpuEngineAnswersAsTheGenericPath) {
  PackedKeyTables tables("tally-packed-keys");
  tables.create();
  for (const auto& c : packed_key_cases()) {
    const auto generic = tables.rows_on("generic", c.sql);
    const auto cpu = tables.rows_on("cpu", c.sql);
    EXPECT_EQ(cpu, generic) << c.sql;
    EXPECT_NE(tables.explain_on("cpu", c.sql).find("Group key: " + c.key_mode), std::string::npos)
        << c.sql << "\n" << tables.explain_on("cpu", c.sql);
  }
}

// The tables hold what the cases need: groups with NULL in some and in all
// key columns (so a wrong NULL grouping shows), and more than one chunk.
TEST(PackedKeys, TablesHoldNullAndAllNullKeys) {
  PackedKeyTables tables("tally-packed-keys-shape");
  tables.create();
  tables.run("SET tally.engine = generic");
  const auto all_null = tables.run("SELECT count(*) FROM h WHERE id1 IS NULL AND id2 IS NULL AND id4 IS NULL").rows;
  ASSERT_EQ(all_null.size(), 1u);
  EXPECT_GT(std::stoll(*all_null[0][0]), 0);
  const auto some_null = tables.run("SELECT count(*) FROM h WHERE id1 IS NULL AND id2 IS NOT NULL").rows;
  EXPECT_GT(std::stoll(*some_null[0][0]), 0);
  EXPECT_EQ(*tables.run("SELECT count(*) FROM h").rows[0][0], "15000");
}

}  // namespace
}  // namespace tally::executor
