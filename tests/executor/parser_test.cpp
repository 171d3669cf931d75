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

// PostgreSQL 15: ERROR 22021 invalid byte sequence for encoding "UTF8": 0xc3 0x28
TEST(Parser, InvalidUtf8Is22021) {
  try {
    parse_sql("SELECT 'a\xc3\x28' AS c0");
    FAIL() << "expected 22021";
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::character_not_in_repertoire);
    EXPECT_EQ(std::string(e.what()), "invalid byte sequence for encoding \"UTF8\": 0xc3 0x28");
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

// The restoring walk is skipped when the text has no '-' or the tree no empty
// ival: each case where one of the two holds and the other does not.
TEST(Parser, NegativeConstantRestoreSkipsOnlyWhenNothingToRestore) {
  auto having = parse_sql("SELECT g FROM r GROUP BY g HAVING sum(v) < -95377 AND 0 = 0");
  const auto& args = having.at(0).body()["havingClause"]["BoolExpr"]["args"];
  EXPECT_EQ(args[0]["A_Expr"]["rexpr"]["A_Const"]["ival"]["ival"].get<int64_t>(), -95377);
  EXPECT_FALSE(args[1]["A_Expr"]["lexpr"]["A_Const"]["ival"].contains("ival"));  // 0 stays empty

  // A '-' but no negative constant (a string, an operator between columns).
  auto minus = parse_sql("SELECT 'a-b', g - v, 7 FROM r");
  const auto& targets = minus.at(0).body()["targetList"];
  EXPECT_EQ(targets[0]["ResTarget"]["val"]["A_Const"]["sval"]["sval"], "a-b");
  EXPECT_EQ(targets[2]["ResTarget"]["val"]["A_Const"]["ival"]["ival"].get<int64_t>(), 7);

  // An empty ival (0) and no '-' anywhere: 0 is 0.
  auto zero = parse_sql("SELECT 0");
  EXPECT_FALSE(zero.at(0).body()["targetList"][0]["ResTarget"]["val"]["A_Const"]["ival"].contains("ival"));
}

}  // namespace
}  // namespace tally::executor
