// TPC-H on tallyd against PostgreSQL 15, both started here and loaded with the
// same data in one run: every query's answer is compared (tests/tpch's rule:
// column types and every value's text, in order) and timed on both (the best
// of --reps runs, through libpq, result transfer included).
//
//   tpch_bench --tallyd build/tallyd --sf 1 --data-dir /tmp/tpch-sf1 [--queries 1,6,13] [--reps 3]
//
// With --duckdb LIBDUCKDB the baseline is DuckDB instead (the GPU machine has
// no PostgreSQL): in memory, --threads threads, loaded with COPY from the same
// .tbl files; answers are compared in order with bench/common's rule (text
// without char(n)'s padding, decimals and floats as numbers within 1e-9).
//
// --timeout-s bounds each query on both systems (PostgreSQL takes hours on
// Q17 and Q20 at SF 1 without an index on l_partkey): a query that runs out
// of time counts the limit as its time and its answer is not compared.
// --data-dir holds <table>.tbl from tpch_datagen ('|'-separated) or
// <table>.csv.xz (the reference data in ../shared/tpch/sf0.1); when it holds
// neither, tpch_datagen (beside this program) writes it at --sf first.
// --query-file: the specification's 22 (../shared/tpch/queries.sql) or a
// file of one's own with each query after a line `-- TPC-H Qn`
// (bench/tpch/probe_queries.sql: parts of queries, timed beside the whole).
// --tables: the tables the schema creates and --data-dir holds as
// <table>.tbl, loaded in this order (default TPC-H's eight); with
// bench/clickbench's schema, queries and hits_datagen's data it runs the
// ClickBench-style benchmark (bench/clickbench/RESULTS.md).
// --ab-setting NAME=VALUE (with --duckdb): each query runs again on Tally with
// that session setting (SET, then RESET), timed the same way and its answer
// compared too, printed under the query's row: an A/B of one setting on one
// load, in the same run.
// --ab-tallyd PATH (with --duckdb): a second tallyd build (the one to compare
// with), started beside the first with the same --tallyd-args and loaded
// with the same files; each query is timed on it after the first build's
// runs, its answer compared too, printed under the query's row: an A/B of
// two builds against one DuckDB load, in the same run.
// --profile CMD (with --duckdb): CMD runs on tallyd over the queries' runs,
// after the loads ("{pid}" its process id; bench/common/profiler_run.hpp),
// e.g. `perf record -F 999 -g -p {pid} -o /tmp/perf.data`.
// Exits 1 when any answer differs from PostgreSQL's.
#include <libpq-fe.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench/common/answer_rows.hpp"
#include "bench/common/duckdb_library.hpp"
#include "bench/common/process_use.hpp"
#include "bench/common/profiler_run.hpp"
#include "tests/sql/pg_servers.hpp"
#include "tests/tpch/tpch_client.hpp"

namespace {

struct Options {
  std::string tallyd = "build/tallyd";
  std::string tallyd_args;
  double sf = 1;
  std::string data_dir;
  std::string query_file = std::string(TALLY_TPCH_DIR) + "/queries.sql";
  std::string schema_file = std::string(TALLY_TPCH_DIR) + "/schema.sql";
  std::set<std::string> queries;  // "Q1", ...; empty: all 22
  std::vector<std::string> tables{std::begin(tally::tpch::kTables), std::end(tally::tpch::kTables)};
  int reps = 3;
  int timeout_s = 0;  // statement_timeout on both; 0: none
  std::string duckdb_path;  // baseline DuckDB (this libduckdb.so) instead of PostgreSQL
  int threads = 16;         // DuckDB's threads
  bool explain = false;     // with --duckdb: each query's EXPLAIN ANALYZE on Tally after its runs
  std::string ab_name, ab_value;  // with --duckdb: each query timed again with SET ab_name = ab_value
  std::string ab_tallyd;  // with --duckdb: each query timed again on this tallyd build
  std::string profile;  // with --duckdb: a profiler command run on tallyd ("{pid}") over the queries' runs
};

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: tpch_bench [--tallyd PATH] [--tallyd-args ARGS] [--sf SF] [--data-dir DIR]\n"
               "                  [--queries 1,6,...] [--reps N] [--timeout-s S] [--query-file queries.sql]\n"
               "                  [--schema schema.sql] [--tables t1,t2,...]\n"
               "                  [--duckdb LIBDUCKDB [--threads N] [--explain] [--ab-setting NAME=VALUE]\n"
               "                   [--ab-tallyd PATH]\n"
               "                   [--profile 'perf record -g -p {pid} -o FILE']]\n");
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--explain") {
      o.explain = true;
      continue;
    }
    if (i + 1 >= argc) usage();
    const std::string v = argv[++i];
    if (a == "--tallyd") o.tallyd = v;
    else if (a == "--tallyd-args") o.tallyd_args = v;
    else if (a == "--sf") o.sf = std::atof(v.c_str());
    else if (a == "--data-dir") o.data_dir = v;
    else if (a == "--query-file") o.query_file = v;
    else if (a == "--schema") o.schema_file = v;
    else if (a == "--reps") o.reps = std::max(1, std::atoi(v.c_str()));
    else if (a == "--timeout-s") o.timeout_s = std::max(0, std::atoi(v.c_str()));
    else if (a == "--duckdb") o.duckdb_path = v;
    else if (a == "--threads") o.threads = std::max(1, std::atoi(v.c_str()));
    else if (a == "--profile") o.profile = v;
    else if (a == "--ab-tallyd") o.ab_tallyd = v;
    else if (a == "--ab-setting") {
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0) usage();
      o.ab_name = v.substr(0, eq);
      o.ab_value = v.substr(eq + 1);
    }
    else if (a == "--tables") {
      o.tables.clear();
      std::istringstream list(v);
      for (std::string t; std::getline(list, t, ',');) o.tables.push_back(t);
    } else if (a == "--queries") {
      std::istringstream list(v);
      std::string q;
      while (std::getline(list, q, ',')) o.queries.insert("Q" + std::to_string(std::atoi(q.c_str() + (q[0] == 'Q'))));
    } else usage();
  }
  if (o.sf <= 0) usage();
  if (o.data_dir.empty()) {
    std::ostringstream d;
    d << "/tmp/tpch-sf" << o.sf;
    o.data_dir = d.str();
  }
  return o;
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// The file a table loads from and the COPY options that read it.
std::pair<std::string, std::string> table_source(const std::string& dir, const std::string& table) {
  const std::string tbl = dir + "/" + table + ".tbl";
  if (std::filesystem::exists(tbl)) return {tbl, "FORMAT csv, DELIMITER '|'"};
  return {dir + "/" + table + ".csv.xz", "FORMAT csv"};
}

void ensure_data(const Options& o, const char* argv0) {
  const bool tpch = o.tables == std::vector<std::string>(std::begin(tally::tpch::kTables), std::end(tally::tpch::kTables));
  if (!tpch) {
    for (const std::string& table : o.tables) {
      const std::string path = table_source(o.data_dir, table).first;
      if (!std::filesystem::exists(path)) throw std::runtime_error("no data for table " + table + ": " + path);
    }
    return;
  }
  if (std::filesystem::exists(table_source(o.data_dir, "lineitem").first)) return;
  const std::string gen = (std::filesystem::path(argv0).parent_path() / "tpch_datagen").string();
  std::ostringstream cmd;
  cmd << gen << " --sf " << o.sf << " --dir " << o.data_dir;
  std::printf("generating: %s\n", cmd.str().c_str());
  std::fflush(stdout);
  const double start = now();
  if (std::system(cmd.str().c_str()) != 0) throw std::runtime_error("tpch_datagen failed");
  std::printf("generated in %.1f s\n", now() - start);
}

// Best time of `reps` runs and the first run's answer.
tally::tpch::Answer best_of(tally::tpch::Connection& c, const std::string& sql, int reps) {
  tally::tpch::Answer first = tally::tpch::ask(c, sql);
  for (int i = 1; i < reps && first.ok; ++i) first.seconds = std::min(first.seconds, tally::tpch::ask(c, sql).seconds);
  return first;
}

// DuckDB in memory through its C API, with the statements the benchmark needs.
struct Duck {
  explicit Duck(const Options& o) : lib(o.duckdb_path) {
    if (lib.open(nullptr, &db) != tally::bench::duck::kSuccess || lib.connect(db, &c) != tally::bench::duck::kSuccess) {
      throw std::runtime_error("DuckDB did not open");
    }
    must("SET threads = " + std::to_string(o.threads));
  }
  void must(const std::string& sql) {
    tally::bench::DuckRowSource source(lib, c, sql);
    tally::bench::Row row;
    while (source.next(row)) {
    }
    if (!source.error().empty()) throw std::runtime_error(sql.substr(0, 80) + ": " + source.error());
  }
  tally::bench::DuckdbLibrary lib;
  tally::bench::duck::database db = nullptr;
  tally::bench::duck::connection c = nullptr;
};

struct Rows {
  std::vector<tally::bench::Row> rows;
  std::string error;
  double seconds = 0;
};

// Text without char(n)'s trailing blanks: PostgreSQL pads char(n), DuckDB does not.
void trim_padding(tally::bench::Row& row) {
  for (auto& cell : row) {
    while (!cell.approx && !cell.text.empty() && cell.text.back() == ' ') cell.text.pop_back();
  }
}

Rows duck_rows(Duck& d, const std::string& sql) {
  Rows out;
  const double start = now();
  tally::bench::DuckRowSource source(d.lib, d.c, sql);
  tally::bench::Row row;
  while (source.next(row)) out.rows.push_back(row);
  out.seconds = now() - start;
  out.error = source.error();
  for (auto& r : out.rows) trim_padding(r);
  return out;
}

// Tally's answer as cells: tpch::ask's text rows split at tabs (no TPC-H value holds one).
Rows tally_rows(const tally::tpch::Answer& a) {
  Rows out;
  out.seconds = a.seconds;
  if (!a.ok) out.error = a.error;
  for (const std::string& line : a.rows) {
    tally::bench::Row row;
    size_t begin = 0;
    for (size_t f = 0; f < a.types.size(); ++f) {
      const size_t end = std::min(line.find('\t', begin), line.size());
      tally::bench::Cell cell;
      cell.text = line.substr(begin, end - begin);
      cell.null = cell.text == "NULL";
      cell.approx = a.types[f] == 700 || a.types[f] == 701;  // float4, float8
      row.push_back(std::move(cell));
      begin = end + 1;
    }
    trim_padding(row);
    out.rows.push_back(std::move(row));
  }
  return out;
}

std::string rows_difference(const Rows& tally, const Rows& duck) {
  if (!tally.error.empty()) return "Tally error: " + tally.error;
  if (!duck.error.empty()) return "DuckDB error: " + duck.error;
  if (tally.rows.size() != duck.rows.size()) {
    return std::to_string(tally.rows.size()) + " rows, DuckDB " + std::to_string(duck.rows.size());
  }
  for (size_t i = 0; i < tally.rows.size(); ++i) {
    const auto& x = tally.rows[i];
    const auto& y = duck.rows[i];
    if (x.size() != y.size()) {
      return "row " + std::to_string(i + 1) + ": " + std::to_string(x.size()) + " columns, DuckDB " + std::to_string(y.size());
    }
    // The first differing column alone: a whole wide row does not fit the table's cell.
    for (size_t c = 0; c < x.size(); ++c) {
      if (tally::bench::same_value(x[c], y[c])) continue;
      return "row " + std::to_string(i + 1) + " column " + std::to_string(c + 1) + ": " + tally::bench::show({x[c]}) +
             ", DuckDB " + tally::bench::show({y[c]});
    }
  }
  return "";
}

int run_against_duckdb(const Options& o, const std::string& schema,
                       const std::vector<std::pair<std::string, std::string>>& all) {
  using namespace tally;
  Duck duck(o);
  testing::TallyServer tally(o.tallyd, o.tallyd_args);
  tpch::Connection td(tally.conninfo());
  td.exec(schema);
  duck.must(schema);
  std::optional<testing::TallyServer> tally_ab;
  std::optional<tpch::Connection> td_ab;
  if (!o.ab_tallyd.empty()) {
    tally_ab.emplace(o.ab_tallyd, o.tallyd_args);
    td_ab.emplace(tally_ab->conninfo());
    td_ab->exec(schema);
  }
  double load_duck = 0, load_tally = 0, load_ab = 0;
  for (const std::string& table : o.tables) {
    const auto [path, options] = table_source(o.data_dir, table);
    if (path.size() < 4 || path.compare(path.size() - 4, 4, ".tbl") != 0) {
      throw std::runtime_error("--duckdb reads <table>.tbl files (tpch_datagen); " + path + " is not one");
    }
    double start = now();
    // A quoted "" is an empty text in PostgreSQL's CSV; DuckDB reads it as NULL unless told not to.
    duck.must("COPY " + table + " FROM '" + path + "' (DELIMITER '|', HEADER false, ALLOW_QUOTED_NULLS false)");
    load_duck += now() - start;
    start = now();
    td.copy_in(table, path, options);
    load_tally += now() - start;
    if (td_ab) {
      start = now();
      td_ab->copy_in(table, path, options);
      load_ab += now() - start;
    }
  }
  std::printf("data %s: COPY into Tally %.1f s, into DuckDB %.1f s (%s, %d threads)\n", o.data_dir.c_str(),
              load_tally, load_duck, duck.lib.library_version(), o.threads);
  if (td_ab) std::printf("and into the A/B build %s %.1f s\n", o.ab_tallyd.c_str(), load_ab);
  std::printf("\n");
  if (o.timeout_s > 0) td.exec("SET statement_timeout = " + std::to_string(o.timeout_s * 1000));
  if (td_ab && o.timeout_s > 0) td_ab->exec("SET statement_timeout = " + std::to_string(o.timeout_s * 1000));
  const tally::bench::ProfilerRun profiler(o.profile, tally.pid());
  std::printf(
      "| query | Tally first ms | Tally ms | Tally cores | Tally faults | DuckDB ms | DuckDB/Tally | answer |\n"
      "|---|---:|---:|---:|---:|---:|---:|---|\n");
  double sum_tally = 0, sum_duck = 0, sum_b = 0, sum_ab_build = 0;
  int differ = 0, slower = 0;
  for (const auto& [name, sql] : all) {
    if (!o.queries.empty() && o.queries.count(name) == 0) continue;
    const tpch::Answer first = tpch::ask(td, sql);
    // The warm runs' cores (CPU time over wall time) and page faults per run.
    double best = first.seconds, warm_wall = 0, warm_cpu = 0;
    unsigned long long warm_faults = 0;
    int warm_runs = 0;
    for (int i = 1; i < o.reps && first.ok; ++i) {
      const tally::bench::ProcessUse before = tally::bench::process_use(tally.pid());
      const double seconds = tpch::ask(td, sql).seconds;
      const tally::bench::ProcessUse after = tally::bench::process_use(tally.pid());
      warm_cpu += after.cpu_seconds - before.cpu_seconds;
      warm_faults += after.page_faults - before.page_faults;
      ++warm_runs;
      warm_wall += seconds;
      best = std::min(best, seconds);
    }
    Rows d = duck_rows(duck, sql);
    for (int i = 1; i < o.reps && d.error.empty(); ++i) d.seconds = std::min(d.seconds, duck_rows(duck, sql).seconds);
    // An answer against DuckDB's: "match", or the difference on one line (counted).
    auto verdict = [&](const tpch::Answer& a) {
      std::string diff = rows_difference(tally_rows(a), d);
      std::replace(diff.begin(), diff.end(), '\n', ' ');
      differ += !diff.empty();
      return diff.empty() ? std::string("match") : diff.substr(0, 200);
    };
    const std::string answer = verdict(first);
    slower += best > d.seconds;
    sum_tally += best;
    sum_duck += d.seconds;
    std::printf("| %s | %.1f | %.1f | %.1f | %llu | %.1f | %.2f | %s |\n", name.c_str(), first.seconds * 1e3, best * 1e3,
                warm_wall > 0 ? warm_cpu / warm_wall : 0.0, warm_runs > 0 ? warm_faults / warm_runs : 0ULL,
                d.seconds * 1e3, d.seconds / best, answer.c_str());
    if (!o.ab_name.empty()) {
      td.exec("SET " + o.ab_name + " = '" + o.ab_value + "'");
      const tpch::Answer b = best_of(td, sql, o.reps);
      td.exec("RESET " + o.ab_name);
      sum_b += b.seconds;
      std::printf("%s with %s = %s: %.1f ms (%.2f of the row's), %s\n", name.c_str(), o.ab_name.c_str(),
                  o.ab_value.c_str(), b.seconds * 1e3, b.seconds / best, verdict(b).c_str());
    }
    if (td_ab) {
      const tpch::Answer b = best_of(*td_ab, sql, o.reps);
      sum_ab_build += b.seconds;
      std::printf("%s on the A/B build: %.1f ms (the row's is %.2f of it), %s\n", name.c_str(), b.seconds * 1e3,
                  best / b.seconds, verdict(b).c_str());
    }
    if (o.explain) {
      const tpch::Answer plan = tpch::ask(td, "EXPLAIN ANALYZE " + sql);
      for (const auto& line : plan.rows) std::printf("%s plan: %s\n", name.c_str(), line.c_str());
      if (!plan.ok) std::printf("%s plan: error %s\n", name.c_str(), plan.error.c_str());
    }
    std::fflush(stdout);
  }
  std::printf("| sum | | %.1f | | | %.1f | %.2f | %s |\n", sum_tally * 1e3, sum_duck * 1e3, sum_duck / sum_tally,
              differ > 0 ? (std::to_string(differ) + " differ").c_str() : "all match");
  std::printf("\n%d queries slower on Tally than on DuckDB; best of %d runs each\n", slower, o.reps);
  if (!o.ab_name.empty()) {
    std::printf("with %s = %s: %.1f ms in sum (%.2f of the table's)\n", o.ab_name.c_str(), o.ab_value.c_str(),
                sum_b * 1e3, sum_b / sum_tally);
  }
  if (td_ab) {
    std::printf("the A/B build %s: %.1f ms in sum (the table's is %.2f of it; DuckDB/A/B build %.2f)\n",
                o.ab_tallyd.c_str(), sum_ab_build * 1e3, sum_tally / sum_ab_build, sum_duck / sum_ab_build);
  }
  return differ == 0 ? 0 : 1;
}

// Q11's FRACTION is 0.0001 / SF in the specification; queries.sql holds
// SF 0.1's validation value, under which no part passes the HAVING at SF 1
// and above. Other scale factors get theirs.
void scale_q11_fraction(std::vector<std::pair<std::string, std::string>>& queries, double sf) {
  constexpr const char* kValidation = "0.0010000000";
  char fraction[32];
  std::snprintf(fraction, sizeof fraction, "%.10f", 0.0001 / sf);
  if (std::strcmp(fraction, kValidation) == 0) return;
  for (auto& [name, sql] : queries) {
    const size_t at = name == "Q11" ? sql.find(kValidation) : std::string::npos;
    if (at == std::string::npos) continue;
    sql.replace(at, std::strlen(kValidation), fraction);
    std::printf("Q11's FRACTION for SF %g: %s\n", sf, fraction);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tally;
  const Options o = parse(argc, argv);
  try {
    ensure_data(o, argv[0]);
    const std::string schema = tpch::read_file(o.schema_file);
    auto all = tpch::split_queries(tpch::read_file(o.query_file));
    scale_q11_fraction(all, o.sf);
    // The specification's 22, or queries of one's own under the same
    // markers (a query's parts alone, beside the whole).
    if (all.empty()) throw std::runtime_error(o.query_file + " holds no query (each follows a line '-- TPC-H Qn')");
    if (!o.duckdb_path.empty()) return run_against_duckdb(o, schema, all);

    testing::PostgresServer postgres;
    testing::TallyServer tally(o.tallyd, o.tallyd_args);
    tpch::Connection pg(postgres.conninfo()), td(tally.conninfo());
    pg.exec(schema);
    td.exec(schema);
    double load_pg = 0, load_tally = 0;
    for (const std::string& table : o.tables) {
      const auto [path, options] = table_source(o.data_dir, table);
      double start = now();
      pg.copy_in(table, path, options);
      load_pg += now() - start;
      start = now();
      td.copy_in(table, path, options);
      load_tally += now() - start;
    }
    const double analyze_start = now();
    pg.exec("ANALYZE");
    std::printf("data %s: COPY into Tally %.1f s, into PostgreSQL %.1f s (+ ANALYZE %.1f s)\n\n", o.data_dir.c_str(),
                load_tally, load_pg, now() - analyze_start);

    if (o.timeout_s > 0) {
      const std::string set = "SET statement_timeout = " + std::to_string(o.timeout_s * 1000);
      pg.exec(set);
      td.exec(set);
    }
    std::printf("| query | Tally ms | PostgreSQL ms | PG/Tally | answer |\n|---|---:|---:|---:|---|\n");
    double sum_tally = 0, sum_pg = 0;
    int differ = 0, slower = 0, timed_out = 0;
    for (const auto& [name, sql] : all) {
      if (!o.queries.empty() && o.queries.count(name) == 0) continue;
      const tpch::Answer t = best_of(td, sql, o.reps);
      tpch::Answer p = best_of(pg, sql, o.reps);
      std::string diff;
      if (!p.ok && o.timeout_s > 0 && p.error.find("statement timeout") != std::string::npos) {
        p.seconds = o.timeout_s;
        diff = "PostgreSQL ran out of time (over " + std::to_string(o.timeout_s) + " s): not compared";
        ++timed_out;
      } else if (!p.ok) {
        throw std::runtime_error(name + " failed on PostgreSQL: " + p.error);
      } else {
        diff = tpch::difference(t, p);
        differ += !diff.empty();
      }
      std::replace(diff.begin(), diff.end(), '\n', ' ');
      slower += t.seconds > p.seconds;
      sum_tally += t.seconds;
      sum_pg += p.seconds;
      std::printf("| %s | %.1f | %s%.1f | %.2f | %s |\n", name.c_str(), t.seconds * 1e3, p.ok ? "" : "> ", p.seconds * 1e3,
                  p.seconds / t.seconds, diff.empty() ? "match" : diff.substr(0, 200).c_str());
      std::fflush(stdout);
    }
    std::printf("| sum | %.1f | %s%.1f | %.2f | %s |\n", sum_tally * 1e3, timed_out ? "> " : "", sum_pg * 1e3,
                sum_pg / sum_tally,
                differ > 0 ? (std::to_string(differ) + " differ").c_str() : timed_out > 0 ? "all compared match" : "all match");
    std::printf("\n%d queries slower on Tally than on PostgreSQL; best of %d runs each\n", slower, o.reps);
    return differ == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tpch_bench: %s\n", e.what());
    return 1;
  }
}
