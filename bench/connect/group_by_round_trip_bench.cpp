// Per-query cost of a GROUP BY through the wire, outside the aggregation: a
// started tallyd (CPU engine unless --tallyd-args says otherwise) and a
// PostgreSQL 15 it starts itself, the same small table in both, and
//   SELECT g<G>, sum(v) FROM r GROUP BY g<G>
// for each G, timed end to end through libpq (PQexec, text) and through the
// lean wire client (bench/cpu/wire_client.hpp: DataRows parsed in place), next
// to the server's own Execution Time (EXPLAIN ANALYZE) of the same query. What
// lies between the lean client's time and Execution Time is the per-query cost
// this bench is for: parse, analysis and planning, catalog look-ups, result
// set-up, DataRow encoding, the socket and the client's parse. `SELECT 1`
// (parse and analysis caches hit, no table) is the floor.
//
// Checks: every query returns G rows; the lean client's row checksum equals
// libpq's; Tally's rows equal PostgreSQL's (sorted).
//
// A second table splits Tally's side into phases (WireClient::query_phases:
// Parse+Bind, Execute to the first DataRow, the rest) next to Execution Time.
// --trace adds a third: a second tallyd at log level debug writes each
// statement's server-side timeline (common/statement_timeline.hpp: executor
// start and end, result ready, first DataRow written, ReadyForQuery), and the
// bench prints its medians in microseconds after the Execute's receipt.
//
// Usage: group_by_round_trip_bench --tallyd PATH [--rows 262144] [--groups 1,4096,65536]
//                                  [--reps 1000] [--tallyd-args "..."] [--no-postgres] [--trace]
//                                  [--set NAME=VALUE]
// --set: a session setting for Tally's connections (e.g. tally.engine=cpu).
// Repetitions shrink with G (reps * 4096 / G, at least 50) so a run stays short.
#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <thread>
#include <optional>
#include <string>
#include <vector>

#include "bench/common/copy_text.hpp"
#include "bench/common/pg_copy.hpp"
#include "bench/connect/number_list.hpp"
#include "bench/cpu/wire_client.hpp"
#include "tests/sql/pg_servers.hpp"

namespace {

using Clock = std::chrono::steady_clock;

PGresult* exec(PGconn* c, const std::string& sql) {
  PGresult* r = PQexec(c, sql.c_str());
  const auto status = PQresultStatus(r);
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    std::fprintf(stderr, "%s failed: %s\n", sql.c_str(), PQerrorMessage(c));
    std::exit(1);
  }
  return r;
}

// cpu_bench's rows: keys (i * 2654435761) mod G, values (i * 7919) mod 1000 - 500.
void load(PGconn* c, uint64_t rows, const std::vector<uint64_t>& groups) {
  std::string create = "CREATE TABLE r (";
  for (uint64_t g : groups) create += "g" + std::to_string(g) + " int, ";
  create += "v int)";
  PQclear(exec(c, create));
  PGresult* r = PQexec(c, "COPY r FROM STDIN");
  if (PQresultStatus(r) != PGRES_COPY_IN) {
    std::fprintf(stderr, "COPY failed: %s\n", PQerrorMessage(c));
    std::exit(1);
  }
  PQclear(r);
  std::vector<char> buffer(size_t{1} << 20);
  for (uint64_t b = 0; b < rows;) {
    char* p = buffer.data();
    for (; b < rows && p + 16 * (groups.size() + 1) < buffer.data() + buffer.size(); ++b) {
      for (uint64_t g : groups) {
        p = tally::bench::put_int(p, static_cast<int64_t>((b * 2654435761ULL) % g));
        *p++ = '\t';
      }
      p = tally::bench::put_int(p, static_cast<int64_t>((b * 7919) % 1000) - 500);
      *p++ = '\n';
    }
    if (PQputCopyData(c, buffer.data(), static_cast<int>(p - buffer.data())) != 1) {
      std::fprintf(stderr, "COPY data failed: %s\n", PQerrorMessage(c));
      std::exit(1);
    }
  }
  if (std::string error; !tally::bench::finish_copy(c, &error)) {
    std::fprintf(stderr, "COPY failed: %s\n", error.c_str());
    std::exit(1);
  }
}

struct Rows {
  std::vector<std::string> sorted;  // "f0|f1|..."
  uint64_t checksum = 0;            // WireClient's order-independent checksum
};

Rows collect(PGresult* r) {
  Rows out;
  for (int i = 0; i < PQntuples(r); ++i) {
    std::string row;
    uint64_t h = tally::bench::kRowHashSeed;
    for (int f = 0; f < PQnfields(r); ++f) {
      row += std::string(f ? "|" : "") + PQgetvalue(r, i, f);
      h = tally::bench::field_hash(h, PQgetvalue(r, i, f), f);
    }
    out.sorted.push_back(std::move(row));
    out.checksum += h;
  }
  std::sort(out.sorted.begin(), out.sorted.end());
  return out;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

// "Execution Time: X ms" of EXPLAIN ANALYZE (both servers print it), in µs.
double execution_us(PGconn* c, const std::string& sql) {
  PGresult* r = exec(c, "EXPLAIN ANALYZE " + sql);
  double us = -1;
  for (int i = 0; i < PQntuples(r); ++i) {
    const char* line = PQgetvalue(r, i, 0);
    if (const char* at = std::strstr(line, "Execution Time: ")) us = std::atof(at + 16) * 1e3;
  }
  PQclear(r);
  return us;
}

struct Cell {
  double libpq_us = 0, libpq_p90 = 0, lean_us = 0, lean_p90 = 0, exec_us = -1;
  // WireClient::query_phases medians: Parse+Bind, Execute to the first DataRow, the rest.
  double bind_us = 0, first_row_us = 0, rest_us = 0;
  Rows rows;
  std::string check = "ok";
};

Cell measure(PGconn* c, tally::bench::WireClient& lean, const std::string& sql, int reps, std::optional<uint64_t> want_rows,
             bool explain) {
  Cell cell;
  PGresult* first = exec(c, sql);
  cell.rows = collect(first);
  PQclear(first);
  for (int i = 0; i < 3; ++i) PQclear(exec(c, sql));  // warm-up
  std::vector<double> libpq, leans, execs;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    PQclear(exec(c, sql));
    libpq.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  tally::bench::WireClient::Result result;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    result = lean.query(sql, false);
    leans.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::vector<double> binds, firsts, rests;
  for (int i = 0; i < reps; ++i) {
    const auto p = lean.query_phases(sql);
    binds.push_back(p.bind_us);
    firsts.push_back(p.first_row_us);
    rests.push_back(p.rest_us);
  }
  cell.bind_us = quantile(binds, 0.5);
  cell.first_row_us = quantile(firsts, 0.5);
  cell.rest_us = quantile(rests, 0.5);
  if (explain) {
    for (int i = 0; i < std::max(5, reps / 10); ++i) execs.push_back(execution_us(c, sql));
    cell.exec_us = quantile(execs, 0.5);
  }
  cell.libpq_us = quantile(libpq, 0.5);
  cell.libpq_p90 = quantile(libpq, 0.9);
  cell.lean_us = quantile(leans, 0.5);
  cell.lean_p90 = quantile(leans, 0.9);
  if (want_rows && cell.rows.sorted.size() != *want_rows) {
    cell.check = "FAIL: " + std::to_string(cell.rows.sorted.size()) + " rows";
  } else if (result.rows != cell.rows.sorted.size() || result.checksum != cell.rows.checksum) {
    cell.check = "FAIL: lean rows differ from libpq's";
  }
  return cell;
}

// The statement_timeline lines (server/session_registry.cpp) of tallyd's log
// from line `from` on: per field, its values. Advances `from`.
std::map<std::string, std::vector<double>> timeline_fields(const std::string& log_path, size_t& from) {
  std::map<std::string, std::vector<double>> fields;
  std::ifstream in(log_path);
  size_t index = 0;
  for (std::string line; std::getline(in, line); ++index) {
    if (index < from || line.find("event=statement_timeline") == std::string::npos) continue;
    for (size_t at = line.find(' '); at != std::string::npos; at = line.find(' ', at + 1)) {
      const size_t eq = line.find('=', at);
      const size_t end = line.find(' ', at + 1);
      if (eq == std::string::npos || (end != std::string::npos && eq > end)) continue;
      const std::string key = line.substr(at + 1, eq - at - 1);
      if (key.size() > 3 && key.compare(key.size() - 3, 3, "_us") == 0) fields[key].push_back(std::atof(line.c_str() + eq + 1));
    }
  }
  from = index;
  return fields;
}

}  // namespace

int main(int argc, char** argv) {
  std::string tallyd, tallyd_args;
  uint64_t rows = uint64_t{1} << 18;
  int reps = 1000;
  bool postgres = true;
  bool trace = false;
  std::string set_statement;  // "SET name = 'value'", or empty
  std::vector<uint64_t> groups = {1, 4096, 65536};
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const bool has_value = i + 1 < argc;
    if (flag == "--tallyd" && has_value) tallyd = argv[++i];
    else if (flag == "--tallyd-args" && has_value) tallyd_args = argv[++i];
    else if (flag == "--rows" && has_value) rows = std::strtoull(argv[++i], nullptr, 10);
    else if (flag == "--reps" && has_value) reps = std::max(1, std::atoi(argv[++i]));
    else if (flag == "--no-postgres") postgres = false;
    else if (flag == "--trace") trace = true;
    else if (flag == "--set" && has_value) {
      const std::string pair = argv[++i];
      const size_t eq = pair.find('=');
      if (eq == std::string::npos) {
        std::fprintf(stderr, "--set wants NAME=VALUE\n");
        return 2;
      }
      set_statement = "SET " + pair.substr(0, eq) + " = '" + pair.substr(eq + 1) + "'";
    }
    else if (flag == "--groups" && has_value) {
      groups = tally::bench::parse_number_list(argv[++i]);
    } else {
      std::fprintf(stderr, "unknown argument %s\n", flag.c_str());
      return 2;
    }
  }
  if (tallyd.empty()) {
    std::fprintf(stderr,
                 "usage: group_by_round_trip_bench --tallyd PATH [--rows N] [--groups 1,4096,65536] [--reps R] "
                 "[--tallyd-args \"...\"] [--no-postgres] [--trace]\n");
    return 2;
  }

  tally::testing::TallyServer tally_server(tallyd, tallyd_args);
  std::unique_ptr<tally::testing::PostgresServer> pg_server;
  if (postgres) pg_server = std::make_unique<tally::testing::PostgresServer>();
  PGconn* tc = PQconnectdb(tally_server.conninfo().c_str());
  PGconn* pc = postgres ? PQconnectdb(pg_server->conninfo().c_str()) : nullptr;
  if (PQstatus(tc) != CONNECTION_OK || (pc && PQstatus(pc) != CONNECTION_OK)) {
    std::fprintf(stderr, "connect failed\n");
    return 1;
  }
  load(tc, rows, groups);
  if (pc) {
    load(pc, rows, groups);
    PQclear(exec(pc, "VACUUM ANALYZE r"));
  }
  tally::bench::WireClient tally_lean(tally_server.conninfo());
  if (!set_statement.empty()) {
    PQclear(exec(tc, set_statement));
    tally_lean.query(set_statement, false);
  }
  std::unique_ptr<tally::bench::WireClient> pg_lean;
  if (pc) pg_lean = std::make_unique<tally::bench::WireClient>(pg_server->conninfo());

  std::printf("tallyd %s %s; %llu rows; Tally over TCP loopback, PostgreSQL 15 over its unix socket%s%s\n",
              tallyd.c_str(), tallyd_args.c_str(), static_cast<unsigned long long>(rows),
              set_statement.empty() ? "" : "; Tally sessions: ", set_statement.c_str());
  std::printf("%-9s %6s | %9s %9s %9s %9s %9s %10s | %9s %9s %9s %7s | %s\n", "query", "reps", "libpq_us", "p90", "lean_us",
              "p90", "exec_us", "outside_us", "pg_libpq", "pg_lean", "pg_exec", "lean/pg", "check");
  bool all_ok = true;
  struct Query {
    std::string label, sql;
    std::optional<uint64_t> rows;
    bool explain;
  };
  std::vector<Query> queries = {{"SELECT 1", "SELECT 1", 1, false}};
  std::vector<std::pair<std::string, Cell>> phases;  // Tally's, for the second table
  for (uint64_t g : groups) {
    const std::string col = "g" + std::to_string(g);
    queries.push_back({"G=" + std::to_string(g), "SELECT " + col + ", sum(v) FROM r GROUP BY " + col, std::min(g, rows), true});
  }
  for (const Query& q : queries) {
    const int n = q.rows ? std::max<int>(50, static_cast<int>(static_cast<uint64_t>(reps) * 4096 / std::max<uint64_t>(4096, *q.rows)))
                         : reps;
    Cell t = measure(tc, tally_lean, q.sql, n, q.rows, q.explain);
    std::optional<Cell> p;
    if (pc) p = measure(pc, *pg_lean, q.sql, n, q.rows, q.explain);
    std::string check = t.check;
    if (check == "ok" && p && p->check != "ok") check = "postgres " + p->check;
    if (check == "ok" && p && p->rows.sorted != t.rows.sorted) check = "FAIL: rows differ from PostgreSQL's";
    all_ok &= check == "ok";
    const double outside = t.exec_us >= 0 ? t.lean_us - t.exec_us : -1;
    std::printf("%-9s %6d | %9.1f %9.1f %9.1f %9.1f %9.1f %10.1f | %9.1f %9.1f %9.1f %7.2f | %s\n", q.label.c_str(), n,
                t.libpq_us, t.libpq_p90, t.lean_us, t.lean_p90, t.exec_us, outside, p ? p->libpq_us : -1, p ? p->lean_us : -1,
                p ? p->exec_us : -1, p ? t.lean_us / p->lean_us : 0.0, check.c_str());
    std::fflush(stdout);
    phases.emplace_back(q.label, std::move(t));
  }
  // Where a query's time goes on Tally's side: gap_us is what passes between
  // the end of the executor's timed part (Execution Time) and the first
  // DataRow reaching the client, minus nothing: it includes one loopback
  // hop and the client's recv.
  std::printf("\nTally phases (WireClient::query_phases, medians; Execute+Sync sent together):\n");
  std::printf("%-9s | %9s %12s %9s %9s | %9s\n", "query", "bind_us", "first_row_us", "rest_us", "exec_us", "gap_us");
  for (const auto& [label, t] : phases) {
    std::printf("%-9s | %9.1f %12.1f %9.1f %9.1f | %9.1f\n", label.c_str(), t.bind_us, t.first_row_us, t.rest_us,
                t.exec_us, t.exec_us >= 0 ? t.first_row_us - t.exec_us : -1.0);
  }
  if (trace) {
    // A tallyd of its own at log level debug, so the first two tables were
    // measured without the timeline's stamps and log lines.
    tally::testing::TallyServer traced(tallyd, tallyd_args + " --log-level debug");
    PGconn* c = PQconnectdb(traced.conninfo().c_str());
    if (PQstatus(c) != CONNECTION_OK) {
      std::fprintf(stderr, "connect failed\n");
      return 1;
    }
    load(c, rows, groups);
    PQfinish(c);
    tally::bench::WireClient client(traced.conninfo());
    if (!set_statement.empty()) client.query(set_statement, false);
    std::printf("\nTally server timeline (--log-level debug; medians, us after the Execute's receipt; client first_row_us\n"
                "from the same run):\n");
    std::printf("%-9s | %9s %9s %9s %9s %9s %9s | %9s %9s %9s\n", "query", "exec_beg", "exec_end", "result", "first_row",
                "done", "rfq", "end->row", "client_1st", "lines");
    size_t from = 0;
    for (const Query& q : queries) {
      if (!q.explain) continue;
      const int n = std::max<int>(50, static_cast<int>(static_cast<uint64_t>(reps) * 4096 / std::max<uint64_t>(4096, *q.rows)));
      for (int i = 0; i < 3; ++i) client.query_phases(q.sql);  // warm-up
      timeline_fields(traced.log_path(), from);
      std::vector<double> firsts;
      for (int i = 0; i < n; ++i) firsts.push_back(client.query_phases(q.sql).first_row_us);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the log sink writes every 50 ms
      auto f = timeline_fields(traced.log_path(), from);
      std::vector<double> gaps;
      const auto& ends = f["executor_end_us"];
      const auto& rows_at = f["first_data_row_us"];
      for (size_t i = 0; i < std::min(ends.size(), rows_at.size()); ++i) gaps.push_back(rows_at[i] - ends[i]);
      std::printf("%-9s | %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f | %9.1f %9.1f %9zu\n", q.label.c_str(),
                  quantile(f["executor_start_us"], 0.5), quantile(ends, 0.5), quantile(f["result_ready_us"], 0.5),
                  quantile(rows_at, 0.5), quantile(f["statement_done_us"], 0.5), quantile(f["ready_for_query_us"], 0.5),
                  quantile(gaps, 0.5), quantile(firsts, 0.5), ends.size());
    }
    std::printf("exec_beg/exec_end: the executor's timed part (Execution Time); result: the result set handed to the\n"
                "portal; first_row: the first write(2) carrying a DataRow returned; done: CommandComplete buffered;\n"
                "rfq: ReadyForQuery flushed; end->row: first_row - exec_end per query; last column: lines read.\n");
  }
  std::printf("libpq_us/lean_us: median wall time per query (PQexec / lean client, text results), p90 next to each;\n"
              "exec_us: median EXPLAIN ANALYZE Execution Time; outside_us = lean_us - exec_us: parse, plan, catalog,\n"
              "encoding, socket and client; pg_*: the same for PostgreSQL 15; lean/pg: Tally's lean time over PostgreSQL's.\n");
  PQfinish(tc);
  if (pc) PQfinish(pc);
  return all_ok ? 0 : 1;
}
