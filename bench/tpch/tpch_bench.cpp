// TPC-H on tallyd against PostgreSQL 15, both started here and loaded with the
// same data in one run: every query's answer is compared (tests/tpch's rule:
// column types and every value's text, in order) and timed on both (the best
// of --reps runs, through libpq, result transfer included).
//
//   tpch_bench --tallyd build/tallyd --sf 1 --data-dir /tmp/tpch-sf1 [--queries 1,6,13] [--reps 3]
//
// --timeout-s bounds each query on both systems (PostgreSQL takes hours on
// Q17 and Q20 at SF 1 without an index on l_partkey): a query that runs out
// of time counts the limit as its time and its answer is not compared.
// --data-dir holds <table>.tbl from tpch_datagen ('|'-separated) or
// <table>.csv.xz (the reference data in ../shared/tpch/sf0.1); when it holds
// neither, tpch_datagen (beside this program) writes it at --sf first.
// Exits 1 when any answer differs from PostgreSQL's.
#include <libpq-fe.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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
  int reps = 3;
  int timeout_s = 0;  // statement_timeout on both; 0: none
};

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: tpch_bench [--tallyd PATH] [--tallyd-args ARGS] [--sf SF] [--data-dir DIR]\n"
               "                  [--queries 1,6,...] [--reps N] [--timeout-s S] [--query-file queries.sql]\n"
               "                  [--schema schema.sql]\n");
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
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
    else if (a == "--queries") {
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

}  // namespace

int main(int argc, char** argv) {
  using namespace tally;
  const Options o = parse(argc, argv);
  try {
    ensure_data(o, argv[0]);
    const std::string schema = tpch::read_file(o.schema_file);
    const auto all = tpch::split_queries(tpch::read_file(o.query_file));
    if (all.size() != 22) throw std::runtime_error(o.query_file + " does not hold 22 queries");

    testing::PostgresServer postgres;
    testing::TallyServer tally(o.tallyd, o.tallyd_args);
    tpch::Connection pg(postgres.conninfo()), td(tally.conninfo());
    pg.exec(schema);
    td.exec(tpch::tally_schema(schema));
    double load_pg = 0, load_tally = 0;
    for (const char* table : tpch::kTables) {
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
