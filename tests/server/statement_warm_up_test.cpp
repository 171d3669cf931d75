// tallyd's start-up preparation: every representative statement parses, plans
// and runs (a statement shape the planner stops taking must fail here, not
// silently warm nothing), it needs no Database (so it cannot touch a catalog,
// a tuning cache or a session), and a second preparation finds its texts in
// the parse cache, as the first client's statements will.
#include <gtest/gtest.h>

#include "executor/parser.hpp"
#include "server/statement_warm_up.hpp"

namespace tally::server {
namespace {

TEST(StatementWarmUp, EveryStatementRunsAndTheSecondPassHitsTheParseCache) {
  const auto first = warm_up_statement_path();
  EXPECT_EQ(first.failed, 0u);
  EXPECT_GE(first.statements, 5u);
  EXPECT_GT(first.micros, 0.0);

  const auto before = executor::parse_cache_stats();
  const auto second = warm_up_statement_path();
  const auto after = executor::parse_cache_stats();
  EXPECT_EQ(second.failed, 0u);
  EXPECT_EQ(second.statements, first.statements);
  EXPECT_EQ(after.hits - before.hits, second.statements);
  EXPECT_EQ(after.misses, before.misses);
}

}  // namespace
}  // namespace tally::server
