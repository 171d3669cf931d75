// CPU engine benchmark: GROUP BY over N rows of (int4 key, int4 value) at
// G = 1, 16, 1K, 64K, 1M, 8M groups, on tallyd (the CPU engine) and on a
// PostgreSQL 15 started in the same run (parallel workers on, warm), both
// through the wire protocol (libpq). Every result is checked against
// PostgreSQL's (row count and an order-independent checksum of the text rows).
// Also times returning every group row to the client in text and binary.
// Two clients, each used for BOTH servers: libpq (PQexecParams, which keeps
// every row in a PGresult) and a lean wire client (wire_client.hpp: parses
// DataRows in place); the client's own CPU time is printed beside the
// streaming figures.
//
// Usage: cpu_bench --tallyd PATH [--rows N] [--runs R] [--clients lean,libpq]
//                  [--groups G[,G...]] [--streaming yes|no] [--shape single|multikey]
// --shape multikey runs only the several-key-column table instead (run_multikey).
// --groups keeps only those group counts (e.g. 8388608 while profiling
// tallyd); --streaming no leaves out the rows-back-to-the-client table.
#include <libpq-fe.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/common/pg_copy.hpp"
#include "bench/cpu/wire_client.hpp"
#include "tests/sql/pg_servers.hpp"

namespace {

using tally::bench::WireClient;

struct Outcome {
  double seconds = 0;
  double client_cpu = 0;  // this process's user + system CPU seconds during the query
  uint64_t rows = 0;
  uint64_t checksum = 0;
};

double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

PGconn* connect(const std::string& conninfo) {
  PGconn* c = PQconnectdb(conninfo.c_str());
  if (PQstatus(c) != CONNECTION_OK) {
    std::fprintf(stderr, "connect failed: %s\n", PQerrorMessage(c));
    std::exit(1);
  }
  return c;
}

void exec(PGconn* c, const std::string& sql) {
  PGresult* r = PQexec(c, sql.c_str());
  const auto status = PQresultStatus(r);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    std::fprintf(stderr, "%s failed: %s\n", sql.c_str(), PQerrorMessage(c));
    std::exit(1);
  }
  PQclear(r);
}

// Runs a query (text or binary results), returns time, rows and a checksum of
// the rows that does not depend on their order.
Outcome run_query(PGconn* c, const std::string& sql, bool binary) {
  const double cpu_start = process_cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  PGresult* r = PQexecParams(c, sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr, binary ? 1 : 0);
  const auto stop = std::chrono::steady_clock::now();
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    std::fprintf(stderr, "%s failed: %s\n", sql.c_str(), PQerrorMessage(c));
    std::exit(1);
  }
  Outcome o;
  o.seconds = std::chrono::duration<double>(stop - start).count();
  o.rows = static_cast<uint64_t>(PQntuples(r));
  const int fields = PQnfields(r);
  for (int i = 0; i < PQntuples(r); ++i) {
    uint64_t h = tally::bench::kRowHashSeed;
    for (int f = 0; f < fields; ++f) {
      const char* v = PQgetvalue(r, i, f);
      const int len = PQgetlength(r, i, f);
      h = tally::bench::field_hash(h, std::string_view(v, static_cast<size_t>(len)), f);
    }
    o.checksum += h;
  }
  PQclear(r);
  o.client_cpu = process_cpu_seconds() - cpu_start;  // includes PQclear and the checksum
  return o;
}

Outcome run_query(WireClient& c, const std::string& sql, bool binary) {
  const double cpu_start = process_cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  const WireClient::Result r = c.query(sql, binary);
  Outcome o;
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  o.client_cpu = process_cpu_seconds() - cpu_start;
  o.rows = r.rows;
  o.checksum = r.checksum;
  return o;
}

// One server as both clients reach it.
struct Server {
  PGconn* libpq;
  WireClient* lean;
};

// Best of `runs` after a warm run (warm = false: the caller already warmed
// this query on this server).
Outcome best_of(Server& server, bool lean, const std::string& sql, bool binary, int runs, bool warm = true) {
  auto once = [&] { return lean ? run_query(*server.lean, sql, binary) : run_query(server.libpq, sql, binary); };
  if (warm) once();
  Outcome best;
  for (int i = 0; i < runs; ++i) {
    Outcome o = once();
    if (i == 0 || o.seconds < best.seconds) best = o;
  }
  return best;
}

// COPY `rows` rows into `table` on `c`, line(i, buffer) writing row i's text
// line (tab-separated, newline-terminated) into buffer; false on an error.
bool copy_rows(PGconn* c, const std::string& table, uint64_t rows,
               const std::function<int(uint64_t, char*, size_t)>& line) {
  PGresult* r = PQexec(c, ("COPY " + table + " FROM STDIN").c_str());
  if (PQresultStatus(r) != PGRES_COPY_IN) {
    std::fprintf(stderr, "COPY failed: %s\n", PQerrorMessage(c));
    return false;
  }
  PQclear(r);
  std::string buffer;
  char text[160];
  for (uint64_t i = 0; i < rows; ++i) {
    buffer.append(text, static_cast<size_t>(line(i, text, sizeof text)));
    if (buffer.size() > (1 << 20)) {
      PQputCopyData(c, buffer.data(), static_cast<int>(buffer.size()));
      buffer.clear();
    }
  }
  PQputCopyData(c, buffer.data(), static_cast<int>(buffer.size()));
  if (std::string error; !tally::bench::finish_copy(c, &error)) {
    std::fprintf(stderr, "COPY failed: %s\n", error.c_str());
    return false;
  }
  return true;
}

// --shape multikey: GROUP BY over several key columns (H2O groupby's
// shapes): two text keys of 100 values, two int keys of 100 values, and all
// four, on N rows, Tally against PostgreSQL, results checked.
int run_multikey(PGconn* pc, PGconn* tc, Server& pg_server, Server& tally_server, uint64_t rows, int runs,
                 const std::vector<bool>& kinds) {
  const std::string create = "CREATE TABLE m (id1 text, id2 text, id4 int, id5 int, v1 int)";
  exec(pc, create);
  exec(tc, create);
  // Each key from its own multiplicative hash of i, so that the pairs cover
  // their 10,000 combinations; v1 in 1..5 as H2O's.
  std::printf("loading %llu rows into PostgreSQL and Tally...\n", static_cast<unsigned long long>(rows));
  std::fflush(stdout);
  exec(pc, "INSERT INTO m SELECT 'id' || lpad(((i * 2654435761) % 100)::text, 3, '0'), "
           "'id' || lpad(((i * 40503) % 10007 % 100)::text, 3, '0'), ((i * 7919) % 101 % 100)::int, "
           "((i * 104729) % 1009 % 100)::int, (1 + i % 5)::int FROM generate_series(0::int8, " +
               std::to_string(rows - 1) + ") i");
  exec(pc, "VACUUM ANALYZE m");
  exec(pc, "SET max_parallel_workers_per_gather = 2");
  const auto load_start = std::chrono::steady_clock::now();
  const bool loaded = copy_rows(tc, "m", rows, [](uint64_t i, char* out, size_t size) {
    return std::snprintf(out, size, "id%03llu\tid%03llu\t%llu\t%llu\t%llu\n",
                         static_cast<unsigned long long>((i * 2654435761ULL) % 100),
                         static_cast<unsigned long long>((i * 40503ULL) % 10007 % 100),
                         static_cast<unsigned long long>((i * 7919ULL) % 101 % 100),
                         static_cast<unsigned long long>((i * 104729ULL) % 1009 % 100),
                         static_cast<unsigned long long>(1 + i % 5));
  });
  if (!loaded) return 1;
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  std::printf("Tally COPY: %.2f s\n\n", load_s);
  const std::vector<std::pair<std::string, std::string>> queries = {
      {"id1,id2", "SELECT id1, id2, sum(v1) FROM m GROUP BY id1, id2"},
      {"id4,id5", "SELECT id4, id5, sum(v1), count(*) FROM m GROUP BY id4, id5"},
      {"4 keys", "SELECT id1, id2, id4, id5, sum(v1) FROM m GROUP BY id1, id2, id4, id5"}};
  bool all_ok = true;
  std::printf("%-8s %-6s %10s %10s %10s %8s %s\n", "keys", "client", "groups", "tally_s", "pg_s", "ratio", "check");
  for (const auto& [name, sql] : queries) {
    for (size_t c = 0; c < kinds.size(); ++c) {
      const Outcome t = best_of(tally_server, kinds[c], sql, false, runs, c == 0);
      const Outcome p = best_of(pg_server, kinds[c], sql, false, runs, c == 0);
      const bool ok = t.rows == p.rows && t.checksum == p.checksum;
      all_ok &= ok;
      std::printf("%-8s %-6s %10llu %10.3f %10.3f %7.1fx %s\n", name.c_str(), kinds[c] ? "lean" : "libpq",
                  static_cast<unsigned long long>(p.rows), t.seconds, p.seconds, p.seconds / t.seconds,
                  ok ? "ok" : "MISMATCH");
      std::fflush(stdout);
    }
  }
  PQfinish(pc);
  PQfinish(tc);
  std::printf("\n%s\n", all_ok ? "all results match PostgreSQL" : "SOME RESULTS DIFFER FROM POSTGRESQL");
  return all_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string tallyd;
  uint64_t rows = 10'000'000;
  int runs = 2;
  std::string clients = "lean,libpq";
  std::string groups_filter;  // "" = every G
  bool streaming = true;
  std::string shape = "single";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--tallyd") tallyd = argv[i + 1];
    else if (flag == "--rows") rows = std::stoull(argv[i + 1]);
    else if (flag == "--runs") runs = std::stoi(argv[i + 1]);
    else if (flag == "--clients") clients = argv[i + 1];
    else if (flag == "--groups") groups_filter = argv[i + 1];
    else if (flag == "--streaming") streaming = std::string(argv[i + 1]) != "no";
    else if (flag == "--shape") shape = argv[i + 1];
  }
  if (tallyd.empty()) {
    std::fprintf(stderr,
                 "usage: cpu_bench --tallyd PATH [--rows N] [--runs R] [--clients lean,libpq] [--groups G[,G...]] "
                 "[--streaming yes|no] [--shape single|multikey]\n");
    return 2;
  }
  const std::vector<uint64_t> group_counts = {1, 16, 1024, 65536, 1048576, 8388608};
  const std::vector<std::string> columns = {"g1", "g16", "g1k", "g64k", "g1m", "g8m"};

  tally::testing::PostgresServer pg;
  tally::testing::TallyServer tally(tallyd);
  PGconn* pc = connect(pg.conninfo());
  PGconn* tc = connect(tally.conninfo());
  std::vector<bool> kinds;  // true = lean
  if (clients.find("lean") != std::string::npos) kinds.push_back(true);
  if (clients.find("libpq") != std::string::npos) kinds.push_back(false);
  if (shape == "multikey") {
    WireClient pg_lean(pg.conninfo());
    WireClient tally_lean(tally.conninfo());
    Server pg_server{pc, &pg_lean};
    Server tally_server{tc, &tally_lean};
    return run_multikey(pc, tc, pg_server, tally_server, rows, runs, kinds);
  }
  const std::string create = "CREATE TABLE r (g1 int, g16 int, g1k int, g64k int, g1m int, g8m int, v int)";
  exec(pc, create);
  exec(tc, create);

  // Keys: (i * 2654435761) mod G hits every key (the multiplier is prime);
  // values: (i * 7919) mod 1000 - 500, negatives included.
  std::printf("loading %llu rows into PostgreSQL and Tally...\n", static_cast<unsigned long long>(rows));
  std::fflush(stdout);
  {
    std::string sql = "INSERT INTO r SELECT ";
    for (size_t k = 0; k < columns.size(); ++k) {
      sql += "((i * 2654435761) % " + std::to_string(group_counts[k]) + ")::int, ";
    }
    sql += "((i * 7919) % 1000 - 500)::int FROM generate_series(0::int8, " + std::to_string(rows - 1) + ") i";
    exec(pc, sql);
    exec(pc, "VACUUM ANALYZE r");
    exec(pc, "SET max_parallel_workers_per_gather = 2");
  }
  const auto load_start = std::chrono::steady_clock::now();
  const bool loaded = copy_rows(tc, "r", rows, [&](uint64_t i, char* line, size_t size) {
    int n = 0;
    for (uint64_t g : group_counts) n += std::snprintf(line + n, size - static_cast<size_t>(n), "%llu\t",
                                                        static_cast<unsigned long long>((i * 2654435761ULL) % g));
    n += std::snprintf(line + n, size - static_cast<size_t>(n), "%lld\n",
                       static_cast<long long>((i * 7919) % 1000) - 500);
    return n;
  });
  if (!loaded) return 1;
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  std::printf("Tally COPY: %.2f s (%.2f M rows/s)\n\n", load_s, static_cast<double>(rows) / load_s / 1e6);

  WireClient pg_lean(pg.conninfo());
  WireClient tally_lean(tally.conninfo());
  Server pg_server{pc, &pg_lean};
  Server tally_server{tc, &tally_lean};
  {
    double load[3] = {0, 0, 0};
    if (getloadavg(load, 3) > 0) std::printf("load average before the queries: %.2f %.2f %.2f\n\n", load[0], load[1], load[2]);
  }

  bool all_ok = true;
  std::printf("%-9s %-6s %-6s %10s %10s %12s %12s %8s %s\n", "G", "query", "client", "tally_s", "pg_s", "tally_Mrow/s",
              "pg_Mrow/s", "ratio", "check");
  auto wanted = [&](uint64_t g) {
    if (groups_filter.empty()) return true;
    const std::string list = "," + groups_filter + ",";
    return list.find("," + std::to_string(g) + ",") != std::string::npos;
  };
  for (size_t k = 0; k < columns.size(); ++k) {
    if (!wanted(group_counts[k])) continue;
    const std::string& g = columns[k];
    const std::vector<std::pair<std::string, std::string>> queries = {
        {"sum", "SELECT " + g + ", sum(v) FROM r GROUP BY " + g},
        {"5aggs", "SELECT " + g + ", count(*), sum(v), min(v), max(v), avg(v) FROM r GROUP BY " + g}};
    for (const auto& [name, sql] : queries) {
      for (size_t c = 0; c < kinds.size(); ++c) {
        const bool lean = kinds[c];
        const Outcome t = best_of(tally_server, lean, sql, false, runs, c == 0);
        const Outcome p = best_of(pg_server, lean, sql, false, runs, c == 0);
        const bool ok = t.rows == p.rows && t.checksum == p.checksum && t.rows == std::min<uint64_t>(group_counts[k], rows);
        all_ok &= ok;
        std::printf("%-9llu %-6s %-6s %10.3f %10.3f %12.1f %12.1f %7.1fx %s\n",
                    static_cast<unsigned long long>(group_counts[k]), name.c_str(), lean ? "lean" : "libpq", t.seconds,
                    p.seconds, static_cast<double>(rows) / t.seconds / 1e6, static_cast<double>(rows) / p.seconds / 1e6,
                    p.seconds / t.seconds, ok ? "ok" : "MISMATCH");
        std::fflush(stdout);
      }
    }
  }

  // Returning rows: every group row of the largest G, and a plain scan of
  // every stored row (two columns), text and binary, with each client.
  // client_cpu: this process's CPU seconds during the query (the client's own cost).
  if (streaming) {
  std::printf("\nresult streaming (rows back to the client):\n");
  std::printf("%-6s %-7s %-6s %9s %9s %11s %11s %8s %12s %10s %s\n", "query", "format", "client", "tally_s", "pg_s",
              "tally_Mr/s", "pg_Mr/s", "ratio", "tally_cli_s", "pg_cli_s", "check");
  const std::vector<std::pair<std::string, std::string>> streams = {
      {"g8m", "SELECT g8m, sum(v) FROM r GROUP BY g8m"}, {"scan", "SELECT g8m, v FROM r"}};
  for (const auto& [name, sql] : streams) {
    for (bool binary : {false, true}) {
      for (size_t c = 0; c < kinds.size(); ++c) {
        const bool lean = kinds[c];
        const int stream_runs = name == "scan" ? 1 : runs;
        const Outcome t = best_of(tally_server, lean, sql, binary, stream_runs, c == 0);
        const Outcome p = best_of(pg_server, lean, sql, binary, stream_runs, c == 0);
        // Binary rows are compared by checksum too: both servers send the same bytes.
        const bool ok = t.rows == p.rows && t.checksum == p.checksum;
        all_ok &= ok;
        std::printf("%-6s %-7s %-6s %9.3f %9.3f %11.2f %11.2f %7.1fx %12.2f %10.2f %s\n", name.c_str(),
                    binary ? "binary" : "text", lean ? "lean" : "libpq", t.seconds, p.seconds,
                    static_cast<double>(t.rows) / t.seconds / 1e6, static_cast<double>(p.rows) / p.seconds / 1e6,
                    p.seconds / t.seconds, t.client_cpu, p.client_cpu, ok ? "ok" : "MISMATCH");
        std::fflush(stdout);
      }
    }
  }
  }  // streaming
  {
    double load[3] = {0, 0, 0};
    if (getloadavg(load, 3) > 0) std::printf("\nload average after: %.2f %.2f %.2f\n", load[0], load[1], load[2]);
  }
  PQfinish(pc);
  PQfinish(tc);
  std::printf("\n%s\n", all_ok ? "all results match PostgreSQL" : "SOME RESULTS DIFFER FROM POSTGRESQL");
  return all_ok ? 0 : 1;
}
