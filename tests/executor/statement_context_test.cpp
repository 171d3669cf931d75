// Plans run below a statement's expressions (subqueries) take the
// statement's engine settings (executor/statement_context.hpp): the
// outermost run_select's context, on the thread that runs it.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "executor/statement_context.hpp"

namespace tally::executor {
namespace {

ExecContext statement_settings() {
  ExecContext statement;
  statement.engine = "cpu";
  statement.lookup_joins = "off";
  statement.variant = "dense";
  statement.launch_config = "tpb=128";
  statement.jit = false;
  statement.memory_budget = 12345;
  statement.threads = 3;
  return statement;
}

TEST(StatementContext, ANestedPlanTakesTheStatementsEngineSettings) {
  const std::vector<Value> parameters{Value{int64_t{7}}};
  const ExecContext statement = statement_settings();
  const StatementContextScope scope(statement);
  const ExecContext nested = nested_context(&parameters);
  EXPECT_EQ(nested.parameters, &parameters);
  EXPECT_EQ(nested.engine, "cpu");
  EXPECT_EQ(nested.lookup_joins, "off");
  EXPECT_EQ(nested.variant, "dense");
  EXPECT_EQ(nested.launch_config, "tpb=128");
  EXPECT_FALSE(nested.jit);
  EXPECT_EQ(nested.memory_budget, 12345u);
  // Its own run's choices stay its own: threads, EXPLAIN, key tests.
  EXPECT_EQ(nested.threads, 1);
  EXPECT_EQ(nested.explain, nullptr);
}

TEST(StatementContext, TheOutermostStatementStaysInstalled) {
  const ExecContext statement = statement_settings();
  {
    const StatementContextScope outer(statement);
    ExecContext subquery;  // a nested run_select's own context
    subquery.engine = "generic";
    {
      const StatementContextScope inner(subquery);
      EXPECT_EQ(current_statement_context(), &statement);
      EXPECT_EQ(nested_context(nullptr).engine, "cpu");
    }
    EXPECT_EQ(current_statement_context(), &statement);
  }
  EXPECT_EQ(current_statement_context(), nullptr);
}

TEST(StatementContext, WithoutAStatementANestedPlanRunsWithTheDefaults) {
  const ExecContext statement = statement_settings();
  const StatementContextScope scope(statement);
  // Another thread (a pool worker) has no statement installed.
  ExecContext elsewhere = statement;
  std::thread([&] { elsewhere = nested_context(nullptr); }).join();
  EXPECT_EQ(elsewhere.engine, "auto");
  EXPECT_EQ(elsewhere.lookup_joins, "auto");
  EXPECT_TRUE(elsewhere.jit);
  EXPECT_EQ(elsewhere.memory_budget, 0u);
}

}  // namespace
}  // namespace tally::executor
