// CPU engine benchmark: GROUP BY over N rows of (int4 key, int4 value) at
// G = 1, 16, 1K, 64K, 1M, 8M groups, on tallyd (the CPU engine) and on a
// PostgreSQL 15 started in the same run (parallel workers on, warm), both
// through the wire protocol (libpq). Every result is checked against
// PostgreSQL's (row count and an order-independent checksum of the text rows).
// Also times returning every group row to the client in text and binary.
//
// Usage: cpu_bench --tallyd PATH [--rows N] [--runs R]
#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tests/sql/pg_servers.hpp"

namespace {

struct Outcome {
  double seconds = 0;
  uint64_t rows = 0;
  uint64_t checksum = 0;
};

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

uint64_t mix(uint64_t x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
  return x;
}

// Runs a query (text or binary results), returns time, rows and a checksum of
// the rows that does not depend on their order.
Outcome run_query(PGconn* c, const std::string& sql, bool binary) {
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
    uint64_t h = 0x12345;
    for (int f = 0; f < fields; ++f) {
      const char* v = PQgetvalue(r, i, f);
      const int len = PQgetlength(r, i, f);
      h = mix(h ^ std::hash<std::string_view>{}(std::string_view(v, static_cast<size_t>(len))) ^ static_cast<uint64_t>(f));
    }
    o.checksum += h;
  }
  PQclear(r);
  return o;
}

Outcome best_of(PGconn* c, const std::string& sql, bool binary, int runs) {
  run_query(c, sql, binary);  // warm
  Outcome best;
  for (int i = 0; i < runs; ++i) {
    Outcome o = run_query(c, sql, binary);
    if (i == 0 || o.seconds < best.seconds) best = o;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::string tallyd;
  uint64_t rows = 10'000'000;
  int runs = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--tallyd") tallyd = argv[i + 1];
    else if (flag == "--rows") rows = std::stoull(argv[i + 1]);
    else if (flag == "--runs") runs = std::stoi(argv[i + 1]);
  }
  if (tallyd.empty()) {
    std::fprintf(stderr, "usage: cpu_bench --tallyd PATH [--rows N] [--runs R]\n");
    return 2;
  }
  const std::vector<uint64_t> group_counts = {1, 16, 1024, 65536, 1048576, 8388608};
  const std::vector<std::string> columns = {"g1", "g16", "g1k", "g64k", "g1m", "g8m"};

  tally::testing::PostgresServer pg;
  tally::testing::TallyServer tally(tallyd);
  PGconn* pc = connect(pg.conninfo());
  PGconn* tc = connect(tally.conninfo());
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
  {
    PGresult* r = PQexec(tc, "COPY r FROM STDIN");
    if (PQresultStatus(r) != PGRES_COPY_IN) {
      std::fprintf(stderr, "COPY failed: %s\n", PQerrorMessage(tc));
      return 1;
    }
    PQclear(r);
    std::string buffer;
    char line[160];
    for (uint64_t i = 0; i < rows; ++i) {
      int n = 0;
      for (uint64_t g : group_counts) n += std::snprintf(line + n, sizeof line - static_cast<size_t>(n), "%llu\t",
                                                          static_cast<unsigned long long>((i * 2654435761ULL) % g));
      n += std::snprintf(line + n, sizeof line - static_cast<size_t>(n), "%lld\n",
                         static_cast<long long>((i * 7919) % 1000) - 500);
      buffer.append(line, static_cast<size_t>(n));
      if (buffer.size() > (1 << 20)) {
        PQputCopyData(tc, buffer.data(), static_cast<int>(buffer.size()));
        buffer.clear();
      }
    }
    PQputCopyData(tc, buffer.data(), static_cast<int>(buffer.size()));
    PQputCopyEnd(tc, nullptr);
    r = PQgetResult(tc);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
      std::fprintf(stderr, "COPY failed: %s\n", PQerrorMessage(tc));
      return 1;
    }
    PQclear(r);
    while ((r = PQgetResult(tc)) != nullptr) PQclear(r);
  }
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  std::printf("Tally COPY: %.2f s (%.2f M rows/s)\n\n", load_s, static_cast<double>(rows) / load_s / 1e6);

  bool all_ok = true;
  std::printf("%-9s %-6s %10s %10s %12s %12s %8s %s\n", "G", "query", "tally_s", "pg_s", "tally_Mrow/s", "pg_Mrow/s",
              "ratio", "check");
  for (size_t k = 0; k < columns.size(); ++k) {
    const std::string& g = columns[k];
    const std::vector<std::pair<std::string, std::string>> queries = {
        {"sum", "SELECT " + g + ", sum(v) FROM r GROUP BY " + g},
        {"5aggs", "SELECT " + g + ", count(*), sum(v), min(v), max(v), avg(v) FROM r GROUP BY " + g}};
    for (const auto& [name, sql] : queries) {
      const Outcome t = best_of(tc, sql, false, runs);
      const Outcome p = best_of(pc, sql, false, runs);
      const bool ok = t.rows == p.rows && t.checksum == p.checksum && t.rows == std::min<uint64_t>(group_counts[k], rows);
      all_ok &= ok;
      std::printf("%-9llu %-6s %10.3f %10.3f %12.1f %12.1f %7.1fx %s\n",
                  static_cast<unsigned long long>(group_counts[k]), name.c_str(), t.seconds, p.seconds,
                  static_cast<double>(rows) / t.seconds / 1e6, static_cast<double>(rows) / p.seconds / 1e6,
                  p.seconds / t.seconds, ok ? "ok" : "MISMATCH");
      std::fflush(stdout);
    }
  }

  // Returning every group row: the largest G, text and binary.
  std::printf("\nresult streaming (every group row of G=%llu to the client):\n",
              static_cast<unsigned long long>(std::min<uint64_t>(group_counts.back(), rows)));
  std::printf("%-7s %10s %10s %14s %14s %8s\n", "format", "tally_s", "pg_s", "tally_Mrows/s", "pg_Mrows/s", "ratio");
  for (bool binary : {false, true}) {
    const std::string sql = "SELECT g8m, sum(v) FROM r GROUP BY g8m";
    const Outcome t = best_of(tc, sql, binary, runs);
    const Outcome p = best_of(pc, sql, binary, runs);
    const bool ok = t.rows == p.rows && (binary || t.checksum == p.checksum);
    all_ok &= ok;
    std::printf("%-7s %10.3f %10.3f %14.2f %14.2f %7.1fx %s\n", binary ? "binary" : "text", t.seconds, p.seconds,
                static_cast<double>(t.rows) / t.seconds / 1e6, static_cast<double>(p.rows) / p.seconds / 1e6,
                p.seconds / t.seconds, ok ? "ok" : "MISMATCH");
  }
  // Pure streaming: every stored row of two columns, no aggregation.
  {
    const std::string sql = "SELECT g8m, v FROM r";
    for (bool binary : {false, true}) {
      const Outcome t = best_of(tc, sql, binary, 1);
      const Outcome p = best_of(pc, sql, binary, 1);
      const bool ok = t.rows == p.rows && (binary || t.checksum == p.checksum);
      all_ok &= ok;
      std::printf("scan-%-2s %10.3f %10.3f %14.2f %14.2f %7.1fx %s\n", binary ? "b" : "t", t.seconds, p.seconds,
                  static_cast<double>(t.rows) / t.seconds / 1e6, static_cast<double>(p.rows) / p.seconds / 1e6,
                  p.seconds / t.seconds, ok ? "ok" : "MISMATCH");
    }
  }
  PQfinish(pc);
  PQfinish(tc);
  std::printf("\n%s\n", all_ok ? "all results match PostgreSQL" : "SOME RESULTS DIFFER FROM POSTGRESQL");
  return all_ok ? 0 : 1;
}
