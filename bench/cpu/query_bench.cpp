// Times one query on a running server with the lean wire client (best of R),
// for profiling a server between runs (perf record/stat -p <server pid>);
// and prints cpu_bench's table as COPY text, to load such a server once.
//
// Usage: cpu_query_bench --generate ROWS > r.tsv
//          (then: CREATE TABLE r (g1 int, g16 int, g1k int, g64k int, g1m int, g8m int, v int);
//                 \copy r from 'r.tsv')
//        cpu_query_bench --conninfo "host=127.0.0.1 port=5461 user=tally dbname=tally" [--runs R]
//                        [--binary] [--libpq] SQL
// --libpq times PQexecParams (libpq parses and keeps every row, as
// cpu_bench's libpq client does) instead of the lean client.
#include <chrono>
#include <cstdio>
#include <string>

#include "bench/cpu/wire_client.hpp"
#include <libpq-fe.h>

int main(int argc, char** argv) {
  std::string conninfo, sql;
  unsigned long long generate = 0;
  int runs = 3;
  bool binary = false;
  bool libpq = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--generate" && i + 1 < argc) generate = std::stoull(argv[++i]);
    else if (arg == "--conninfo" && i + 1 < argc) conninfo = argv[++i];
    else if (arg == "--runs" && i + 1 < argc) runs = std::stoi(argv[++i]);
    else if (arg == "--binary") binary = true;
    else if (arg == "--libpq") libpq = true;
    else sql = arg;
  }
  if (generate > 0) {
    // cpu_bench's rows: keys (i * 2654435761) mod G, values (i * 7919) mod 1000 - 500.
    const unsigned long long groups[] = {1, 16, 1024, 65536, 1048576, 8388608};
    for (unsigned long long i = 0; i < generate; ++i) {
      for (unsigned long long g : groups) std::printf("%llu\t", (i * 2654435761ULL) % g);
      std::printf("%lld\n", static_cast<long long>((i * 7919) % 1000) - 500);
    }
    return 0;
  }
  if (conninfo.empty() || sql.empty()) {
    std::fprintf(stderr, "usage: cpu_query_bench --generate ROWS | --conninfo CONNINFO [--runs R] [--binary] SQL\n");
    return 2;
  }
  double best = 0;
  if (libpq) {
    PGconn* c = PQconnectdb(conninfo.c_str());
    if (PQstatus(c) != CONNECTION_OK) {
      std::fprintf(stderr, "connect failed: %s\n", PQerrorMessage(c));
      return 1;
    }
    for (int i = 0; i < runs; ++i) {
      const auto start = std::chrono::steady_clock::now();
      PGresult* r = PQexecParams(c, sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr, binary ? 1 : 0);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        std::fprintf(stderr, "query failed: %s\n", PQerrorMessage(c));
        return 1;
      }
      if (i == 0 || s < best) best = s;
      std::printf("run %d: %.3f s, %d rows (libpq)\n", i + 1, s, PQntuples(r));
      PQclear(r);
    }
    PQfinish(c);
    std::printf("best of %d: %.3f s\n", runs, best);
    return 0;
  }
  tally::bench::WireClient client(conninfo);
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const auto r = client.query(sql, binary);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i == 0 || s < best) best = s;
    std::printf("run %d: %.3f s, %llu rows, %llu DataRow bytes, checksum %016llx\n", i + 1, s,
                static_cast<unsigned long long>(r.rows), static_cast<unsigned long long>(r.bytes),
                static_cast<unsigned long long>(r.checksum));
  }
  std::printf("best of %d: %.3f s\n", runs, best);
  return 0;
}
