// The H2O db-benchmark groupby questions on Tally, against PostgreSQL 15, DuckDB,
// or other configurations of Tally itself.
//
// --check: loads the same generated table into a tallyd of this build and a
//   PostgreSQL 15 the program starts, runs the ten questions on both by the
//   benchmark's protocol, and compares every answer row by row (and the check
//   queries). Exit status 1 on any mismatch, on any error of a question not
//   listed in --known-gaps, and on a listed gap that no longer errors.
// Timed (without --check): the data set is loaded into Tally once, by a tallyd
//   of the first configuration (--tallyd-args, given once per configuration:
//   "--gpu-devices 0", then "--gpu-devices all"); then for each configuration
//   in turn tallyd is started on that same data directory with its arguments
//   and every question runs by the protocol: run 1 = first run, run 2 = warm.
//   The table gives each configuration's first and warm times, what ran (the
//   engine and variant of tallyd's log line for the warm run, or with
//   --explain from an EXPLAIN ANALYZE of the question: a third run), and the
//   first configuration's warm time over each other's (the speed-up). Every
//   later configuration's answer is compared row by row with the first's
//   (kept in the data directory as table h2o_ref_<question>).
//   --duckdb LIBDUCKDB also times DuckDB (in memory, read_csv of a generated
//   CSV file that Tally loads too, through libpq and with COPY of the file) and
//   compares every configuration's answers with DuckDB's. Without it no file
//   is written: the generated rows go straight into COPY FROM STDIN, formatted
//   on --gen-threads threads (1e9 rows are 47 GB of CSV). Needs --duckdb or
//   two configurations. Answers of more than --compare-rows-max rows are
//   compared by their row count and check query only (q10's 1e8 rows take
//   minutes row by row). Past --deadline-s seconds since the start, the
//   questions and comparisons left are skipped and the table printed (a device
//   call has a time limit). Exit status 1 on any mismatch, error (a question in
//   --known-gaps may error) or skipped question. --profile CMD runs CMD on
//   tallyd over each question's first and warm runs ("{pid}" its process
//   id, "{question}" the configuration and question, C1_q8: 'perf record -g
//   -p {pid} -o /tmp/{question}.data'; bench/common/profiler_run.hpp).
//   --prewarm runs SELECT pg_prewarm('x') (and prints its time) once each
//   configuration's tallyd started: the first runs then read resident
//   columns, as the "first run with resident columns" means.
//
// The protocol (db-benchmark): CREATE TABLE ans AS <question>, the check query
// over ans, DROP TABLE ans; the time is the first two.
//
// Usage: h2o_bench --tallyd PATH (--check | [--duckdb LIBDUCKDB] [--tallyd-args "..."]...)
//          [--rows 1e7] [--k 1e2] [--na 0[,5]] [--sort 0|1] [--questions q1,q2,..] [--known-gaps q8,..]
//          [--timeout-s S] [--threads 16] [--gen-threads T] [--csv-dir DIR] [--compare-rows-max N]
//          [--deadline-s S] [--explain] [--prewarm] [--profile CMD]
#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/common/answer_rows.hpp"
#include "bench/common/duckdb_library.hpp"
#include "bench/common/pg_copy.hpp"
#include "bench/common/process_use.hpp"
#include "bench/common/profiler_run.hpp"
#include "bench/h2o/groupby_data.hpp"
#include "bench/h2o/groupby_stream.hpp"
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

// Threads that format generated rows: about a quarter of the cores, so that
// tallyd's COPY parsing (on every core) keeps the rest.
unsigned default_gen_threads() {
  return std::clamp(std::thread::hardware_concurrency() / 4, 1u, 8u);
}

struct Options {
  bool check = false;
  std::string duckdb_path;
  std::string tallyd;
  std::vector<std::string> configurations;  // tallyd's arguments, one entry per configuration
  h2o::GroupbyParams data;
  std::vector<unsigned> na_list{0};
  std::set<std::string> only;
  std::set<std::string> known_gaps;
  double timeout_s = 600;
  int threads = 16;  // DuckDB's
  unsigned gen_threads = default_gen_threads();
  std::string csv_dir = "/tmp";
  uint64_t compare_rows_max = std::numeric_limits<uint64_t>::max();
  double deadline_s = 0;  // 0: none
  bool explain = false;
  // SELECT pg_prewarm('x') once tallyd started, before the first runs: they
  // then read resident columns, as DuckDB's first runs read its in-memory table.
  bool prewarm = false;
  std::string profile;  // a profiler command run on tallyd ("{pid}") over each question's timed runs ("{question}")
};

// ---- statements on a PostgreSQL-protocol server, with a client-side deadline ----

struct Outcome {
  bool ok = true;
  std::string error;  // "SQLSTATE: message", or "timeout after S s"
  double ms = 0;
  double create_ms = 0;  // of ms, the CREATE TABLE AS (the rest is the check query)
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
  o.ok = run_sql(c, std::string("CREATE TABLE ans AS ") + q.sql, timeout_s, &o.error);
  o.create_ms = ms_since(start);
  o.ok = o.ok && run_sql(c, q.check, timeout_s, &o.error, &o.check);
  o.ms = ms_since(start);
  return o;
}

// The answer held in `table`, in an order that fixes every row's place.
std::string ordered_answer(const h2o::Question& q, const std::string& table = "ans") {
  std::string order;
  for (const auto& column : split(q.order_by)) {
    order += (order.empty() ? "" : ", ") + column + " NULLS LAST";
  }
  return "SELECT * FROM " + table + " ORDER BY " + order;
}

// What Tally's EXPLAIN ANALYZE says ran: its first "Engine: ..." line, cut
// before the launch configuration. The whole plan goes to stderr, where the
// time each step took shows where a question's time goes.
// `label` prefixes the plan's lines ("q3 plan", "q3 check plan").
std::string tally_engine(PGconn* c, const std::string& label, const std::string& sql) {
  PGresult* r = nullptr;
  if (!PQsendQuery(c, ("EXPLAIN ANALYZE " + sql).c_str())) return "explain failed";
  std::string found;
  while ((r = PQgetResult(c)) != nullptr) {
    if (PQresultStatus(r) == PGRES_TUPLES_OK) {
      for (int i = 0; i < PQntuples(r); ++i) std::fprintf(stderr, "%s: %s\n", label.c_str(), PQgetvalue(r, i, 0));
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

// Streams CSV blocks from `next` into COPY x; returns seconds. A line on
// stderr every 10 s says how far it got (1e9 rows take minutes).
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
  while (next(block)) {
    if (PQputCopyData(c, block.data(), static_cast<int>(block.size())) != 1) {
      die(std::string(who) + ": COPY data: " + PQerrorMessage(c));
    }
    if (Clock::now() - last > std::chrono::seconds(10)) {
      last = Clock::now();
      const double s = ms_since(start) / 1e3;
      progress("%s: COPY %.1fM of %.1fM rows in %.0f s (%.2fM rows/s)", who, rows_done() / 1e6, rows / 1e6, s,
               rows_done() / 1e6 / s);
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

// The generated rows straight into COPY FROM STDIN, no file in between.
double load_generated(PGconn* c, const char* who, const h2o::GroupbyParams& p, unsigned threads) {
  h2o::GroupbyCsvStream stream(p, threads);
  const double s = copy_in(
      c, who, p.rows, [&](std::string& b) { return stream.next(b); }, [&] { return stream.rows_read(); });
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
        return !b.empty();
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

std::string write_csv(const h2o::GroupbyParams& p, const std::string& dir, unsigned threads) {
  const std::string path = dir + "/" + h2o::data_name(p) + ".csv";
  const auto start = Clock::now();
  progress("generating %s", path.c_str());
  h2o::GroupbyCsvStream stream(p, threads);
  std::ofstream out(path, std::ios::binary);
  for (std::string block; stream.next(block);) out.write(block.data(), static_cast<std::streamsize>(block.size()));
  out.close();
  if (!out) die("writing " + path + " failed (disk full?)");
  progress("generated %.1f GB in %.1f s", std::filesystem::file_size(path) / 1e9, ms_since(start) / 1e3);
  return path;
}

// Bytes of the files under `dir` (what a data set costs on disk).
uint64_t directory_bytes(const std::string& dir) {
  uint64_t bytes = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec)) bytes += entry.file_size(ec);
  }
  return bytes;
}

// ---- comparing answers ----

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

// The check queries' rows; "" when equal. A sum over a NaN is NaN in DuckDB;
// over the same answer's NULLs it is a number: a NaN on either side passes
// and sets *nan.
std::string compare_checks(const bench::Row& check_a, const bench::Row& check_b, bool* nan) {
  bool same = check_a.size() == check_b.size();
  for (size_t i = 0; same && i < check_a.size(); ++i) {
    *nan = *nan || check_a[i].nan || check_b[i].nan;
    same = bench::same_value(check_a[i], check_b[i]) || check_a[i].nan || check_b[i].nan;
  }
  return same ? "" : "check query differs: " + check_text(check_a) + " vs " + check_text(check_b);
}

// Compares the check rows, then the ordered answers; "" when equal.
std::string compare_answers(const bench::Row& check_a, const bench::Row& check_b, bench::RowSource& a,
                            bench::RowSource& b, const char* a_name, const char* b_name, bool types,
                            uint64_t* rows, bool* check_nan = nullptr) {
  const bench::Comparison c = bench::compare_rows(a, b, a_name, b_name, types);
  *rows = c.rows;
  if (!c.equal) return c.difference;
  bool nan = false;
  const std::string checks = compare_checks(check_a, check_b, &nan);
  if (check_nan != nullptr) *check_nan = nan;
  return checks;
}

// One side of a comparison: a system holding an answer in a table, the check
// query's row over it, and how to read a query's rows from that system.
struct AnswerSide {
  std::string name;  // "C2", "DuckDB"
  std::string table;
  bench::Row check;
  std::function<std::unique_ptr<bench::RowSource>(const std::string& sql)> open;
};

// `table`'s row count, or -1 when it cannot be read.
long long answer_rows(const AnswerSide& side) {
  const auto source = side.open("SELECT count(*) FROM " + side.table);
  bench::Row row;
  return source->next(row) && !row.empty() ? std::atoll(row[0].text.c_str()) : -1;
}

// Compares two sides' answers to q: the check rows and, up to `rows_max` rows,
// every row in order (past it, the row counts: comparing two 1e8-row answers
// row by row takes minutes). "" when equal; *rows says how many rows.
std::string compare_sides(const h2o::Question& q, const AnswerSide& a, const AnswerSide& b, bool types,
                          uint64_t rows_max, uint64_t* rows, bool* nan, bool* by_count) {
  *by_count = false;
  if (rows_max != std::numeric_limits<uint64_t>::max()) {
    const long long count_a = answer_rows(a), count_b = answer_rows(b);
    if (count_a < 0 || count_b < 0 || count_a != count_b) {
      return "row counts " + a.name + " " + std::to_string(count_a) + " vs " + b.name + " " + std::to_string(count_b);
    }
    if (static_cast<uint64_t>(count_a) > rows_max) {
      *rows = static_cast<uint64_t>(count_a);
      *by_count = true;
      return compare_checks(a.check, b.check, nan);
    }
  }
  bench::PrefetchedRowSource sa([&] { return a.open(ordered_answer(q, a.table)); });
  bench::PrefetchedRowSource sb([&] { return b.open(ordered_answer(q, b.table)); });
  return compare_answers(a.check, b.check, sa, sb, a.name.c_str(), b.name.c_str(), types, rows, nan);
}

bool selected(const Options& o, const h2o::Question& q) { return o.only.empty() || o.only.count(q.id) != 0; }

void print_data_heading(const h2o::GroupbyParams& data) {
  std::printf("\n### %s (%llu rows, K=%llu, %u%% NULLs, sorted=%d)\n\n", h2o::data_name(data).c_str(),
              static_cast<unsigned long long>(data.rows), static_cast<unsigned long long>(data.k), data.na_percent,
              data.sorted ? 1 : 0);
}

// ---- against PostgreSQL (--check) ----

int run_check(const Options& o) {
  tally::testing::PostgresServer pg;
  tally::testing::TallyServer tally(o.tallyd, o.configurations.front());
  PGconn* t = connect(tally.conninfo(), "tally");
  PGconn* p = connect(pg.conninfo(), "postgres");
  int failures = 0;
  for (unsigned na : o.na_list) {
    h2o::GroupbyParams data = o.data;
    data.na_percent = na;
    progress("data set %s", h2o::data_name(data).c_str());
    const double tally_load = load_generated(t, "tally", data, o.gen_threads);
    const double pg_load = load_generated(p, "postgres", data, o.gen_threads);
    const auto vacuum_start = Clock::now();
    must(p, "VACUUM ANALYZE x", "postgres");
    const double pg_vacuum = ms_since(vacuum_start) / 1e3;
    print_data_heading(data);
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

// ---- timed: Tally configurations against each other and DuckDB ----

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

// Whether the call has run past --deadline-s: the questions and comparisons
// left are skipped (and fail) so that the table still gets printed inside a
// limit on the whole call.
const Clock::time_point kCallStart = Clock::now();
bool past_deadline(const Options& o) { return o.deadline_s > 0 && ms_since(kCallStart) / 1e3 > o.deadline_s; }

// One configuration's runs of one question and what its answer compared to.
struct Timed {
  Outcome first, warm;
  std::string engine;                 // what tallyd says ran the warm run
  std::vector<std::string> problems;  // errors and mismatches
  std::string matched;                // what the answer matched, when it did
};

// Where a reference answer is kept between configurations: config 1's
// answer stays in the data directory under this name (and DuckDB's in its
// database), so that a later tallyd on the same data compares its own with it.
std::string reference_table(const h2o::Question& q) { return std::string("h2o_ref_") + q.id; }

std::string config_name(size_t c) { return "C" + std::to_string(c + 1); }

double load_for_duckdb(const Options& o, const Duck* duck, PGconn* t, const h2o::GroupbyParams& data) {
  const std::string csv = write_csv(data, o.csv_dir, o.gen_threads);
  progress("tally: loading through libpq");
  const double tally_client_load = load_file(t, "tally", csv, data.rows);
  progress("tally: loading the file");
  const double tally_load = load_server_file(t, "tally", csv, data.rows);
  progress("duckdb: loading");
  const auto duck_start = Clock::now();
  duck->must("DROP TABLE IF EXISTS x");
  duck->must("CREATE TABLE x AS SELECT * FROM read_csv('" + csv +
             "', header = true, columns = {'id1': 'VARCHAR', 'id2': 'VARCHAR', 'id3': 'VARCHAR', 'id4': 'INTEGER', "
             "'id5': 'INTEGER', 'id6': 'INTEGER', 'v1': 'INTEGER', 'v2': 'INTEGER', 'v3': 'DOUBLE'})");
  const double duck_load = ms_since(duck_start) / 1e3;
  bench::Row count;
  std::string error;
  if (!duck->exec("SELECT count(*) FROM x", &error, &count) || count.empty() ||
      count[0].text != std::to_string(data.rows)) {
    die("DuckDB: table x does not hold " + std::to_string(data.rows) + " rows");
  }
  std::filesystem::remove(csv);
  print_data_heading(data);
  std::printf("Load of the CSV: Tally COPY FROM the file %.1f s (through libpq %.1f s), DuckDB read_csv %.1f s\n",
              tally_load, tally_client_load, duck_load);
  return tally_load;
}

// Runs every selected question on configuration c (tallyd already started
// on the loaded data) and compares its answers; fills results[c][question].
// `command` with every "{question}" replaced by `question`.
std::string with_question(std::string command, const std::string& question) {
  for (size_t at = command.find("{question}"); at != std::string::npos; at = command.find("{question}", at + question.size()))
    command.replace(at, 10, question);
  return command;
}

void run_configuration(const Options& o, size_t c, tally::testing::TallyServer& tally, const Duck* duck,
                       std::vector<std::vector<Timed>>& results, std::vector<std::pair<Outcome, Outcome>>& duck_runs) {
  PGconn* t = connect(tally.conninfo(), "tally");
  PGconn* ref = connect(tally.conninfo(), "tally");  // reads the reference answer while t reads its own
  const std::string name = config_name(c);
  if (o.prewarm) {
    bench::Row pages;
    std::string error;
    const auto t0 = std::chrono::steady_clock::now();
    if (!run_sql(t, "SELECT pg_prewarm('x')", 600, &error, &pages)) die(name + ": pg_prewarm('x') failed: " + error);
    std::printf("%s: pg_prewarm('x') %.1f ms (%s pages)\n", name.c_str(),
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
                check_text(pages).c_str());
    std::fflush(stdout);
  }
  for (size_t qi = 0; qi < h2o::kQuestions.size(); ++qi) {
    const auto& q = h2o::kQuestions[qi];
    if (!selected(o, q)) continue;
    Timed& r = results[c][qi];
    if (past_deadline(o)) {
      r.first.ok = false;
      r.first.error = "not run: past --deadline-s";
      r.warm = r.first;
      r.engine = "-";
      r.problems.push_back(name + " " + r.first.error);
      continue;
    }
    progress("%s %s %s", name.c_str(), q.id, q.title);
    // The profiler over this question's two timed runs only: not the
    // EXPLAIN run, the answers' comparisons nor the other questions.
    std::optional<bench::ProfilerRun> profiler;
    if (!o.profile.empty()) profiler.emplace(with_question(o.profile, name + "_" + q.id), tally.pid());
    r.first = run_question(t, q, o.timeout_s);
    progress("%s %s first run %s ms", name.c_str(), q.id, ms_text(r.first).c_str());
    const std::streamoff log_offset = file_size(tally.log_path());
    // The warm run's page faults: memory it took anew rather than reused.
    const unsigned long long faults_before = bench::process_use(tally.pid()).page_faults;
    r.warm = r.first.ok ? run_question(t, q, o.timeout_s) : r.first;
    progress("%s %s warm run %s ms (CREATE TABLE AS %.1f ms, %llu page faults)", name.c_str(), q.id,
             ms_text(r.warm).c_str(), r.warm.create_ms, bench::process_use(tally.pid()).page_faults - faults_before);
    profiler.reset();
    r.engine = !r.warm.ok  ? "-"
               : o.explain ? tally_engine(t, std::string(q.id) + " plan", q.sql)
                           : logged_engine(tally.log_path(), log_offset);
    // The check query as the protocol runs it: the first read of a new ans.
    if (r.warm.ok && o.explain) {
      std::string ignored;
      run_sql(t, "DROP TABLE IF EXISTS ans", 600, &ignored);
      if (run_sql(t, std::string("CREATE TABLE ans AS ") + q.sql, o.timeout_s, &ignored))
        tally_engine(t, std::string(q.id) + " check plan", q.check);
    }
    // The times first, on stdout at once: comparing 1e7-row answers takes a
    // while, and a call cut short by its time limit keeps what was measured.
    std::printf("%s %s: first %s ms, warm %s ms, %s\n", name.c_str(), q.id, ms_text(r.first).c_str(),
                ms_text(r.warm).c_str(), r.engine.c_str());
    std::fflush(stdout);
    const bool gap = o.known_gaps.count(q.id) != 0;
    if (!r.warm.ok) {
      r.problems.push_back(name + " error " + r.warm.error + (gap ? " (known gap)" : ""));
    } else {
      bool same = r.first.check.size() == r.warm.check.size();
      for (size_t i = 0; same && i < r.first.check.size(); ++i) same = bench::same_value(r.first.check[i], r.warm.check[i]);
      if (!same) {
        r.problems.push_back(name + "'s two runs differ: " + check_text(r.first.check) + " vs " +
                             check_text(r.warm.check));
      }
    }
    auto& duck_run = duck_runs[qi];
    if (duck != nullptr && c == 0) {
      duck_run.first = duck->run_question(q);
      duck_run.second = duck->run_question(q);
      progress("%s duckdb runs %s, %s ms", q.id, ms_text(duck_run.first).c_str(), ms_text(duck_run.second).c_str());
      std::string ignored;
      duck->exec("DROP TABLE IF EXISTS " + reference_table(q), &ignored);
      if (duck_run.second.ok) duck->must("ALTER TABLE ans RENAME TO " + reference_table(q));
      if (!duck_run.second.ok) r.problems.push_back("DuckDB error " + duck_run.second.error);
    }
    const AnswerSide mine{name, "ans", r.warm.check, [&](const std::string& sql) -> std::unique_ptr<bench::RowSource> {
                            return std::make_unique<bench::PgRowSource>(t, sql);
                          }};
    std::vector<AnswerSide> references;
    if (c > 0 && results[0][qi].warm.ok) {
      references.push_back({config_name(0), reference_table(q), results[0][qi].warm.check,
                            [&](const std::string& sql) -> std::unique_ptr<bench::RowSource> {
                              return std::make_unique<bench::PgRowSource>(ref, sql);
                            }});
    }
    if (duck != nullptr && duck_run.second.ok) {
      references.push_back({"DuckDB", reference_table(q), duck_run.second.check,
                            [&](const std::string& sql) -> std::unique_ptr<bench::RowSource> {
                              return std::make_unique<bench::DuckRowSource>(duck->lib, duck->c, sql);
                            }});
    }
    std::vector<std::string> matched;
    uint64_t rows = 0;
    bool by_count = false, nan = false;
    for (const auto& other : r.warm.ok ? references : std::vector<AnswerSide>{}) {
      if (past_deadline(o)) {
        r.problems.push_back(name + " vs " + other.name + " not compared: past --deadline-s");
        continue;
      }
      progress("%s %s comparing the answer with %s's", name.c_str(), q.id, other.name.c_str());
      const bool types = other.name != "DuckDB";  // DuckDB's types are its own
      const std::string diff = compare_sides(q, mine, other, types, o.compare_rows_max, &rows, &nan, &by_count);
      if (diff.empty()) {
        matched.push_back(other.name);
      } else {
        r.problems.push_back(name + " vs " + other.name + " MISMATCH: " + diff);
      }
    }
    if (r.warm.ok && !matched.empty() && r.problems.empty()) {
      std::string with;
      for (const auto& m : matched) with += (with.empty() ? "" : ", ") + m;
      r.matched = "match " + with + " (" + std::to_string(rows) + " rows" +
                  (by_count ? "; compared by count and check query" : "") + (nan ? "; DuckDB's check is NaN" : "") + ")";
    }
    std::string ignored;
    if (c == 0 && r.warm.ok) {
      must(t, "ALTER TABLE ans RENAME TO " + reference_table(q), "tally");
    } else {
      run_sql(t, "DROP TABLE IF EXISTS ans", 600, &ignored);
    }
    std::printf("%s %s answer: %s\n", name.c_str(), q.id,
                !r.problems.empty()  ? r.problems.front().c_str()
                : !r.matched.empty() ? r.matched.c_str()
                : c == 0             ? "kept as the reference"
                                     : "answered");
    std::fflush(stdout);
  }
  PQfinish(ref);
  PQfinish(t);
}

// A question fails on any problem but a known gap's own error.
bool failed(const Options& o, const h2o::Question& q, const std::vector<Timed>& runs) {
  for (const auto& r : runs) {
    for (const auto& p : r.problems) {
      if (p.find("(known gap)") == std::string::npos || o.known_gaps.count(q.id) == 0) return true;
    }
  }
  return false;
}

int print_table(const Options& o, const std::vector<std::vector<Timed>>& results,
                const std::vector<std::pair<Outcome, Outcome>>& duck_runs, bool duck) {
  const size_t n = o.configurations.size();
  std::printf("\n| question |");
  std::string rule = "|---|";
  for (size_t c = 0; c < n; ++c) {
    const std::string name = config_name(c);
    std::printf(" %s first ms | %s warm ms | what ran in %s |", name.c_str(), name.c_str(), name.c_str());
    rule += "---:|---:|---|";
    if (c > 0) {
      std::printf(" %s/%s warm |", config_name(0).c_str(), name.c_str());
      rule += "---:|";
    }
  }
  if (duck) {
    std::printf(" DuckDB first ms | DuckDB warm ms | DuckDB/%s warm |", config_name(0).c_str());
    rule += "---:|---:|---:|";
  }
  std::printf(" answers |\n%s---|\n", rule.c_str());
  int failures = 0;
  for (size_t qi = 0; qi < h2o::kQuestions.size(); ++qi) {
    const auto& q = h2o::kQuestions[qi];
    if (!selected(o, q)) continue;
    std::vector<Timed> runs;
    for (size_t c = 0; c < n; ++c) runs.push_back(results[c][qi]);
    std::printf("| %s %s |", q.id, q.title);
    for (size_t c = 0; c < n; ++c) {
      const Timed& r = runs[c];
      std::printf(" %s | %s | %s |", ms_text(r.first).c_str(), ms_text(r.warm).c_str(), r.engine.c_str());
      if (c > 0) {
        std::printf(" %s |", runs[0].warm.ok && r.warm.ok ? ratio(runs[0].warm.ms, r.warm.ms).c_str() : "-");
      }
    }
    if (duck) {
      const auto& d = duck_runs[qi];
      std::printf(" %s | %s | %s |", ms_text(d.first).c_str(), ms_text(d.second).c_str(),
                  runs[0].warm.ok && d.second.ok ? ratio(d.second.ms, runs[0].warm.ms).c_str() : "-");
    }
    std::string answers;
    for (const auto& r : runs) {
      for (const auto& p : r.problems) answers += (answers.empty() ? "" : "; ") + p;
    }
    if (answers.empty()) {
      // Each configuration's "match ..." names what it was compared with.
      for (size_t c = 0; c < n; ++c) {
        if (!runs[c].matched.empty()) answers += (answers.empty() ? "" : "; ") + config_name(c) + " " + runs[c].matched;
      }
    }
    std::printf(" %s |\n", answers.c_str());
    failures += failed(o, q, runs) ? 1 : 0;
  }
  std::fflush(stdout);
  return failures;
}

int run_timed(const Options& o) {
  std::unique_ptr<bench::DuckdbLibrary> lib;
  bench::duck::database db = nullptr;
  bench::duck::connection dc = nullptr;
  std::unique_ptr<Duck> duck;
  if (!o.duckdb_path.empty()) {
    lib = std::make_unique<bench::DuckdbLibrary>(o.duckdb_path);
    if (lib->open(nullptr, &db) != bench::duck::kSuccess || lib->connect(db, &dc) != bench::duck::kSuccess) {
      die("DuckDB: cannot open an in-memory database");
    }
    duck = std::make_unique<Duck>(Duck{*lib, dc});
    duck->must("SET threads = " + std::to_string(o.threads));
    std::printf("DuckDB %s (%d threads, in memory)\n", lib->library_version(), o.threads);
  }
  for (size_t c = 0; c < o.configurations.size(); ++c) {
    std::printf("%s: tallyd %s %s\n", config_name(c).c_str(), o.tallyd.c_str(), o.configurations[c].c_str());
  }
  int failures = 0;
  for (unsigned na : o.na_list) {
    h2o::GroupbyParams data = o.data;
    data.na_percent = na;
    // One data directory per data set: loaded once, by a tallyd of the first
    // configuration, then each configuration's tallyd starts on it in turn.
    tally::testing::TallyServer tally(o.tallyd, o.configurations.front());
    PGconn* t = connect(tally.conninfo(), "tally");
    if (duck) {
      load_for_duckdb(o, duck.get(), t, data);
    } else {
      progress("tally: generating %s into COPY FROM STDIN (%u threads)", h2o::data_name(data).c_str(), o.gen_threads);
      const double s = load_generated(t, "tally", data, o.gen_threads);
      print_data_heading(data);
      std::printf("Load: generated into COPY FROM STDIN through libpq (no file) %.1f s, %.2fM rows/s\n", s,
                  data.rows / s / 1e6);
    }
    PQfinish(t);
    std::printf("Tally's data directory: %.2f GB\n\n", directory_bytes(tally.data_dir()) / 1e9);
    std::fflush(stdout);
    std::vector<std::vector<Timed>> results(o.configurations.size(), std::vector<Timed>(h2o::kQuestions.size()));
    std::vector<std::pair<Outcome, Outcome>> duck_runs(h2o::kQuestions.size());
    for (size_t c = 0; c < o.configurations.size(); ++c) {
      const auto start = Clock::now();
      tally.restart(o.configurations[c]);
      std::printf("%s: tallyd started on the loaded data in %.1f s\n", config_name(c).c_str(), ms_since(start) / 1e3);
      std::fflush(stdout);
      run_configuration(o, c, tally, duck.get(), results, duck_runs);
    }
    failures += print_table(o, results, duck_runs, duck != nullptr);
  }
  if (duck) {
    lib->disconnect(&dc);
    lib->close(&db);
  }
  std::printf("\n%s: %d question(s) failed\n", failures ? "FAIL" : "OK", failures);
  return failures ? 1 : 0;
}

constexpr const char* kUsage =
    "usage: h2o_bench --tallyd PATH (--check | [--duckdb LIBDUCKDB] [--tallyd-args \"...\"]...)\n"
    "         [--rows N] [--k K] [--na P[,P]] [--sort 0|1] [--questions q1,..] [--known-gaps q8,..]\n"
    "         [--timeout-s S] [--threads T] [--gen-threads T] [--csv-dir DIR] [--compare-rows-max N]\n"
    "         [--deadline-s S] [--explain] [--prewarm] [--profile 'perf record -g -p {pid} -o /tmp/{question}.data']\n"
    "  --tallyd-args once per configuration of tallyd to time; without --check, --duckdb or two of them are needed";

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
    if (a == "--prewarm") {
      o.prewarm = true;
      continue;
    }
    if (a == "--help" || a == "-h") {
      std::printf("%s\n", kUsage);
      std::exit(0);
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
      o.configurations.push_back(v);
    } else if (a == "--questions") {
      for (const auto& q : split(v)) o.only.insert(q);
    } else if (a == "--known-gaps") {
      for (const auto& q : split(v)) o.known_gaps.insert(q);
    } else if (a == "--timeout-s") {
      o.timeout_s = std::stod(v);
    } else if (a == "--threads") {
      o.threads = std::stoi(v);
    } else if (a == "--gen-threads") {
      o.gen_threads = static_cast<unsigned>(std::max(1, std::stoi(v)));
    } else if (a == "--csv-dir") {
      o.csv_dir = v;
    } else if (a == "--deadline-s") {
      o.deadline_s = std::stod(v);
    } else if (a == "--profile") {
      o.profile = v;
    } else if (a == "--compare-rows-max") {
      o.compare_rows_max = h2o::parse_count(v);
    } else {
      die("unknown option " + a + "\n" + kUsage);
    }
  }
  if (o.configurations.empty()) o.configurations.push_back("");
  const bool timed_pair = o.configurations.size() >= 2 || !o.duckdb_path.empty();
  if (o.tallyd.empty() || (o.check && (!o.duckdb_path.empty() || o.configurations.size() > 1)) ||
      (!o.check && !timed_pair)) {
    die(kUsage);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    return o.check ? run_check(o) : run_timed(o);
  } catch (const std::exception& e) {
    die(e.what());
  }
}
