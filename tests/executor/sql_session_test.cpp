#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "common/error.hpp"
#include "executor/database.hpp"
#include "tests/executor/recording_writer.hpp"

namespace tally::executor {
namespace {

using testing::RecordingWriter;

class SessionTest : public ::testing::Test {
 protected:
  SessionTest() {
    char pattern[] = "/tmp/tally-session-test-XXXXXX";
    data_dir_ = mkdtemp(pattern);
    config_.data_dir = data_dir_;
    database_ = Database::open(config_);
    tally::SessionInfo info;
    info.user = "alice";
    info.database = "tally";
    info.startup_parameters = {{"application_name", "psql"}, {"client_encoding", "UTF8"}};
    session_ = database_->handler_factory().create(info);
  }

  RecordingWriter run(const std::string& sql) {
    RecordingWriter out;
    session_->simple_query(sql, out);
    return out;
  }

  // Whether a line of EXPLAIN `sql` holds `text`.
  bool plan_mentions(const std::string& sql, const std::string& text) {
    for (const std::string& line : run("EXPLAIN " + sql).lines()) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }

  SqlState error_of(const std::string& sql) {
    RecordingWriter out;
    try {
      session_->simple_query(sql, out);
    } catch (const Error& e) {
      session_->on_error();
      return e.state();
    }
    ADD_FAILURE() << "expected an error from " << sql;
    return SqlState::successful_completion;
  }

  ~SessionTest() override {
    session_.reset();
    database_.reset();
    std::filesystem::remove_all(data_dir_);
  }

  std::string data_dir_;
  config::Config config_;
  std::unique_ptr<Database> database_;
  std::unique_ptr<tally::QueryHandler> session_;
};

TEST_F(SessionTest, InitialParameterStatusHasWhatPostgresReports) {
  auto status = session_->initial_parameter_status();
  std::map<std::string, std::string> map(status.begin(), status.end());
  EXPECT_EQ(map["server_encoding"], "UTF8");
  EXPECT_EQ(map["client_encoding"], "UTF8");
  EXPECT_EQ(map["DateStyle"], "ISO, MDY");
  EXPECT_EQ(map["integer_datetimes"], "on");
  EXPECT_EQ(map["standard_conforming_strings"], "on");
  EXPECT_EQ(map["application_name"], "psql");
  EXPECT_EQ(map["session_authorization"], "alice");
  EXPECT_EQ(map["server_version"].substr(0, 3), "15.");
  for (const char* name : {"IntervalStyle", "TimeZone", "is_superuser", "default_transaction_read_only", "in_hot_standby"}) {
    EXPECT_TRUE(map.count(name)) << name;
  }
}

TEST_F(SessionTest, SelectWithoutFromTypesAndText) {
  auto out = run("SELECT 1, -2, 1.50, 'a', true, NULL, 5/2, 5.0/2, 1/3.0, 3000000000, 0.1::float8 + 0.2, 1e20::float8");
  ASSERT_EQ(out.results.size(), 1u);
  const auto& r = out.results[0];
  EXPECT_EQ(r.tag, "SELECT 1");
  std::vector<uint32_t> oids;
  for (const auto& f : r.fields) oids.push_back(f.type_oid);
  EXPECT_EQ(oids, (std::vector<uint32_t>{23, 23, 1700, 25, 16, 25, 23, 1700, 1700, 20, 701, 701}));
  EXPECT_EQ(out.lines()[0], "1|-2|1.50|a|t|NULL|2|2.5000000000000000|0.33333333333333333333|3000000000|0.30000000000000004|1e+20");
  EXPECT_EQ(r.fields[0].name, "?column?");
  EXPECT_EQ(r.fields[4].name, "bool");
}

TEST_F(SessionTest, SeveralStatementsAndEmptyQuery) {
  auto out = run("SELECT 1; SELECT 2 AS two");
  ASSERT_EQ(out.results.size(), 2u);
  EXPECT_EQ(out.results[1].fields[0].name, "two");
  EXPECT_EQ(out.lines(), std::vector<std::string>{"2"});
  auto empty = run("  ");
  EXPECT_TRUE(empty.empty);
}

TEST_F(SessionTest, ArithmeticErrors) {
  EXPECT_EQ(error_of("SELECT 2147483647 + 1"), SqlState::numeric_value_out_of_range);
  EXPECT_EQ(error_of("SELECT 1/0"), SqlState::division_by_zero);
  EXPECT_EQ(error_of("SELECT 'abc'::int"), SqlState::invalid_text_representation);
  EXPECT_EQ(error_of("SELECT 1 + 'x'::text"), SqlState::undefined_function);
  EXPECT_EQ(error_of("SELECT nope()"), SqlState::undefined_function);
  EXPECT_EQ(error_of("SELEC 1"), SqlState::syntax_error);
}

TEST_F(SessionTest, SetShowReset) {
  auto out = run("SET DateStyle = 'iso, dmy'");
  ASSERT_EQ(out.parameter_changes.size(), 1u);
  EXPECT_EQ(out.parameter_changes[0], (std::pair<std::string, std::string>{"DateStyle", "ISO, DMY"}));
  EXPECT_EQ(run("SHOW datestyle").lines(), std::vector<std::string>{"ISO, DMY"});
  EXPECT_EQ(run("SHOW datestyle").results[0].fields[0].name, "DateStyle");
  run("SET statement_timeout = '5s'");
  EXPECT_EQ(run("SHOW statement_timeout").lines(), std::vector<std::string>{"5s"});
  EXPECT_EQ(run("SELECT current_setting('statement_timeout')").lines(), std::vector<std::string>{"5s"});
  auto reset = run("RESET ALL");
  EXPECT_EQ(run("SHOW DateStyle").lines(), std::vector<std::string>{"ISO, MDY"});
  EXPECT_FALSE(reset.parameter_changes.empty());
  EXPECT_EQ(error_of("SET nope = 1"), SqlState::undefined_object);
  EXPECT_EQ(error_of("SHOW nope"), SqlState::undefined_object);
  EXPECT_EQ(error_of("SET server_version = '1'"), SqlState::cant_change_runtime_param);
  EXPECT_EQ(error_of("SET standard_conforming_strings = maybe"), SqlState::invalid_parameter_value);
  run("SET my.custom = 'x'");
  EXPECT_EQ(run("SHOW my.custom").lines(), std::vector<std::string>{"x"});
  EXPECT_EQ(run("SELECT current_setting('no.such', true) IS NULL").lines(), std::vector<std::string>{"t"});
  EXPECT_GT(run("SHOW ALL").results[0].rows.size(), 20u);
}

TEST_F(SessionTest, TransactionStates) {
  EXPECT_EQ(session_->transaction_status(), tally::TransactionStatus::idle);
  EXPECT_EQ(run("BEGIN").results[0].tag, "BEGIN");
  EXPECT_EQ(session_->transaction_status(), tally::TransactionStatus::in_block);
  run("SET application_name = 'inside'");
  EXPECT_EQ(error_of("SELECT 1/0"), SqlState::division_by_zero);
  EXPECT_EQ(session_->transaction_status(), tally::TransactionStatus::failed);
  EXPECT_EQ(error_of("SELECT 1"), SqlState::in_failed_sql_transaction);
  EXPECT_EQ(error_of("SHOW DateStyle"), SqlState::in_failed_sql_transaction);
  auto rollback = run("COMMIT");  // COMMIT of a failed block rolls back
  EXPECT_EQ(rollback.results[0].tag, "ROLLBACK");
  EXPECT_EQ(session_->transaction_status(), tally::TransactionStatus::idle);
  EXPECT_EQ(run("SHOW application_name").lines(), std::vector<std::string>{"psql"});
  EXPECT_EQ(run("START TRANSACTION ISOLATION LEVEL SERIALIZABLE").results[0].tag, "START TRANSACTION");
  EXPECT_EQ(run("SHOW transaction_isolation").lines(), std::vector<std::string>{"serializable"});
  auto again = run("BEGIN");
  ASSERT_EQ(again.notices.size(), 1u);
  EXPECT_EQ(again.notices[0].substr(0, 5), "25001");
  EXPECT_EQ(run("COMMIT").results[0].tag, "COMMIT");
  auto none = run("COMMIT");
  ASSERT_EQ(none.notices.size(), 1u);
  EXPECT_EQ(none.notices[0].substr(0, 5), "25P01");
  EXPECT_EQ(run("DISCARD ALL").results[0].tag, "DISCARD ALL");
}

TEST_F(SessionTest, UnsupportedStatementKeepsSessionUsable) {
  EXPECT_EQ(error_of("CREATE MATERIALIZED VIEW mv AS SELECT 1"), SqlState::feature_not_supported);
  EXPECT_EQ(run("SELECT 7").lines(), std::vector<std::string>{"7"});
}

TEST_F(SessionTest, ViewsAreNotChangedInsideATransactionBlock) {
  // The catalog commits a view at once, which a ROLLBACK could not undo.
  run("CREATE TABLE under_view (a int)");
  run("CREATE VIEW kept AS SELECT a FROM under_view");
  run("BEGIN");
  EXPECT_EQ(error_of("CREATE VIEW in_block AS SELECT 1"), SqlState::feature_not_supported);
  run("ROLLBACK");
  run("BEGIN");
  EXPECT_EQ(error_of("DROP VIEW kept"), SqlState::feature_not_supported);
  run("ROLLBACK");
  run("BEGIN");
  EXPECT_EQ(error_of("DROP TABLE under_view CASCADE"), SqlState::feature_not_supported);
  run("ROLLBACK");
  EXPECT_EQ(run("SELECT count(*) FROM kept").lines(), std::vector<std::string>{"0"});
}

TEST_F(SessionTest, AnUnsupportedStatementIsNamedInSqlWords) {
  run("CREATE TABLE named (a int)");
  const std::pair<const char*, const char*> cases[] = {
      {"ALTER TABLE named ALTER COLUMN a TYPE bigint", "ALTER TABLE ... ALTER COLUMN TYPE is not supported by Tally"},
      {"CREATE TRIGGER tr AFTER INSERT ON named FOR EACH ROW EXECUTE FUNCTION f()",
       "CREATE TRIGGER is not supported by Tally"},
      {"GRANT SELECT ON named TO PUBLIC", "GRANT is not supported by Tally"}};
  for (const auto& [sql, message] : cases) {
    RecordingWriter out;
    try {
      session_->simple_query(sql, out);
      ADD_FAILURE() << "expected an error from " << sql;
    } catch (const Error& e) {
      session_->on_error();
      EXPECT_EQ(e.state(), SqlState::feature_not_supported) << sql;
      EXPECT_EQ(std::string(e.what()), message) << sql;
    }
  }
}

TEST_F(SessionTest, AnUnsupportedAggregateIsSaidToBeOne) {
  run("CREATE TABLE agg_kinds (g int, i bigint, t text)");
  run("INSERT INTO agg_kinds VALUES (1, 6, 'a'), (1, 3, 'b')");
  // PostgreSQL's aggregates that Tally does not have: 0A000 with the name,
  // never 42803 about the argument's column (which a scalar call would get).
  for (const char* call : {"bit_and(i)", "bit_or(i)", "bit_xor(i)", "json_agg(t)",
                           "jsonb_agg(t)", "json_object_agg(t, i)"}) {
    const std::string sql = std::string("SELECT g, ") + call + " FROM agg_kinds GROUP BY g";
    EXPECT_EQ(error_of(sql), SqlState::feature_not_supported) << sql;
  }
  EXPECT_EQ(run("SELECT g, sum(i) FROM agg_kinds GROUP BY g").lines(), std::vector<std::string>{"1|9"});
  // array_agg runs on the generic path (pg_dump's catalog queries call it).
  EXPECT_EQ(run("SELECT g, array_agg(t ORDER BY t DESC) FROM agg_kinds GROUP BY g").lines(),
            std::vector<std::string>{"1|{b,a}"});
}

TEST_F(SessionTest, ExtendedProtocolInfersParameterTypes) {
  std::vector<uint32_t> none;
  auto statement = session_->prepare("SELECT $1::int + 1, $2", std::vector<uint32_t>{0, 0});
  EXPECT_EQ(statement->parameter_types(), (std::vector<uint32_t>{23, 25}));
  auto fields = statement->result_fields();
  ASSERT_TRUE(fields);
  EXPECT_EQ((*fields)[0].type_oid, 23u);
  std::vector<tally::ParameterValue> params{{std::string("41"), tally::Format::text},
                                               {std::nullopt, tally::Format::text}};
  auto portal = session_->bind(*statement, params, {});
  RecordingWriter out;
  EXPECT_TRUE(portal->execute(0, out));
  EXPECT_EQ(out.lines(), std::vector<std::string>{"42|NULL"});
  EXPECT_EQ(out.results[0].tag, "SELECT 1");

  // INSERT ... RETURNING describes its columns before it runs (Execute sends no RowDescription).
  run("CREATE TABLE returned (id int, name text)");
  auto insert = session_->prepare("INSERT INTO returned VALUES ($1, 'x') RETURNING id, name AS n",
                                  std::vector<uint32_t>{0});
  auto returned = insert->result_fields();
  ASSERT_TRUE(returned);
  ASSERT_EQ(returned->size(), 2u);
  EXPECT_EQ((*returned)[0].type_oid, 23u);
  EXPECT_EQ((*returned)[1].name, "n");
  EXPECT_EQ((*returned)[1].type_oid, 25u);
  std::vector<tally::ParameterValue> seven{{std::string("7"), tally::Format::text}};
  RecordingWriter rout;
  EXPECT_TRUE(session_->bind(*insert, seven, {})->execute(0, rout));
  EXPECT_EQ(rout.lines(), std::vector<std::string>{"7|x"});

  // Binary parameter in, binary result out.
  auto typed = session_->prepare("SELECT $1 + 1", std::vector<uint32_t>{20});
  std::string eight(8, '\0');
  eight[7] = 5;
  std::vector<tally::ParameterValue> bin{{eight, tally::Format::binary}};
  std::vector<tally::Format> formats{tally::Format::binary};
  auto bp = session_->bind(*typed, bin, formats);
  RecordingWriter bout;
  bp->execute(0, bout);
  ASSERT_EQ(bout.results[0].rows.size(), 1u);
  EXPECT_EQ(*bout.results[0].rows[0][0], std::string("\0\0\0\0\0\0\0\x06", 8));

  try {
    session_->prepare("SELECT $1 IS NULL", none);
    ADD_FAILURE() << "expected 42P18";
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::indeterminate_datatype);
  }
}

TEST_F(SessionTest, MergeAndUpdateFromInferParameterTypes) {
  // Untyped parameters of MERGE's clauses and of UPDATE ... FROM take their
  // columns' types (SET and INSERT values) or their comparison's, as
  // PostgreSQL's parse analysis gives them.
  run("CREATE TABLE merged (k int, v bigint, d date)");
  run("INSERT INTO merged VALUES (1, 1, '2020-01-01'), (2, 2, NULL)");
  auto merge = session_->prepare(
      "MERGE INTO merged m USING (VALUES (1), (3)) s(k) ON m.k = s.k WHEN MATCHED AND m.d < $3 THEN UPDATE SET v = $1 "
      "WHEN NOT MATCHED THEN INSERT (k, d) VALUES (s.k, $2)",
      std::vector<uint32_t>{0, 0, 0});
  EXPECT_EQ(merge->parameter_types(), (std::vector<uint32_t>{20, 1082, 1082}));
  std::vector<tally::ParameterValue> values{{std::string("50"), tally::Format::text},
                                            {std::string("2024-01-02"), tally::Format::text},
                                            {std::string("2021-01-01"), tally::Format::text}};
  RecordingWriter out;
  EXPECT_TRUE(session_->bind(*merge, values, {})->execute(0, out));
  EXPECT_EQ(out.results[0].tag, "MERGE 2");
  auto update = session_->prepare("UPDATE merged SET v = $1 FROM (VALUES (2)) s(k) WHERE merged.k = s.k",
                                  std::vector<uint32_t>{0});
  EXPECT_EQ(update->parameter_types(), std::vector<uint32_t>{20});
  std::vector<tally::ParameterValue> seven{{std::string("7"), tally::Format::text}};
  RecordingWriter uout;
  EXPECT_TRUE(session_->bind(*update, seven, {})->execute(0, uout));
  EXPECT_EQ(uout.results[0].tag, "UPDATE 1");
  EXPECT_EQ(run("SELECT k, v, d FROM merged ORDER BY k").lines(),
            (std::vector<std::string>{"1|50|2020-01-01", "2|7|NULL", "3|NULL|2024-01-02"}));
}

TEST_F(SessionTest, PortalRowLimitAndResume) {
  run("CREATE TABLE p (a int, b text)");
  run("INSERT INTO p VALUES (1, 'x'), (2, 'y'), (3, 'z'), (4, NULL), (5, 'w')");
  auto statement = session_->prepare("SELECT a, b FROM p WHERE a > $1 ORDER BY a", std::vector<uint32_t>{0});
  EXPECT_EQ(statement->parameter_types(), std::vector<uint32_t>{23});  // inferred from the int column
  std::vector<tally::ParameterValue> params{{std::string("1"), tally::Format::text}};
  auto portal = session_->bind(*statement, params, {});
  RecordingWriter first;
  EXPECT_FALSE(portal->execute(2, first));  // suspended after two rows
  EXPECT_EQ(first.lines(), (std::vector<std::string>{"2|y", "3|z"}));
  RecordingWriter rest;
  EXPECT_TRUE(portal->execute(0, rest));
  EXPECT_EQ(rest.lines(), (std::vector<std::string>{"4|NULL", "5|w"}));
  EXPECT_EQ(rest.results.back().tag, "SELECT 2");
}

TEST_F(SessionTest, NegativeLiteralsAndVersion) {
  EXPECT_EQ(run("SELECT -2147483648, - 5, version() LIKE 'PostgreSQL 15%'").lines(),
            std::vector<std::string>{"-2147483648|-5|t"});
}

// GROUP BY columns that a grouped primary key determines are fetched for the
// groups ORDER BY ... LIMIT keeps (executor/dependent_group_columns.hpp;
// answers against PostgreSQL in tests/sql/dependent_group_columns.test):
// the plan groups by the key alone and joins the table again. Shapes that
// need the columns while grouping keep them grouped.
TEST_F(SessionTest, GroupColumnsThatAKeyDeterminesAreFetchedAfterTheLimit) {
  run("CREATE TABLE fetched_c (k int PRIMARY KEY, name text, note text)");
  run("CREATE TABLE fetched_u (k int UNIQUE, name text)");
  run("CREATE TABLE fetched_o (ck int, amt int)");
  run("INSERT INTO fetched_c VALUES (1, 'a', 'x'), (2, 'b', NULL), (3, NULL, 'z')");
  run("INSERT INTO fetched_u VALUES (1, 'a'), (NULL, 'n')");
  run("INSERT INTO fetched_o VALUES (1, 5), (1, 6), (2, 20), (3, 1), (9, 4)");
  auto fetches = [&](const std::string& sql) { return plan_mentions(sql, "tally_grouped"); };
  const std::string top = "SELECT k, name, note, sum(amt) AS s FROM fetched_c, fetched_o WHERE k = ck "
                          "GROUP BY k, name, note ORDER BY s DESC LIMIT 2";
  EXPECT_TRUE(fetches(top));
  EXPECT_EQ(run(top).lines(), (std::vector<std::string>{"2|b|NULL|20", "1|a|x|11"}));
  EXPECT_FALSE(fetches("SELECT k, name, sum(amt) AS s FROM fetched_c, fetched_o WHERE k = ck GROUP BY k, name "
                       "ORDER BY name LIMIT 2"));
  EXPECT_FALSE(fetches("SELECT k, name, sum(amt) AS s FROM fetched_c, fetched_o WHERE k = ck GROUP BY k, name"));
  EXPECT_FALSE(fetches("SELECT lower(name), sum(amt) AS s FROM fetched_c, fetched_o WHERE k = ck GROUP BY k, name "
                       "ORDER BY s LIMIT 2"));
  EXPECT_FALSE(fetches("SELECT k, name, count(*) AS n FROM fetched_u, fetched_o WHERE k = ck GROUP BY k, name "
                       "ORDER BY n LIMIT 2"));
}

// A LATERAL subquery's first rows per key of one table are ranked in one
// pass and joined (executor/lateral_top_n.hpp; answers against PostgreSQL in
// tests/sql/lateral_top_n.test), where it ran once per outer key; an OFFSET
// keeps the per-row form.
TEST_F(SessionTest, LateralFirstRowsPerKeyAreRankedInOnePass) {
  run("CREATE TABLE ranked_c (k int, name text)");
  run("CREATE TABLE ranked_o (id int, k int, amt int)");
  run("INSERT INTO ranked_c VALUES (1, 'a'), (2, 'b'), (3, 'c')");
  run("INSERT INTO ranked_o VALUES (1, 1, 10), (2, 1, 30), (3, 1, 20), (4, 2, 5), (5, 9, 7)");
  auto ranks = [&](const std::string& sql) { return plan_mentions(sql, "Top-N: ranks up to"); };
  const std::string top = "SELECT c.k, t.amt FROM ranked_c c, LATERAL (SELECT amt FROM ranked_o o WHERE o.k = c.k "
                          "ORDER BY amt DESC LIMIT 2) t ORDER BY 1, 2 DESC";
  EXPECT_TRUE(ranks(top));
  EXPECT_EQ(run(top).lines(), (std::vector<std::string>{"1|30", "1|20", "2|5"}));
  EXPECT_FALSE(ranks("SELECT c.k, t.amt FROM ranked_c c, LATERAL (SELECT amt FROM ranked_o o WHERE o.k = c.k "
                     "ORDER BY amt LIMIT 2 OFFSET 1) t"));
}

}  // namespace
}  // namespace tally::executor
