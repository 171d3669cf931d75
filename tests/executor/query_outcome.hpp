#pragma once
// What one statement run through a SqlSession produced: its last result's type
// OIDs and text rows, or its error. The differential tests compare these
// between engines and against PostgreSQL.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/query_handler.hpp"
#include "tests/executor/recording_writer.hpp"

namespace tally::executor::testing {

struct QueryOutcome {
  bool ok = true;
  std::string sqlstate;
  std::string message;
  std::vector<uint32_t> oids;
  std::vector<std::vector<std::optional<std::string>>> rows;
};

// Runs `sql` as a simple query; an error is recorded (and the session told,
// so a transaction block is aborted as on the wire), never thrown.
inline QueryOutcome run_simple_query(tally::QueryHandler& session, const std::string& sql) {
  QueryOutcome r;
  RecordingWriter out;
  try {
    session.simple_query(sql, out);
  } catch (const Error& e) {
    session.on_error();
    r.ok = false;
    r.sqlstate = std::string(sqlstate_code(e.state()));
    r.message = e.what();
    return r;
  }
  if (!out.results.empty()) {
    for (const auto& f : out.results.back().fields) r.oids.push_back(f.type_oid);
    r.rows = out.results.back().rows;
  }
  return r;
}

}  // namespace tally::executor::testing
