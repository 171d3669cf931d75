// ORDER BY ... LIMIT over a GROUP BY (GroupAggregator::set_top_groups): the
// CPU engine keeps only the groups that can be among the first rows before it
// builds their aggregates (sort keys: key columns, counts, exact sums, min
// and max), and answers, in order, as the generic path does; sort keys it
// cannot read from partial states (an avg, an expression) leave every group.
#include <gtest/gtest.h>

#include <random>

#include "tests/executor/column_fixture.hpp"
#include "tests/executor/select_runner.hpp"

namespace tally::executor {
namespace {

std::shared_ptr<MemoryTable> grouped_table() {
  auto table = std::make_shared<MemoryTable>(
      "t", std::vector<TableColumn>{{"k", {TypeId::int4}}, {"w", {TypeId::int8}}, {"n", SqlType::numeric(9, 2)}}, 5152);
  std::mt19937_64 rng(5);
  std::vector<int32_t> k;
  std::vector<int64_t> w, n;
  std::vector<uint8_t> k_valid, n_valid, all;
  for (int r = 0; r < 40000; ++r) {
    k.push_back(static_cast<int32_t>(rng() % 9000));
    k_valid.push_back(rng() % 97 != 0);
    // A key tuple's column: bigints too wide to pack beside k.
    w.push_back(static_cast<int64_t>(rng() % 3) * 4000000000000000000LL + static_cast<int64_t>(rng() % 2));
    n.push_back(static_cast<int64_t>(rng() % 10001));
    n_valid.push_back(rng() % 5 != 0);
    all.push_back(1);
  }
  auto batch = std::make_shared<storage::ChunkBatch>();
  batch->rows = k.size();
  batch->columns.push_back(testing::column(TypeId::int4, k, k_valid));
  batch->columns.push_back(testing::column(TypeId::int8, w, all));
  batch->columns.push_back(testing::column(TypeId::numeric, n, n_valid));
  batch->columns.back().type = SqlType::numeric(9, 2);
  table->append(batch);
  return table;
}

bool cut(const testing::EngineAnswer& a) {
  return std::any_of(a.explain.begin(), a.explain.end(), [](const std::string& line) {
    return line.find("on partial states") != std::string::npos && line.find("ORDER BY") != std::string::npos;
  });
}

TEST(TopGroups, TheEngineBuildsTheAggregatesOfTheFirstGroupsOnlyAndAnswersAsTheGenericPath) {
  MemoryTableProvider tables;
  tables.put(grouped_table());
  for (const std::string sql : {"SELECT k, count(*) AS c, avg(n), sum(n) FROM t GROUP BY k ORDER BY c DESC, k LIMIT 7",
                                "SELECT k, count(n) AS c, avg(n) FROM t GROUP BY k ORDER BY c, k DESC NULLS FIRST LIMIT 5 OFFSET 3",
                                "SELECT k, w, count(*) AS c, max(n) FROM t GROUP BY k, w ORDER BY c DESC, k, w DESC LIMIT 6",
                                "SELECT k, avg(n) FROM t GROUP BY k ORDER BY k NULLS FIRST LIMIT 4",
                                "SELECT k, sum(n) AS s FROM t GROUP BY k ORDER BY s DESC NULLS LAST, k LIMIT 5",
                                "SELECT k, w, min(n) AS m, count(*) FROM t GROUP BY k, w ORDER BY m NULLS FIRST, k, w LIMIT 5",
                                "SELECT k, max(w) AS m, avg(n) FROM t GROUP BY k ORDER BY m, k DESC LIMIT 5",
                                // Sorted by aggregates alone (no tie among the first rows of
                                // this table): the keys are built for the groups kept only.
                                "SELECT k, w, sum(n) AS s FROM t GROUP BY k, w ORDER BY s DESC NULLS LAST LIMIT 5",
                                "SELECT k, count(*), sum(n) AS s FROM t GROUP BY k ORDER BY s DESC NULLS LAST LIMIT 4"}) {
    const testing::EngineAnswer cpu = testing::run_with_engine(sql, tables, "cpu");
    const testing::EngineAnswer generic = testing::run_with_engine(sql, tables, "generic");
    EXPECT_EQ(cpu.rows, generic.rows) << sql;
    EXPECT_GE(cpu.rows.size(), 4u) << sql;
    EXPECT_TRUE(cut(cpu)) << sql;
    // The groups dropped still count as the aggregation's groups.
    const bool all_groups = std::any_of(cpu.explain.begin(), cpu.explain.end(), [](const std::string& line) {
      return line.rfind("Actual groups: ", 0) == 0 && std::stoul(line.substr(15)) > 8000;
    });
    EXPECT_TRUE(all_groups) << sql;
  }
}

TEST(TopGroups, SortKeysItCannotReadFromPartialStatesKeepEveryGroup) {
  MemoryTableProvider tables;
  tables.put(grouped_table());
  for (const std::string sql : {"SELECT k, avg(n) AS m FROM t GROUP BY k ORDER BY m DESC NULLS LAST, k LIMIT 5",
                                "SELECT k, count(*) AS c FROM t GROUP BY k ORDER BY count(*) * 2 - k, k LIMIT 5",
                                "SELECT k, count(*) AS c FROM t GROUP BY k HAVING avg(n) > 50 ORDER BY c DESC, k LIMIT 5"}) {
    const testing::EngineAnswer cpu = testing::run_with_engine(sql, tables, "cpu");
    const testing::EngineAnswer generic = testing::run_with_engine(sql, tables, "generic");
    EXPECT_EQ(cpu.rows, generic.rows) << sql;
    EXPECT_FALSE(cut(cpu)) << sql;
  }
}

}  // namespace
}  // namespace tally::executor
