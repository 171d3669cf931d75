#pragma once
// What the TPC-H test (tests/tpch) and benchmark (bench/tpch) share: a libpq
// connection that loads a table with COPY from a file (xz-compressed or plain),
// the 22 queries split out of queries.sql, and one query's answer (column
// types and every value's text) with its time, compared with PostgreSQL's.
#include <libpq-fe.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tally::tpch {

inline const char* const kTables[] = {"region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem"};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// (name, text) of each query in queries.sql, each preceded by "-- TPC-H Qn"
// (or "-- ClickBench Qn": bench/clickbench/queries.sql).
inline std::vector<std::pair<std::string, std::string>> split_queries(const std::string& queries) {
  std::vector<std::pair<std::string, std::string>> list;
  const std::regex marker(R"(^-- (?:TPC-H|ClickBench) (Q\d+)\s*$)");
  std::istringstream lines(queries);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_match(line, m, marker)) list.emplace_back(m[1], "");
    else if (!list.empty()) list.back().second += line + "\n";
  }
  return list;
}

struct Connection {
  explicit Connection(const std::string& conninfo) : conn(PQconnectdb(conninfo.c_str())) {
    if (PQstatus(conn) != CONNECTION_OK) throw std::runtime_error(PQerrorMessage(conn));
  }
  ~Connection() { PQfinish(conn); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  void exec(const std::string& sql) {
    PGresult* r = PQexec(conn, sql.c_str());
    const auto status = PQresultStatus(r);
    const std::string error = PQresultErrorMessage(r);
    PQclear(r);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) throw std::runtime_error(sql + ": " + error);
  }
  // COPY table FROM STDIN with `options` (e.g. "FORMAT csv"), fed from
  // `path`: decompressed through xz when it ends in .xz, else read as is.
  void copy_in(const std::string& table, const std::string& path, const std::string& options) {
    PGresult* r = PQexec(conn, ("COPY " + table + " FROM STDIN (" + options + ")").c_str());
    const bool ready = PQresultStatus(r) == PGRES_COPY_IN;
    PQclear(r);
    if (!ready) throw std::runtime_error("COPY " + table + ": " + PQerrorMessage(conn));
    const bool xz = path.size() > 3 && path.compare(path.size() - 3, 3, ".xz") == 0;
    FILE* in = xz ? ::popen(("xz -dc " + path).c_str(), "r") : std::fopen(path.c_str(), "rb");
    if (in == nullptr) throw std::runtime_error("cannot read " + path);
    static char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, in)) > 0) PQputCopyData(conn, buf, static_cast<int>(n));
    if (xz) ::pclose(in);
    else std::fclose(in);
    PQputCopyEnd(conn, nullptr);
    r = PQgetResult(conn);
    const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    while ((r = PQgetResult(conn)) != nullptr) PQclear(r);
    if (!ok) throw std::runtime_error("COPY " + table + ": " + PQerrorMessage(conn));
  }
  PGconn* conn;
};

struct Answer {
  bool ok = false;
  std::string error;
  std::vector<unsigned> types;
  std::vector<std::string> rows;  // tab-separated, NULL for NULL
  double seconds = 0;
};

inline Answer ask(Connection& c, const std::string& sql) {
  Answer a;
  const auto start = std::chrono::steady_clock::now();
  PGresult* r = PQexec(c.conn, sql.c_str());
  a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  a.ok = PQresultStatus(r) == PGRES_TUPLES_OK;
  if (!a.ok) {
    a.error = PQresultErrorMessage(r);
    PQclear(r);
    return a;
  }
  for (int f = 0; f < PQnfields(r); ++f) a.types.push_back(PQftype(r, f));
  for (int row = 0; row < PQntuples(r); ++row) {
    std::string line;
    for (int f = 0; f < PQnfields(r); ++f) {
      if (f > 0) line += '\t';
      line += PQgetisnull(r, row, f) ? "NULL" : PQgetvalue(r, row, f);
    }
    a.rows.push_back(std::move(line));
  }
  PQclear(r);
  return a;
}

// "" when equal, else what differs.
inline std::string difference(const Answer& tally, const Answer& pg) {
  if (!tally.ok) return "error: " + tally.error;
  if (tally.types != pg.types) return "result column types differ";
  if (tally.rows.size() != pg.rows.size()) {
    return std::to_string(tally.rows.size()) + " rows, PostgreSQL " + std::to_string(pg.rows.size());
  }
  for (size_t i = 0; i < pg.rows.size(); ++i) {
    if (tally.rows[i] != pg.rows[i]) {
      return "row " + std::to_string(i + 1) + ": " + tally.rows[i] + " | PostgreSQL: " + pg.rows[i];
    }
  }
  return "";
}

}  // namespace tally::tpch
