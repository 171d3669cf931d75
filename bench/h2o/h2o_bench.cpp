// The H2O db-benchmark groupby questions on Tally, against PostgreSQL 15 or DuckDB.
//
// --check: loads the same generated table into a tallyd of this build and a
//   PostgreSQL 15 the program starts, runs the ten questions on both by the
//   benchmark's protocol, and compares every answer row by row (and the check
//   queries). Exit status 1 on any mismatch, on any error of a question not
//   listed in --known-gaps, and on a listed gap that no longer errors.
// --duckdb LIBDUCKDB: loads Tally (COPY of the file, and through libpq) and DuckDB (in memory,
//   read_csv of the same generated file) and times both by the protocol:
//   run 1 = first run, run 2 = warm; every answer checked against the other
//   system's; prints what ran in Tally (engine and variant) from tallyd's log
//   line of the warm run, or with --explain from an EXPLAIN ANALYZE of the
//   question (a third run: the log costs nothing).
//
// The protocol (db-benchmark): CREATE TABLE ans AS <question>, the check query
// over ans, DROP TABLE ans; the time is the first two.
//
// Usage: h2o_bench --tallyd PATH (--check | --duckdb LIBDUCKDB) [--rows 1e7] [--k 1e2]
//          [--na 0[,5]] [--sort 0|1] [--questions q1,q2,..] [--known-gaps q8,..]
//          [--timeout-s S] [--threads 16] [--csv-dir DIR] [--tallyd-args "..."] [--explain]
#include <libpq-fe.h>
#include <poll.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/common/pg_copy.hpp"
#include "bench/common/answer_rows.hpp"
#include "bench/common/duckdb_library.hpp"
#include "bench/h2o/groupby_data.hpp"
#include "bench/h2o/options.hpp"
#include "bench/h2o/questions.hpp"
#include "tests/sql/pg_servers.hpp"

namespace bench = tally::bench;
namespace h2o = tally::bench::h2o;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

void progress(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void progress(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::fputs("[h2o] ", stderr);
  std::vfprintf(stderr, fmt, args);
  std::fputc('\n', stderr);
  va_end(args);
}

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "h2o_bench: %s\n", message.c_str());
  std::exit(2);
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    item.erase(0, item.find_first_not_of(' '));
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

struct Options {
  bool check = false;
  std::string duckdb_path;
  std::string tallyd;
  std::string tallyd_args;
  h2o::GroupbyParams data;
  std::vector<unsigned> na_list{0};
  std::set<std::string> only;
  std::set<std::string> known_gaps;
  double timeout_s = 600;
  int threads = 16;
  std::string csv_dir = "/tmp";
  bool explain = false;
};

// ---- statements on a PostgreSQL-protocol server, with a client-side deadline ----

struct Outcome {
  bool ok = true;
  std::string error;  // "SQLSTATE: message", or "timeout after S s"
  double ms = 0;
  bench::Row check;     // the check query's row
};

// Runs one statement; waits at most timeout_s (then cancels it). Keeps the
// first row of the last result in `row` when given.
bool run_sql(PGconn* c, const std::string& sql, double timeout_s, std::string* error, bench::Row* row = nullptr) {
  if (!PQsendQuery(c, sql.c_str())) {
    *error = PQerrorMessage(c);
    return false;
  }
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  bool timed_out = false;
  while (PQisBusy(c)) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 && !timed_out) {
      timed_out = true;
      PGcancel* cancel = PQgetCancel(c);
      char buf[256];
      PQcancel(cancel, buf, sizeof buf);
      PQfreeCancel(cancel);
    }
    pollfd p{PQsocket(c), POLLIN, 0};
    ::poll(&p, 1, timed_out ? 1000 : static_cast<int>(std::min<long long>(left, 1000)));
    if (!PQconsumeInput(c)) break;
  }
  bool ok = true;
  while (PGresult* r = PQgetResult(c)) {
    const auto status = PQresultStatus(r);
    if (status == PGRES_TUPLES_OK && row != nullptr && PQntuples(r) > 0) {
      row->assign(static_cast<size_t>(PQnfields(r)), bench::Cell{});
      for (int i = 0; i < PQnfields(r); ++i) {
        auto& cell = (*row)[static_cast<size_t>(i)];
        cell.null = PQgetisnull(r, 0, i) != 0;
        cell.approx = PQftype(r, i) == 700 || PQftype(r, i) == 701;
        cell.text = PQgetvalue(r, 0, i);
      }
    } else if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK && ok) {
      ok = false;
      const char* code = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      *error = std::string(code ? code : "?????") + ": " + bench::primary_message(r);
    }
    PQclear(r);
  }
  if (timed_out) {
    char text[64];
    std::snprintf(text, sizeof text, "timeout after %g s (cancelled)", timeout_s);
    *error = text;
    return false;
  }
  return ok;
}

void must(PGconn* c, const std::string& sql, const char* who) {
  std::string error;
  if (!run_sql(c, sql, 3600, &error)) die(std::string(who) + ": " + sql + ": " + error);
}

PGconn* connect(const std::string& conninfo, const char* who) {
  PGconn* c = PQconnectdb(conninfo.c_str());
  if (PQstatus(c) != CONNECTION_OK) die(std::string(who) + ": connect failed: " + PQerrorMessage(c));
  // DROP TABLE IF EXISTS notices would interleave with the tables.
  PQsetNoticeProcessor(c, [](void*, const char*) {}, nullptr);
  return c;
}

// The benchmark's protocol for one run on a PostgreSQL-protocol server.
Outcome run_question(PGconn* c, const h2o::Question& q, double timeout_s) {
  std::string ignored;
  run_sql(c, "DROP TABLE IF EXISTS ans", 600, &ignored);
  Outcome o;
  const auto start = Clock::now();
  o.ok = run_sql(c, std::string("CREATE TABLE ans AS ") + q.sql, timeout_s, &o.error) &&
         run_sql(c, q.check, timeout_s, &o.error, &o.check);
  o.ms = ms_since(start);
  return o;
}

std::string ordered_answer(const h2o::Question& q) {
  std::string order;
  for (const auto& column : split(q.order_by)) {
    order += (order.empty() ? "" : ", ") + column + " NULLS LAST";
  }
  return "SELECT * FROM ans ORDER BY " + order;
}

// What Tally's EXPLAIN ANALYZE says ran: its first "Engine: ..." line, cut
// before the launch configuration. The whole plan goes to stderr, where the
// time each step took shows where a question's time goes.
std::string tally_engine(PGconn* c, const h2o::Question& q) {
  PGresult* r = nullptr;
  if (!PQsendQuery(c, (std::string("EXPLAIN ANALYZE ") + q.sql).c_str())) return "explain failed";
  std::string found;
  while ((r = PQgetResult(c)) != nullptr) {
    if (PQresultStatus(r) == PGRES_TUPLES_OK) {
      for (int i = 0; i < PQntuples(r); ++i) std::fprintf(stderr, "%s plan: %s\n", q.id, PQgetvalue(r, i, 0));
      for (int i = 0; i < PQntuples(r) && found.empty(); ++i) {
        std::string line = PQgetvalue(r, i, 0);
        const auto at = line.find("Engine: ");
        if (at == std::string::npos || line.find("variant") == std::string::npos) continue;
        line = line.substr(at + 8);
        const auto cut = line.find(", configuration");
        found = line.substr(0, cut);
      }
      for (int i = 0; i < PQntuples(r) && found.empty(); ++i) {
        std::string line = PQgetvalue(r, i, 0);
        const auto at = line.find("Engine: ");
        if (at != std::string::npos) found = line.substr(at + 8, 100);
      }
    } else if (PQresultStatus(r) != PGRES_COMMAND_OK) {
      const char* code = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      found = std::string("explain error ") + (code ? code : "?");
    }
    PQclear(r);
  }
  return found.empty() ? "?" : found;
}

// What ran for the last CREATE TABLE ans AS in tallyd's log after `offset`:
// its `query` line's engine and variant (log_statement = scans, the default,
// writes one per statement that reads table rows). The log is written by a
// background thread, so the line may come a little after the result.
std::string logged_engine(const std::string& log_path, std::streamoff offset) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::ifstream in(log_path);
    in.seekg(offset);
    std::string line, found;
    while (std::getline(in, line)) {
      if (line.find("event=query") == std::string::npos || line.find("command=CREATE") == std::string::npos) continue;
      const auto engine = line.find("engine=");
      const auto rows = line.find(" rows_scanned=");
      if (engine != std::string::npos) found = line.substr(engine, rows == std::string::npos ? 120 : rows - engine);
    }
    if (!found.empty()) return found;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return "? (no query line in tallyd's log)";
}

std::streamoff file_size(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<std::streamoff>(size);
}

// ---- loading ----

// Streams CSV blocks from `next` into COPY x; returns seconds.
double copy_in(PGconn* c, const char* who, uint64_t rows, const std::function<bool(std::string&)>& next,
               const std::function<uint64_t()>& rows_done) {
  must(c, "DROP TABLE IF EXISTS x", who);
  must(c, h2o::kCreateTable, who);
  PGresult* r = PQexec(c, "COPY x FROM STDIN (FORMAT csv, HEADER true)");
  if (PQresultStatus(r) != PGRES_COPY_IN) die(std::string(who) + ": COPY failed: " + PQerrorMessage(c));
  PQclear(r);
  const auto start = Clock::now();
  auto last = start;
  std::string block;
  bool more = true;
  while (more) {
    block.clear();
    more = next(block);
    if (PQputCopyData(c, block.data(), static_cast<int>(block.size())) != 1) {
      die(std::string(who) + ": COPY data: " + PQerrorMessage(c));
    }
    if (Clock::now() - last > std::chrono::seconds(10)) {
      last = Clock::now();
      progress("%s: COPY %.1fM of %.1fM rows, %.0f s", who, rows_done() / 1e6, rows / 1e6, ms_since(start) / 1e3);
    }
  }
  std::string error;
  if (!tally::bench::finish_copy(c, &error)) die(std::string(who) + ": COPY: " + error);
  return ms_since(start) / 1e3;
}

// Never time on zeros: the table must hold every generated row.
void assert_loaded(PGconn* c, const char* who, uint64_t rows) {
  bench::Row row;
  std::string error;
  if (!run_sql(c, "SELECT count(*) FROM x", 3600, &error, &row) || row.empty() ||
      row[0].text != std::to_string(rows)) {
    die(std::string(who) + ": table x does not hold " + std::to_string(rows) + " rows (" +
        (row.empty() ? error : row[0].text) + ")");
  }
}

double load_generated(PGconn* c, const char* who, const h2o::GroupbyParams& p) {
  h2o::GroupbyGenerator gen(p);
  const double s = copy_in(
      c, who, p.rows, [&](std::string& b) { return gen.next_block(b, 1 << 20); }, [&] { return gen.rows_done(); });
  assert_loaded(c, who, p.rows);
  return s;
}

double load_file(PGconn* c, const char* who, const std::string& path, uint64_t rows) {
  std::ifstream in(path, std::ios::binary);
  if (!in) die("cannot read " + path);
  const double bytes = static_cast<double>(std::filesystem::file_size(path));
  uint64_t read = 0;
  const double s = copy_in(
      c, who, rows,
      [&](std::string& b) {
        b.resize(1 << 20);
        in.read(b.data(), static_cast<std::streamsize>(b.size()));
        b.resize(static_cast<size_t>(in.gcount()));
        read += b.size();
        return static_cast<bool>(in);
      },
      [&] { return static_cast<uint64_t>(rows * (read / bytes)); });
  assert_loaded(c, who, rows);
  return s;
}

// COPY x FROM the file itself (the server reads it, as DuckDB's read_csv does):
// the load compared like for like; returns seconds.
double load_server_file(PGconn* c, const char* who, const std::string& path, uint64_t rows) {
  must(c, "DROP TABLE IF EXISTS x", who);
  must(c, h2o::kCreateTable, who);
  const auto start = Clock::now();
  must(c, "COPY x FROM '" + path + "' (FORMAT csv, HEADER true)", who);
  const double s = ms_since(start) / 1e3;
  assert_loaded(c, who, rows);
  return s;
}

std::string write_csv(const h2o::GroupbyParams& p, const std::string& dir) {
  const std::string path = dir + "/" + h2o::data_name(p) + ".csv";
  const auto start = Clock::now();
  progress("generating %s", path.c_str());
  h2o::GroupbyGenerator gen(p);
  std::ofstream out(path, std::ios::binary);
  std::string block;
  for (bool more = true; more;) {
    block.clear();
    more = gen.next_block(block, 1 << 22);
    out.write(block.data(), static_cast<std::streamsize>(block.size()));
  }
  out.close();
  if (!out) die("writing " + path + " failed (disk full?)");
  progress("generated %.1f GB in %.1f s", std::filesystem::file_size(path) / 1e9, ms_since(start) / 1e3);
  return path;
}

// ---- the two modes ----

std::string ratio(double numerator, double denominator) {
  if (denominator <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", numerator / denominator);
  return buf;
}

std::string ms_text(const Outcome& o) {
  if (!o.ok) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", o.ms);
  return buf;
}

std::string check_text(const bench::Row& row) { return bench::show(row); }

// Compares the check rows, then the ordered answers; "" when equal.
std::string compare_answers(const bench::Row& check_a, const bench::Row& check_b, bench::RowSource& a,
                            bench::RowSource& b, const char* a_name, const char* b_name, bool types,
                            uint64_t* rows, bool* check_nan = nullptr) {
  const bench::Comparison c = bench::compare_rows(a, b, a_name, b_name, types);
  *rows = c.rows;
  if (!c.equal) return c.difference;
  bool same = check_a.size() == check_b.size();
  bool nan = false;
  for (size_t i = 0; same && i < check_a.size(); ++i) {
    // A sum over a NaN is NaN in DuckDB; over the same answer's NULLs it is a number.
    nan = nan || check_a[i].nan || check_b[i].nan;
    same = bench::same_value(check_a[i], check_b[i]) || check_a[i].nan || check_b[i].nan;
  }
  if (!same) return "check query differs: " + check_text(check_a) + " vs " + check_text(check_b);
  if (check_nan != nullptr) *check_nan = nan;
  return "";
}

bool selected(const Options& o, const h2o::Question& q) { return o.only.empty() || o.only.count(q.id) != 0; }

int run_check(const Options& o) {
  tally::testing::PostgresServer pg;
  tally::testing::TallyServer tally(o.tallyd, o.tallyd_args);
  PGconn* t = connect(tally.conninfo(), "tally");
  PGconn* p = connect(pg.conninfo(), "postgres");
  int failures = 0;
  for (unsigned na : o.na_list) {
    h2o::GroupbyParams data = o.data;
    data.na_percent = na;
    progress("data set %s", h2o::data_name(data).c_str());
    const double tally_load = load_generated(t, "tally", data);
    const double pg_load = load_generated(p, "postgres", data);
    const auto vacuum_start = Clock::now();
    must(p, "VACUUM ANALYZE x", "postgres");
    const double pg_vacuum = ms_since(vacuum_start) / 1e3;
    std::printf("\n### %s (%llu rows, K=%llu, %u%% NULLs, sorted=%d)\n\n", h2o::data_name(data).c_str(),
                static_cast<unsigned long long>(data.rows), static_cast<unsigned long long>(data.k), na,
                data.sorted ? 1 : 0);
    std::printf("COPY: Tally %.1f s, PostgreSQL %.1f s (+ VACUUM ANALYZE %.1f s)\n\n", tally_load, pg_load, pg_vacuum);
    std::printf("| question | Tally ms | PostgreSQL ms | PG/Tally | answer |\n|---|---:|---:|---:|---|\n");
    std::fflush(stdout);
    for (const auto& q : h2o::kQuestions) {
      if (!selected(o, q)) continue;
      progress("%s %s", q.id, q.title);
      const Outcome to = run_question(t, q, o.timeout_s);
      const Outcome po = run_question(p, q, o.timeout_s);
      const bool gap = o.known_gaps.count(q.id) != 0;
      std::string answer;
      bool failed = false;
      if (!po.ok) {
        answer = "PostgreSQL error " + po.error;
        failed = true;
      } else if (!to.ok) {
        answer = (gap ? "KNOWN GAP: Tally error " : "Tally error ") + to.error;
        failed = !gap;
      } else {
        const std::string sql = ordered_answer(q);
        bench::PrefetchedRowSource a([&] { return std::make_unique<bench::PgRowSource>(t, sql); });
        bench::PrefetchedRowSource b([&] { return std::make_unique<bench::PgRowSource>(p, sql); });
        uint64_t rows = 0;
        const std::string diff = compare_answers(to.check, po.check, a, b, "Tally", "PostgreSQL", true, &rows);
        if (!diff.empty()) {
          answer = "MISMATCH: " + diff;
          failed = true;
        } else {
          answer = "match (" + std::to_string(rows) + " rows)";
          if (gap) {
            answer += "; listed as a known gap but it passes: remove it from --known-gaps";
            failed = true;
          }
        }
      }
      std::string ignored;
      run_sql(t, "DROP TABLE IF EXISTS ans", 600, &ignored);
      run_sql(p, "DROP TABLE IF EXISTS ans", 600, &ignored);
      std::printf("| %s %s | %s | %s | %s | %s |\n", q.id, q.title, ms_text(to).c_str(), ms_text(po).c_str(),
                  to.ok && po.ok ? ratio(po.ms, to.ms).c_str() : "-", answer.c_str());
      std::fflush(stdout);
      if (gap && !to.ok && po.ok) {
        std::fprintf(stderr, "\n*** KNOWN GAP %s: Tally cannot answer it yet (%s) ***\n\n", q.id, to.error.c_str());
      }
      failures += failed ? 1 : 0;
    }
  }
  PQfinish(t);
  PQfinish(p);
  std::printf("\n%s: %d question(s) failed\n", failures ? "FAIL" : "OK", failures);
  return failures ? 1 : 0;
}

struct Duck {
  const bench::DuckdbLibrary& lib;
  bench::duck::connection c;
  bool exec(const std::string& sql, std::string* error, bench::Row* row = nullptr) const {
    bench::DuckRowSource source(lib, c, sql);
    bench::Row r;
    const bool has = source.next(r);
    if (!source.error().empty()) {
      *error = source.error();
      return false;
    }
    if (row != nullptr && has) *row = r;
    while (source.next(r)) {
    }
    return true;
  }
  void must(const std::string& sql) const {
    std::string error;
    if (!exec(sql, &error)) die(sql + ": " + error);
  }
  Outcome run_question(const h2o::Question& q) const {
    std::string ignored;
    exec("DROP TABLE IF EXISTS ans", &ignored);
    Outcome o;
    const auto start = Clock::now();
    o.ok = exec(std::string("CREATE TABLE ans AS ") + q.sql, &o.error) && exec(q.check, &o.error, &o.check);
    o.ms = ms_since(start);
    return o;
  }
};

int run_duckdb(const Options& o) {
  bench::DuckdbLibrary lib(o.duckdb_path);
  bench::duck::database db = nullptr;
  bench::duck::connection dc = nullptr;
  if (lib.open(nullptr, &db) != bench::duck::kSuccess || lib.connect(db, &dc) != bench::duck::kSuccess) {
    die("DuckDB: cannot open an in-memory database");
  }
  const Duck duck{lib, dc};
  duck.must("SET threads = " + std::to_string(o.threads));
  tally::testing::TallyServer tally(o.tallyd, o.tallyd_args);
  PGconn* t = connect(tally.conninfo(), "tally");
  int failures = 0;
  std::printf("DuckDB %s (%d threads, in memory); tallyd %s %s\n", lib.library_version(), o.threads, o.tallyd.c_str(),
              o.tallyd_args.c_str());
  for (unsigned na : o.na_list) {
    h2o::GroupbyParams data = o.data;
    data.na_percent = na;
    const std::string csv = write_csv(data, o.csv_dir);
    progress("tally: loading through libpq");
    const double tally_client_load = load_file(t, "tally", csv, data.rows);
    progress("tally: loading the file");
    const double tally_load = load_server_file(t, "tally", csv, data.rows);
    progress("duckdb: loading");
    const auto duck_start = Clock::now();
    duck.must("DROP TABLE IF EXISTS x");
    duck.must("CREATE TABLE x AS SELECT * FROM read_csv('" + csv +
              "', header = true, columns = {'id1': 'VARCHAR', 'id2': 'VARCHAR', 'id3': 'VARCHAR', 'id4': 'INTEGER', "
              "'id5': 'INTEGER', 'id6': 'INTEGER', 'v1': 'INTEGER', 'v2': 'INTEGER', 'v3': 'DOUBLE'})");
    const double duck_load = ms_since(duck_start) / 1e3;
    bench::Row count;
    std::string error;
    if (!duck.exec("SELECT count(*) FROM x", &error, &count) || count.empty() ||
        count[0].text != std::to_string(data.rows)) {
      die("DuckDB: table x does not hold " + std::to_string(data.rows) + " rows");
    }
    std::filesystem::remove(csv);
    std::printf("\n### %s (%llu rows, K=%llu, %u%% NULLs, sorted=%d)\n\n", h2o::data_name(data).c_str(),
                static_cast<unsigned long long>(data.rows), static_cast<unsigned long long>(data.k), na,
                data.sorted ? 1 : 0);
    std::printf("Load of the CSV: Tally COPY FROM the file %.1f s (through libpq %.1f s), DuckDB read_csv %.1f s\n\n",
                tally_load, tally_client_load, duck_load);
    std::printf(
        "| question | Tally first ms | Tally warm ms | DuckDB first ms | DuckDB warm ms | DuckDB/Tally warm | what ran in "
        "Tally | answers |\n|---|---:|---:|---:|---:|---:|---|---|\n");
    std::fflush(stdout);
    for (const auto& q : h2o::kQuestions) {
      if (!selected(o, q)) continue;
      progress("%s %s", q.id, q.title);
      const Outcome t1 = run_question(t, q, o.timeout_s);
      progress("%s tally first run %s ms", q.id, ms_text(t1).c_str());
      const std::streamoff log_offset = file_size(tally.log_path());
      const Outcome t2 = t1.ok ? run_question(t, q, o.timeout_s) : t1;
      progress("%s tally warm run %s ms", q.id, ms_text(t2).c_str());
      const Outcome d1 = duck.run_question(q);
      const Outcome d2 = duck.run_question(q);
      progress("%s duckdb runs %s, %s ms; comparing the answers", q.id, ms_text(d1).c_str(), ms_text(d2).c_str());
      std::string answer;
      bool failed = false;
      if (!d2.ok) {
        answer = "DuckDB error " + d2.error;
        failed = true;
      } else if (!t2.ok) {
        answer = "Tally error " + t2.error;
        failed = o.known_gaps.count(q.id) == 0;
      } else {
        const std::string sql = ordered_answer(q);
        bench::PrefetchedRowSource a([&] { return std::make_unique<bench::PgRowSource>(t, sql); });
        bench::PrefetchedRowSource b([&] { return std::make_unique<bench::DuckRowSource>(lib, dc, sql); });
        uint64_t rows = 0;
        bool nan = false;
        std::string diff = compare_answers(t2.check, d2.check, a, b, "Tally", "DuckDB", false, &rows, &nan);
        if (diff.empty()) {
          bool same = t1.check.size() == t2.check.size();
          for (size_t i = 0; same && i < t1.check.size(); ++i) same = bench::same_value(t1.check[i], t2.check[i]);
          if (!same) diff = "Tally's two runs differ: " + check_text(t1.check) + " vs " + check_text(t2.check);
        }
        answer = diff.empty() ? "match (" + std::to_string(rows) + " rows" + (nan ? "; DuckDB's check is NaN" : "") + ")"
                              : "MISMATCH: " + diff;
        failed = !diff.empty();
      }
      const std::string engine = !t2.ok     ? "-"
                                 : o.explain ? tally_engine(t, q)
                                             : logged_engine(tally.log_path(), log_offset);
      std::string ignored;
      run_sql(t, "DROP TABLE IF EXISTS ans", 600, &ignored);
      duck.exec("DROP TABLE IF EXISTS ans", &ignored);
      std::printf("| %s %s | %s | %s | %s | %s | %s | %s | %s |\n", q.id, q.title, ms_text(t1).c_str(),
                  ms_text(t2).c_str(), ms_text(d1).c_str(), ms_text(d2).c_str(),
                  t2.ok && d2.ok ? ratio(d2.ms, t2.ms).c_str() : "-", engine.c_str(), answer.c_str());
      std::fflush(stdout);
      failures += failed ? 1 : 0;
    }
  }
  PQfinish(t);
  lib.disconnect(&dc);
  lib.close(&db);
  std::printf("\n%s: %d question(s) failed\n", failures ? "FAIL" : "OK", failures);
  return failures ? 1 : 0;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--check") {
      o.check = true;
      continue;
    }
    if (a == "--explain") {
      o.explain = true;
      continue;
    }
    if (i + 1 >= argc) die("missing value for " + a);
    const std::string v = argv[++i];
    if (a == "--na") {
      o.na_list.clear();
      for (const auto& item : split(v)) o.na_list.push_back(static_cast<unsigned>(std::stoul(item)));
    } else if (h2o::parse_data_option(a, v, o.data)) {
    } else if (a == "--duckdb") {
      o.duckdb_path = v;
    } else if (a == "--tallyd") {
      o.tallyd = v;
    } else if (a == "--tallyd-args") {
      o.tallyd_args = v;
    } else if (a == "--questions") {
      for (const auto& q : split(v)) o.only.insert(q);
    } else if (a == "--known-gaps") {
      for (const auto& q : split(v)) o.known_gaps.insert(q);
    } else if (a == "--timeout-s") {
      o.timeout_s = std::stod(v);
    } else if (a == "--threads") {
      o.threads = std::stoi(v);
    } else if (a == "--csv-dir") {
      o.csv_dir = v;
    } else {
      die("unknown option " + a);
    }
  }
  if (o.tallyd.empty() || o.check == !o.duckdb_path.empty()) {
    die("usage: h2o_bench --tallyd PATH (--check | --duckdb LIBDUCKDB) [--rows N] [--k K] [--na P[,P]] [--sort 0|1]\n"
        "         [--questions q1,..] [--known-gaps q8,..] [--timeout-s S] [--threads T] [--csv-dir DIR]\n"
        "         [--tallyd-args \"...\"] [--explain]");
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    return o.check ? run_check(o) : run_duckdb(o);
  } catch (const std::exception& e) {
    die(e.what());
  }
}
