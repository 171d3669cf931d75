#pragma once
// GROUP BY queries over several key columns, shared by the CPU engine's test
// (against the generic path, tests/executor/packed_keys_test.cpp) and the
// GPU engine's (against the CPU engine, tests/gpu/gpu_packed_keys_test.cpp):
// stored tables with text, int2/int4/int8, date, timestamp and bool keys,
// NULLs in every key column, rows whose keys are all NULL, an all-NULL
// column, an empty table, one group, and key tuples needing exactly 63 and
// 64 bits, and key tuples (AggregationSpec::key_tuple) of columns whose
// ranges need more than 63 bits: with NULLs, text, one group, no row, many
// groups, an ordered-set aggregate, and rows after WHERE. Each case names the
// key mode EXPLAIN ANALYZE must report, so that a case which stops reaching
// the packed or tuple path fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "executor/database.hpp"
#include "tests/executor/embedded_database.hpp"
#include "tests/executor/query_outcome.hpp"

namespace tally::executor::testing {

struct PackedKeyCase {
  std::string sql;
  std::string key_mode;   // expected in EXPLAIN ANALYZE ("packed 2 columns", "tuple of 3 columns", "interned", ...)
  bool gpu_runs = false;  // integer aggregates only: the GPU engine takes it
};

inline std::vector<PackedKeyCase> packed_key_cases() {
  return {
      {"SELECT id1, id2, sum(v), count(*) FROM h GROUP BY id1, id2", "packed 2 columns", true},
      {"SELECT id4, id5, sum(v), min(v), max(big) FROM h GROUP BY id4, id5", "packed 2 columns", true},
      {"SELECT id4, id5, avg(v), min(f), max(f), count(f) FROM h GROUP BY id4, id5", "packed 2 columns", false},
      {"SELECT id2, id4, count(*), sum(v) FROM h WHERE v > 2 GROUP BY id2, id4", "packed 2 columns", true},
      {"SELECT id1, s, big, d, b, ts, count(*), sum(v) FROM h GROUP BY id1, s, big, d, b, ts", "packed 6 columns",
       true},
      {"SELECT id4, id5, s, d, b, count(*), max(v) FROM h GROUP BY id4, id5, s, d, b", "packed 5 columns", true},
      {"SELECT id3, id1, id2, count(*), sum(v) FROM h GROUP BY id3, id1, id2", "packed 3 columns", true},
      {"SELECT n1, n2, count(*), sum(v) FROM h GROUP BY n1, n2", "packed 2 columns", true},
      {"SELECT n1, id1, count(*) FROM h GROUP BY n1, id1", "packed 2 columns", true},
      {"SELECT c1, c2, count(*), sum(v), min(s) FROM h GROUP BY c1, c2", "packed 2 columns", true},
      {"SELECT c2, c1, id4, count(*) FROM h WHERE id4 = 3 GROUP BY c2, c1, id4", "packed 3 columns", true},
      {"SELECT id1, id4, count(*), sum(v) FROM e GROUP BY id1, id4", "packed 2 columns", true},
      {"SELECT w63, c1, count(*), sum(v) FROM h GROUP BY w63, c1", "packed 2 columns, 63 bits", true},
      {"SELECT w63, b2, count(*), sum(v) FROM h GROUP BY w63, b2", "tuple of 2 columns", true},
      {"SELECT w63, id1, id4, count(*), sum(v), min(v) FROM h GROUP BY w63, id1, id4", "tuple of 3 columns", true},
      {"SELECT u, id1, count(*), sum(v), max(big) FROM h GROUP BY u, id1", "tuple of 2 columns", true},
      {"SELECT u, w63, id2, s, count(*) FROM h GROUP BY u, w63, id2, s", "tuple of 4 columns", true},
      {"SELECT b2, w63, count(*), sum(v) FROM h WHERE w63 = 0 AND b2 GROUP BY b2, w63", "tuple of 2 columns", true},
      {"SELECT u, id3, count(*), sum(v) FROM h WHERE v > 4 GROUP BY u, id3", "tuple of 2 columns", true},
      {"SELECT u, w63, count(*), sum(v) FROM e GROUP BY u, w63", "packed 2 columns, 0 bits", true},
      {"SELECT w63, id1, percentile_disc(0.5) WITHIN GROUP (ORDER BY v), count(*) FROM h GROUP BY w63, id1",
       "tuple of 2 columns", false},
      // A key of one text column is coded per dictionary entry; of two, evaluated per row.
      {"SELECT id1, lower(id2), count(*) FROM h GROUP BY id1, lower(id2)", "tuple of 2 key programs", true},
      {"SELECT id1, lower(id2) || s, count(*) FROM h GROUP BY id1, lower(id2) || s", "tuple of 2 evaluated values",
       false},
      {"SELECT id1, f, count(*) FROM h GROUP BY id1, f", "query-local codes interned", false},
      {"SELECT id1, id2, id3, id4, id5, s, count(*), sum(v) FROM h GROUP BY id1, id2, id3, id4, id5, s",
       "packed 6 columns", true},
  };
}

// A database over a scratch directory with the tables the cases read.
class PackedKeyTables {
 public:
  explicit PackedKeyTables(const std::string& name)
      : db_(name, [](config::Config& config) {
          config.cpu_threads = 2;
          config.chunk_rows = 4096;  // several chunks: statistics merged over chunks, state merged
        }) {}

  Database& database() { return db_.database(); }

  QueryOutcome run(const std::string& sql) {
    QueryOutcome r = run_simple_query(db_.session(), sql);
    EXPECT_TRUE(r.ok) << sql << ": " << r.sqlstate << " " << r.message;
    return r;
  }

  void create() {
    const std::string columns =
        "(id1 text, id2 varchar, id3 text, id4 int, id5 int, s smallint, big bigint, d date, ts timestamp, "
        "b boolean, v int, f float8, n1 int, n2 text, c1 int, c2 text, w63 bigint, b2 boolean, u bigint)";
    run("CREATE TABLE h " + columns);
    run("CREATE TABLE e " + columns);
    std::mt19937_64 rng(20261128);
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
    auto maybe_null = [&](const std::string& v) { return pick(100) < 6 ? std::string("NULL") : v; };
    static const char* w63_values[] = {"-4611686018427387904", "0", "4611686018427387903"};
    for (int batch = 0; batch < 6; ++batch) {
      std::string insert = "INSERT INTO h VALUES ";
      for (int i = 0; i < 2500; ++i) {
        const bool all_null = pick(100) < 2;  // every key column NULL in this row
        auto key = [&](const std::string& v) { return all_null ? std::string("NULL") : maybe_null(v); };
        char id3[16], date[24], ts[40];
        std::snprintf(id3, sizeof id3, "'id%03d'", pick(40));
        std::snprintf(date, sizeof date, "'2024-%02d-%02d'", 1 + pick(3), 1 + pick(28));
        std::snprintf(ts, sizeof ts, "'2024-01-01 00:00:%02d'", 15 * pick(4));
        insert += std::string(i ? ", " : "") + "(" + key("'a" + std::to_string(pick(9)) + "'") + ", " +
                  key("'b" + std::to_string(pick(7)) + "'") + ", " + key(id3) + ", " +
                  key(std::to_string(pick(10) - 3)) + ", " + key(std::to_string(100 + pick(5))) + ", " +
                  key(std::to_string(pick(3) - 1)) + ", " + key(std::to_string((pick(4) - 2) * 1000LL)) +
                  ", " + key(date) + ", " + key(ts) + ", " + key(pick(2) ? "true" : "false") + ", " +
                  maybe_null(std::to_string(pick(10))) + ", " + maybe_null(std::to_string(pick(1000) / 8.0)) +
                  ", NULL, NULL, 7, 'x', " + w63_values[pick(3)] + ", " + (pick(2) ? "true" : "false") + ", " +
                  // Many groups over a range no packing takes: 9,000 values
                  // 10^15 apart (63 bits, their NULL among them), each in rows of several chunks.
                  key(std::to_string(static_cast<int64_t>((batch * 2500 + i) % 9000) * 1000000000000000LL)) + ")";
      }
      run(insert);
    }
  }

  // Rows of `sql` on one engine, sorted (hash order is not promised).
  std::vector<std::vector<std::optional<std::string>>> rows_on(const std::string& engine, const std::string& sql) {
    run("SET tally.engine = " + engine);
    auto rows = run(sql).rows;
    std::sort(rows.begin(), rows.end());
    return rows;
  }

  // `sql`'s outcome on one engine, an error included.
  QueryOutcome outcome_on(const std::string& engine, const std::string& sql) {
    run("SET tally.engine = " + engine);
    return run_simple_query(db_.session(), sql);
  }

  // EXPLAIN ANALYZE of `sql` on one engine, one line per row.
  std::string explain_on(const std::string& engine, const std::string& sql) {
    run("SET tally.engine = " + engine);
    std::string text;
    for (const auto& row : run("EXPLAIN ANALYZE " + sql).rows) text += (row.empty() || !row[0] ? "" : *row[0]) + "\n";
    return text;
  }

 private:
  EmbeddedDatabase db_;
};

}  // namespace tally::executor::testing
