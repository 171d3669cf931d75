// Which star joins run in their lookup form (executor/lookup_rewrite.hpp),
// forced on (tally.lookup_joins = on) so that the CPU engine shows it: where
// the most selective joined relation keeps fewer fact rows than another
// joined relation has (TPC-H Q8's shape: a narrow part filter beside a large
// date range of orders), the hash joins run; where it keeps more, the
// lookups. A relation whose first key repeats is looked up by its integer
// keys packed into one, in a hash table. All answer as the hash joins do.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/executor/embedded_database.hpp"
#include "tests/executor/query_outcome.hpp"

namespace tally::executor {
namespace {

using testing::QueryOutcome;
using testing::run_simple_query;

class LookupChoiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // fact: 240,000 rows (a part, an order each); part: 6,000; orders: 30,000.
    run("CREATE TABLE part (pk int, kind int)");
    run("CREATE TABLE orders (ok int, day int, cust int)");
    run("CREATE TABLE fact (id int, pk int, ok int, v int)");
    run("INSERT INTO part SELECT g, g % 200 FROM generate_series(1, 6000) g");
    run("INSERT INTO orders SELECT g, g % 100, g % 77 FROM generate_series(1, 30000) g");
    run("INSERT INTO fact SELECT g, (g * 7919) % 6000 + 1, (g::int8 * 104729 % 30000 + 1)::int, g % 13 FROM generate_series(1, 240000) g");
  }
  QueryOutcome run(const std::string& sql) {
    QueryOutcome r = run_simple_query(db_.session(), sql);
    EXPECT_TRUE(r.ok) << sql << ": " << r.sqlstate << " " << r.message;
    return r;
  }
  std::vector<std::vector<std::optional<std::string>>> rows(const std::string& lookups, const std::string& sql) {
    run("SET tally.lookup_joins = " + lookups);
    auto r = run(sql).rows;
    std::sort(r.begin(), r.end());
    return r;
  }
  // EXPLAIN ANALYZE of `sql` with the lookups forced on, once its answer
  // was checked to be the hash joins' (and not empty).
  std::string checked_plan(const std::string& sql) {
    const auto hashed = rows("off", sql);
    EXPECT_FALSE(hashed.empty()) << sql;
    EXPECT_EQ(rows("on", sql), hashed) << sql;
    std::string text;
    for (const auto& row : run("EXPLAIN ANALYZE " + sql).rows) text += row[0].value_or("") + "\n";
    return text;
  }
  testing::EmbeddedDatabase db_{"tally-lookup-choice"};
};

TEST_F(LookupChoiceTest, FewFactRowsJoinedRunTheHashJoins) {
  // 1 kind in 200 keeps 1,200 of fact's 240,000 rows; 60% of orders are 18,000.
  const std::string sql =
      "SELECT o.day, count(*), sum(f.v) FROM fact f, part p, orders o "
      "WHERE f.pk = p.pk AND f.ok = o.ok AND p.kind = 3 AND o.cust < 46 GROUP BY o.day";
  const std::string text = checked_plan(sql);
  EXPECT_EQ(text.find("Lookup joins: "), std::string::npos) << text;
}

TEST_F(LookupChoiceTest, ManyFactRowsJoinedRunTheLookups) {
  // Half of the kinds keep 120,000 fact rows, more than orders' 18,000.
  const std::string sql =
      "SELECT o.day, count(*), sum(f.v) FROM fact f, part p, orders o "
      "WHERE f.pk = p.pk AND f.ok = o.ok AND p.kind < 100 AND o.cust < 46 GROUP BY o.day";
  const std::string text = checked_plan(sql);
  EXPECT_NE(text.find("Lookup joins: f looks up 2"), std::string::npos) << text;
}

TEST_F(LookupChoiceTest, CompositeKeysArePackedIntoOneHashedKey) {
  // supply: 4 rows a part (its first key repeats), unique with sk in
  // {0, 2, 4, 6}; fact's v (0..12) reaches past sk's range, so that a
  // packed key (pk, 9) equals the packed key of (pk + 1, 2): the pairs'
  // equalities must drop it.
  run("CREATE TABLE supply (pk int, sk int, cost int)");
  run("INSERT INTO supply SELECT g / 4 + 1, g % 4 * 2, g FROM generate_series(0, 23999) g");
  const std::string sql =
      "SELECT f.v, count(*), sum(s.cost) FROM fact f, supply s, part p "
      "WHERE f.pk = s.pk AND f.v = s.sk AND f.pk = p.pk AND p.kind < 150 GROUP BY f.v";
  const std::string text = checked_plan(sql);
  EXPECT_NE(text.find("Lookup joins: f looks up 1"), std::string::npos) << text;
  EXPECT_NE(text.find("rows by key 0..41999, made"), std::string::npos) << text;  // 6,000 parts x 7
  EXPECT_EQ(rows("on", sql).size(), 4u);
  // Packed keys too sparse for an array by key (a second key a billion
  // apart) are held in a hash table.
  run("CREATE TABLE spread (ok int, sk int, cost int)");
  run("INSERT INTO spread SELECT g / 4 + 1, g % 4 * 4, g FROM generate_series(0, 119) g");
  run("INSERT INTO spread VALUES (7, 1000000000, 7), (8, 1000000000, 8)");
  const std::string sparse =
      "SELECT f.v, count(*), sum(t.cost) FROM fact f, spread t WHERE f.ok = t.ok AND f.v = t.sk GROUP BY f.v";
  const std::string hashed = checked_plan(sparse);
  EXPECT_NE(hashed.find("Lookup joins: f looks up 1"), std::string::npos) << hashed;
  EXPECT_NE(hashed.find(" in a hash table, made"), std::string::npos) << hashed;
  EXPECT_EQ(rows("on", sparse).size(), 4u);
}

}  // namespace
}  // namespace tally::executor
