// HAVING conjuncts as filters on partial states (executor/having_filter.hpp):
// which conjuncts become filters, exact comparisons across scales, and,
// through the CPU engine, that the groups it drops are gone before their
// columns are built while the answer stays that of the generic path.
#include <gtest/gtest.h>

#include <random>

#include "executor/having_filter.hpp"
#include "tests/executor/column_fixture.hpp"
#include "tests/executor/select_runner.hpp"

namespace tally::executor {
namespace {

ExprPtr column_ref(TypeId type, int index) { return std::make_unique<ColumnExpr>(SqlType{type}, index); }
ExprPtr int_constant(int64_t v) { return std::make_unique<ConstExpr>(SqlType{TypeId::int4}, Value{v}); }
ExprPtr compare(const std::string& op, ExprPtr a, ExprPtr b) {
  std::vector<ExprPtr> args;
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  return std::make_unique<FunctionExpr>(SqlType{TypeId::boolean}, op, std::move(args), nullptr);
}

TEST(HavingFilter, TakesAggregateComparisonsWithConstantsFromAConjunction) {
  // Over [key, count, sum]: count > 5 AND 7 >= sum AND key = 3 AND sum < count.
  std::vector<ExprPtr> conjuncts;
  conjuncts.push_back(compare(">", column_ref(TypeId::int8, 1), int_constant(5)));
  conjuncts.push_back(compare(">=", int_constant(7), column_ref(TypeId::int8, 2)));
  conjuncts.push_back(compare("=", column_ref(TypeId::int4, 0), int_constant(3)));  // a key: not a filter
  conjuncts.push_back(compare("<", column_ref(TypeId::int8, 2), column_ref(TypeId::int8, 1)));
  const BoolExpr both(BoolOp::and_, std::move(conjuncts));
  const auto filter = having_group_filter(both, 1, 2, nullptr);
  ASSERT_EQ(filter.size(), 2u);
  EXPECT_EQ(filter[0].aggregate, 0u);
  EXPECT_EQ(filter[0].op, ">");
  EXPECT_EQ(static_cast<int64_t>(filter[0].constant.mantissa), 5);
  EXPECT_EQ(filter[1].aggregate, 1u);
  EXPECT_EQ(filter[1].op, "<=");  // mirrored: the aggregate on the left
  // An OR decides nothing alone.
  std::vector<ExprPtr> either;
  either.push_back(compare(">", column_ref(TypeId::int8, 1), int_constant(5)));
  either.push_back(compare("<", column_ref(TypeId::int8, 2), int_constant(0)));
  EXPECT_TRUE(having_group_filter(BoolExpr(BoolOp::or_, std::move(either)), 1, 2, nullptr).empty());
}

TEST(HavingFilter, ComparesExactlyAcrossScales) {
  GroupFilter f{0, ">", Numeric{30000, 2}};  // > 300.00
  const ScaledGroupTest at_scale_2 = scaled_group_test(f, 2);
  EXPECT_FALSE(at_scale_2.passes(30000));
  EXPECT_TRUE(at_scale_2.passes(30001));
  const ScaledGroupTest at_scale_0 = scaled_group_test(f, 0);  // the constant has more decimals than the values
  EXPECT_FALSE(at_scale_0.passes(300));
  EXPECT_TRUE(at_scale_0.passes(301));
  const ScaledGroupTest at_scale_4 = scaled_group_test(GroupFilter{0, "<=", Numeric{-10005, 1}}, 4);  // <= -1000.5
  EXPECT_TRUE(at_scale_4.passes(-10005000));
  EXPECT_FALSE(at_scale_4.passes(-10004999));
  // A constant beyond 128 bits at the values' scale: nothing is dropped.
  const ScaledGroupTest far = scaled_group_test(GroupFilter{0, "=", Numeric{static_cast<__int128>(1) << 120, 0}}, 18);
  EXPECT_TRUE(far.passes(0));
  const ScaledGroupTest ne = scaled_group_test(GroupFilter{0, "<>", Numeric{7, 0}}, 0);
  EXPECT_FALSE(ne.passes(7));
  EXPECT_TRUE(ne.passes(8));
}

std::shared_ptr<MemoryTable> grouped_table() {
  auto table = std::make_shared<MemoryTable>(
      "t", std::vector<TableColumn>{{"k", {TypeId::int4}}, {"n", SqlType::numeric(9, 2)}, {"b", {TypeId::int8}}}, 5151);
  std::mt19937_64 rng(3);
  std::vector<int32_t> k;
  std::vector<int64_t> n, b;
  std::vector<uint8_t> n_valid, all;
  for (int r = 0; r < 20000; ++r) {
    k.push_back(static_cast<int32_t>(rng() % 2000));
    n.push_back(static_cast<int64_t>(rng() % 10001));  // 0.00 .. 100.00
    n_valid.push_back(rng() % 6 != 0);
    b.push_back(static_cast<int64_t>(rng() % 2001) - 1000);
    all.push_back(1);
  }
  auto batch = std::make_shared<storage::ChunkBatch>();
  batch->rows = k.size();
  batch->columns.push_back(testing::column(TypeId::int4, k, all));
  batch->columns.push_back(testing::column(TypeId::numeric, n, n_valid));
  batch->columns.back().type = SqlType::numeric(9, 2);
  batch->columns.push_back(testing::column(TypeId::int8, b, all));
  table->append(batch);
  return table;
}

testing::EngineAnswer ask(const std::string& sql, MemoryTableProvider& tables, const std::string& engine) {
  testing::EngineAnswer a = testing::run_with_engine(sql, tables, engine);
  std::sort(a.rows.begin(), a.rows.end());
  return a;
}

TEST(HavingFilter, TheEngineDropsGroupsBeforeTheirColumnsAndAnswersAsTheGenericPath) {
  MemoryTableProvider tables;
  tables.put(grouped_table());
  for (const std::string sql : {"SELECT k, sum(n) FROM t GROUP BY k HAVING sum(n) > 700.5",
                                "SELECT k, count(*) FROM t GROUP BY k HAVING count(n) < 6 AND max(b) >= 900",
                                "SELECT k FROM t GROUP BY k HAVING sum(b) <= -2500 AND min(n) > 1"}) {
    const testing::EngineAnswer cpu = ask(sql, tables, "cpu");
    const testing::EngineAnswer generic = ask(sql, tables, "generic");
    EXPECT_EQ(cpu.rows, generic.rows) << sql;
    EXPECT_GT(cpu.rows.size(), 3u) << sql;  // some groups kept: HAVING decides them
    const bool dropped = std::any_of(cpu.explain.begin(), cpu.explain.end(), [](const std::string& line) {
      return line.find("HAVING on partial states") != std::string::npos;
    });
    EXPECT_TRUE(dropped) << sql;
    EXPECT_NE(std::find(cpu.explain.begin(), cpu.explain.end(), "Actual groups: 2000"), cpu.explain.end()) << sql;
  }
}

}  // namespace
}  // namespace tally::executor
