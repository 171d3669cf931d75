#include <gtest/gtest.h>

#include "common/error.hpp"
#include "executor/parser.hpp"

namespace tally::executor {
namespace {

TEST(Parser, SplitsStatementsAndNamesNodeTypes) {
  auto statements = parse_sql("SELECT 1; CREATE TABLE t (a int)");
  ASSERT_EQ(statements.size(), 2u);
  EXPECT_EQ(statements[0].type(), "SelectStmt");
  EXPECT_EQ(statements[1].type(), "CreateStmt");
  EXPECT_EQ(statements[1].body()["relation"]["relname"], "t");
}

TEST(Parser, EmptyQueryHasNoStatements) {
  EXPECT_TRUE(parse_sql("").empty());
  EXPECT_TRUE(parse_sql("  -- only a comment\n").empty());
}

TEST(Parser, SyntaxErrorCarries42601AndPosition) {
  try {
    parse_sql("SELECT * FORM t");
    FAIL() << "expected a syntax error";
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::syntax_error);
    EXPECT_EQ(std::string(e.what()), "syntax error at or near \"FORM\"");
    EXPECT_EQ(e.position(), 10);
  }
}

TEST(Parser, NegativeIntegerConstantsKeepTheirValue) {
  auto statements = parse_sql("SELECT -2, - 37, 0, 5");
  const auto& targets = statements.at(0).body()["targetList"];
  auto ival = [&](int i) {
    const auto& konst = targets[i]["ResTarget"]["val"]["A_Const"]["ival"];
    return konst.contains("ival") ? konst["ival"].get<int64_t>() : 0;
  };
  EXPECT_EQ(ival(0), -2);
  EXPECT_EQ(ival(1), -37);
  EXPECT_EQ(ival(2), 0);
  EXPECT_EQ(ival(3), 5);
}

}  // namespace
}  // namespace tally::executor
