// Grammar-level fuzz: random, mostly invalid SQL (valid queries of
// query_shapes.hpp mutated by sql_mutator.hpp, and deeply nested ones) sent to
// a started tallyd over the wire. Every statement must be answered, with rows
// or an ErrorResponse carrying a SQLSTATE, within a deadline; the server must
// not crash or hang, and the session must stay usable. A failure prints the
// seed and the statement. --statements=N and --seed=S (or TALLY_FUZZ_STATEMENTS
// / TALLY_DIFF_SEED) make a longer run.
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <poll.h>

#include <chrono>
#include <map>

#include "tests/differential/differential_fixture.hpp"
#include "tests/differential/query_shapes.hpp"
#include "tests/differential/sql_mutator.hpp"

namespace tally::testing {
namespace {

struct Answer {
  bool answered = false;  // every result arrived before the deadline
  bool connection_lost = false;
  std::string sqlstate;  // of the first error, empty if none
  std::string message;
};

// Sends `sql` and waits for all of its results, at most `limit`.
Answer send(PGconn* conn, const std::string& sql, std::chrono::seconds limit) {
  Answer answer;
  if (!PQsendQuery(conn, sql.c_str())) {
    answer.connection_lost = PQstatus(conn) != CONNECTION_OK;
    answer.message = PQerrorMessage(conn);
    answer.answered = !answer.connection_lost;
    return answer;
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (true) {
    while (PQisBusy(conn)) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return answer;
      pollfd fd{PQsocket(conn), POLLIN, 0};
      ::poll(&fd, 1, static_cast<int>(left.count()));
      if (!PQconsumeInput(conn)) {
        answer.connection_lost = true;
        answer.message = PQerrorMessage(conn);
        return answer;
      }
    }
    PGresult* res = PQgetResult(conn);
    if (res == nullptr) break;
    if (PQresultStatus(res) == PGRES_FATAL_ERROR && answer.sqlstate.empty()) {
      const char* state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
      answer.sqlstate = state ? state : "none";
      answer.message = PQresultErrorMessage(res);
    }
    PQclear(res);
  }
  answer.connection_lost = PQstatus(conn) != CONNECTION_OK;
  answer.answered = !answer.connection_lost;
  return answer;
}

TEST(SqlFuzz, RandomSqlIsAnsweredAndTheServerSurvives) {
  const uint64_t seed = differential_option("--seed", "TALLY_DIFF_SEED", 20261129);
  const uint64_t wanted = differential_option("--statements", "TALLY_FUZZ_STATEMENTS", 2000);
  TallyServer server(TALLYD_PATH);
  PGconn* conn = PQconnectdb(server.conninfo().c_str());
  ASSERT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
  FuzzRandom data(seed);
  for (const auto& statement : fuzz_schema_statements(data)) {
    const Answer a = send(conn, statement, std::chrono::seconds(60));
    ASSERT_TRUE(a.answered && a.sqlstate.empty()) << statement.substr(0, 200) << ": " << a.message;
  }
  ASSERT_TRUE(send(conn, "SET statement_timeout = '5s'", std::chrono::seconds(10)).answered);

  QueryGenerator generator(seed);
  FuzzRandom random(seed ^ 0xf022u);
  SqlMutator mutator(random);
  std::map<std::string, size_t> states;
  size_t ok = 0, failures = 0, sent = 0;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t n = 0; n < wanted && failures < 5; ++n, ++sent) {
    const std::string sql = random.chance(4) ? mutator.deep(50 + random.pick(2000)) : mutator.mutate(generator.next().sql);
    const Answer a = send(conn, sql, std::chrono::seconds(30));
    std::string problem;
    if (a.connection_lost) problem = "the connection was lost (server crash?): " + a.message;
    else if (!a.answered) problem = "no answer within 30 s";
    else if (a.sqlstate == "none") problem = "an error without SQLSTATE: " + a.message;
    else if (a.sqlstate == "XX000") problem = "an internal error: " + a.message;
    if (problem.empty() && n % 25 == 0) {
      const Answer probe = send(conn, "SELECT count(*) FROM t1", std::chrono::seconds(10));
      if (!probe.answered || !probe.sqlstate.empty()) problem = "the session is unusable afterwards: " + probe.message;
    }
    if (!problem.empty()) {
      ++failures;
      ADD_FAILURE() << "seed " << seed << " statement " << n << "\n" << sql.substr(0, 4000) << "\n" << problem;
      if (a.connection_lost || !a.answered) {
        PQfinish(conn);
        conn = PQconnectdb(server.conninfo().c_str());
        if (PQstatus(conn) != CONNECTION_OK) break;
        send(conn, "SET statement_timeout = '5s'", std::chrono::seconds(10));
      }
      continue;
    }
    if (a.sqlstate.empty()) ++ok;
    else ++states[a.sqlstate];
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("sql fuzz: %llu statements in %.1f s, %zu answered with rows, %zu failures (seed %llu)\n",
              static_cast<unsigned long long>(sent), seconds, ok, failures, static_cast<unsigned long long>(seed));
  for (const auto& [state, count] : states) std::printf("  SQLSTATE %s: %zu\n", state.c_str(), count);
  // The server still takes new sessions.
  PGconn* fresh = PQconnectdb(server.conninfo().c_str());
  EXPECT_EQ(PQstatus(fresh), CONNECTION_OK) << PQerrorMessage(fresh);
  PQfinish(fresh);
  PQfinish(conn);
  EXPECT_EQ(failures, 0u);
}

}  // namespace
}  // namespace tally::testing
