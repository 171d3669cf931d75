#pragma once
// What a differential test runs against: a PostgreSQL 15 it starts and an
// in-process Tally database (CPU engine, small chunks so that operators merge
// across chunks) in a temporary data directory, both given the same
// statements. Everything is stopped and removed on destruction.
#include <libpq-fe.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "executor/database.hpp"
#include "tests/differential/result_compare.hpp"
#include "tests/executor/embedded_database.hpp"
#include "tests/sql/pg_servers.hpp"

namespace tally::testing {

class DifferentialServers {
 public:
  explicit DifferentialServers(size_t chunk_rows)
      : tally_("tally-diff", [chunk_rows](config::Config& config) {
          config.cpu_threads = 2;
          config.chunk_rows = chunk_rows;
        }) {
    pg_ = PQconnectdb(pg_server_.conninfo().c_str());
    if (PQstatus(pg_) != CONNECTION_OK) throw std::runtime_error(PQerrorMessage(pg_));
  }
  ~DifferentialServers() { PQfinish(pg_); }

  executor::testing::QueryOutcome postgres(const std::string& sql) { return run_postgres(pg_, sql); }
  executor::testing::QueryOutcome tally(const std::string& sql) {
    return executor::testing::run_simple_query(tally_.session(), sql);
  }
  // Runs `sql` on both; the first failure's message, or empty.
  std::string both(const std::string& sql) {
    const auto p = postgres(sql);
    if (!p.ok) return "PostgreSQL: " + p.message + " in " + sql.substr(0, 200);
    const auto t = tally(sql);
    if (!t.ok) return "Tally: " + t.message + " in " + sql.substr(0, 200);
    return "";
  }

 private:
  PostgresServer pg_server_;
  PGconn* pg_ = nullptr;
  executor::testing::EmbeddedDatabase tally_;
};

// A test's size from its command line (--queries=N, --seed=S) or environment
// (TALLY_DIFF_QUERIES, TALLY_DIFF_SEED), else the default.
uint64_t differential_option(const char* flag, const char* env, uint64_t fallback);

}  // namespace tally::testing
