// equal_ignoring_locations is the planner's test for "the same expression"
// (a GROUP BY key, an aggregate listed twice, an ambiguous ORDER BY name): it
// must agree with comparing strip_locations copies on every pair.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "executor/binder.hpp"
#include "executor/parser.hpp"

namespace tally::executor {
namespace {

// The first output expression of "SELECT <expr> FROM r".
nlohmann::json target(const std::string& expr) {
  auto statements = parse_sql("SELECT " + expr + " FROM r");
  return statements.at(0).body()["targetList"][0]["ResTarget"]["val"];
}

TEST(BinderEquality, AgreesWithStrippedCopies) {
  const std::vector<std::string> exprs = {
      "g",          "  g",         "r.g",          "g + 1",       "g  +  1",     "g + 2",         "g - 1",
      "sum(v)",     "sum( v )",    "sum(w)",       "count(*)",    "count(v)",    "count(DISTINCT v)",
      "-5",         "- 5",         "0",            "g % 3",       "(g % 3)",     "sum(v) FILTER (WHERE v > 0)",
      "'a'",        "'b'",         "g::int8",      "g::int4",     "coalesce(g, 1)", "coalesce(g, 1, 2)",
  };
  int equal_pairs = 0;
  for (const auto& a : exprs) {
    for (const auto& b : exprs) {
      const auto x = target(a), y = target(b);
      const bool expected = strip_locations(x) == strip_locations(y);
      EXPECT_EQ(equal_ignoring_locations(x, y), expected) << a << " vs " << b;
      // Either side may already be stripped (the planner keeps stripped keys).
      EXPECT_EQ(equal_ignoring_locations(strip_locations(x), y), expected) << a << " vs " << b;
      if (expected && a != b) ++equal_pairs;
    }
  }
  // Spacing and parentheses only move locations: those pairs must be equal.
  EXPECT_GE(equal_pairs, 8);
  EXPECT_TRUE(equal_ignoring_locations(target("g  +  1"), target("g + 1")));
  EXPECT_FALSE(equal_ignoring_locations(target("g + 1"), target("g + 2")));
}

TEST(BinderEquality, ShapesThatDifferOnlyInKind) {
  using json = nlohmann::json;
  EXPECT_FALSE(equal_ignoring_locations(json::object(), json::array()));
  EXPECT_FALSE(equal_ignoring_locations(json{{"a", 1}}, json{{"a", 1}, {"b", 2}}));
  EXPECT_TRUE(equal_ignoring_locations(json{{"a", 1}, {"location", 3}}, json{{"a", 1}}));
  EXPECT_TRUE(equal_ignoring_locations(json{{"location", 3}}, json::object()));
  EXPECT_FALSE(equal_ignoring_locations(json::array({1, 2}), json::array({1})));
  EXPECT_FALSE(equal_ignoring_locations(json{{"a", json::array({1})}}, json{{"a", 1}}));
  EXPECT_FALSE(equal_ignoring_locations(json("1"), json(1)));
}

}  // namespace
}  // namespace tally::executor
