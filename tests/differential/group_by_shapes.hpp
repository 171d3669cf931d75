#pragma once
// The single-table GROUP BY generator of differential_test: rows of table d
// (NULLs, skewed and uniform keys, extremes, non-ASCII text, dates, numerics)
// and GROUP BY queries (ROLLUP / CUBE, FILTER, ordered-set aggregates) with
// some set operations, drawn from two seeded streams.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "executor/value_codec.hpp"

namespace tally::testing {

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed), extra_(seed ^ 0x5e70e5u) {}

  int pick(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  bool chance(int percent) { return pick(100) < percent; }

  // Table rows as SQL VALUES tuples.
  std::vector<std::string> rows(int count) {
    static const char* texts[] = {"alpha", "Beta", "gamma", "ärger", "Ωmega", "日本", "zeta", "a_b", "A%b", "  pad", "émile", "Ünïcode"};
    std::vector<std::string> out;
    for (int i = 0; i < count; ++i) {
      auto maybe_null = [&](int percent, std::string v) { return chance(percent) ? std::string("NULL") : v; };
      // Skewed: most rows in few groups.
      const int skew = pick(100) < 70 ? pick(3) : pick(40);
      const int uni = pick(1000);
      static const int64_t extremes[] = {INT64_MIN + 1, INT64_MAX, -1, 0, 1, -4611686018427387904LL};
      const int64_t neg = chance(10) ? extremes[pick(6)] : -static_cast<int64_t>(pick(50)) * 1000003;
      const std::string text = std::string("'") + texts[pick(12)] + "'";
      const int day = pick(2000) - 600;
      static const int32_t int_extremes[] = {2147483647, -2147483647 - 1, 0, -1};
      const int64_t vint = pick(100) == 0 ? int_extremes[pick(4)] : static_cast<int64_t>(pick(2000001)) - 1000000;
      const int64_t vbig = static_cast<int64_t>(rng_() % 2000000000000000ULL) - 1000000000000000LL;
      char f[64];
      // Extreme floats are rare: one makes every variance of its group overflow (22003 on both sides).
      const double vf = pick(200) == 0 ? (pick(2) ? 1.25e150 : -1.5e-300) : (static_cast<double>(pick(2000000)) - 1e6) / 7.0;
      std::snprintf(f, sizeof f, "%.17g", vf);
      char num[64];
      std::snprintf(num, sizeof num, "%d.%02d", pick(200000) - 100000, pick(100));
      char knum[64];
      std::snprintf(knum, sizeof knum, "%d.%03d", pick(20) - 10, pick(4) * 250);
      char date[32];
      int y, m, dd;
      tally::executor::civil_from_days(tally::executor::days_from_civil(2019, 3, 1) + day, y, m, dd);
      std::snprintf(date, sizeof date, "'%04d-%02d-%02d'", y, m, dd);
      out.push_back("(" + maybe_null(5, std::to_string(skew)) + ", " + std::to_string(uni) + ", " +
                    maybe_null(5, std::to_string(neg)) + ", " + maybe_null(8, text) + ", " + maybe_null(5, date) +
                    ", " + maybe_null(5, knum) + ", " + maybe_null(8, std::to_string(vint)) + ", " +
                    maybe_null(8, std::to_string(vbig)) + ", " + maybe_null(8, f) + ", " + maybe_null(8, num) +
                    ", " + maybe_null(8, std::to_string(pick(60001) - 30000)) + ", " +
                    maybe_null(10, pick(2) ? "true" : "false") + ")");
    }
    return out;
  }

  std::string query() {
    if (extra_() % 100 < 15) {
      // Set operations draw from the second stream (the GROUP BY queries
      // from the first stay the ones they were before set operations came).
      std::swap(rng_, extra_);
      std::string sql = set_query();
      std::swap(rng_, extra_);
      return sql;
    }
    static const char* keys[] = {"k_small", "k_uni", "k_neg", "k_text", "k_date", "k_num", "flag",
                                 "k_uni % 7", "lower(k_text)", "upper(k_text)", "date_trunc('month', k_date)",
                                 "extract(year FROM k_date)", "k_small + 1", "substr(k_text, 1, 2)",
                                 "length(k_text)", "CASE WHEN v_int > 0 THEN 'pos' ELSE 'neg' END",
                                 "coalesce(k_small, -1)", "k_uni / 100", "date_part('dow', k_date)",
                                 "abs(k_small - 2)", "nullif(k_small, 0)", "round(k_num)", "k_neg % 3"};
    static const char* numeric_inputs[] = {"v_int", "v_big", "v_float", "v_num", "v_small", "k_uni", "k_num"};
    static const char* general_aggs[] = {"count(*)", "count(k_text)", "count(DISTINCT k_small)",
                                         "bool_and(flag)", "bool_or(flag)", "min(k_text)", "max(k_date)",
                                         "min(k_date)", "count(DISTINCT k_text)", "mode() WITHIN GROUP (ORDER BY k_small)",
                                         "percentile_disc(0.5) WITHIN GROUP (ORDER BY v_int)",
                                         "percentile_cont(0.25) WITHIN GROUP (ORDER BY v_float)",
                                         "corr(v_float, v_int)", "covar_pop(v_int, v_small)",
                                         "regr_slope(v_small, v_int)", "regr_intercept(v_small, v_int)",
                                         "regr_r2(v_small, k_uni)", "covar_samp(v_small, k_uni)",
                                         "count(*) FILTER (WHERE v_int > 0)", "max(v_small) - min(v_small)", "max(v_int)::int8 - min(v_int)",
                                         "sum(v_small) / count(*)"};
    static const char* functions[] = {"sum", "avg", "min", "max", "stddev", "variance", "stddev_pop", "var_pop",
                                      "var_samp", "stddev_samp"};
    const int nkeys = pick(100) < 15 ? 0 : (pick(100) < 70 ? 1 : 2);
    std::vector<std::string> chosen;
    while (static_cast<int>(chosen.size()) < nkeys) {
      std::string k = keys[pick(static_cast<int>(std::size(keys)))];
      if (std::find(chosen.begin(), chosen.end(), k) == chosen.end()) chosen.push_back(k);
    }
    std::vector<std::string> aggs;
    const int naggs = 1 + pick(3);
    for (int i = 0; i < naggs; ++i) {
      if (pick(100) < 60) {
        std::string fn = functions[pick(static_cast<int>(std::size(functions)))];
        std::string in = numeric_inputs[pick(static_cast<int>(std::size(numeric_inputs)))];
        // Squares of huge bigints overflow Tally's 128-bit numeric state: keep
        // the variance family on the other inputs (a documented limit).
        if (in == "v_big" && fn != "sum" && fn != "avg" && fn != "min" && fn != "max") in = "v_int";
        std::string agg = fn + "(" + (chance(10) ? "DISTINCT " : "") + in + ")";
        if (chance(15)) agg += " FILTER (WHERE " + filter() + ")";
        aggs.push_back(agg);
      } else {
        aggs.push_back(general_aggs[pick(static_cast<int>(std::size(general_aggs)))]);
      }
    }
    bool ordered = false;
    std::string sql = "SELECT ";
    std::string selected, where;
    for (size_t i = 0; i < chosen.size(); ++i) selected += chosen[i] + ", ";
    for (size_t i = 0; i < aggs.size(); ++i) selected += (i ? ", " : "") + aggs[i];
    sql += selected + " FROM d";
    if (chance(40)) where = " WHERE " + filter();
    sql += where;
    if (!chosen.empty()) {
      sql += " GROUP BY ";
      for (size_t i = 0; i < chosen.size(); ++i) {
        sql += (i ? ", " : "") + (chance(50) ? std::to_string(i + 1) : chosen[i]);
      }
      if (chance(20)) sql += " HAVING count(*) > " + std::to_string(pick(5));
      if (chance(30)) {
        ordered = true;
        sql += " ORDER BY ";
        for (size_t i = 0; i < chosen.size(); ++i) {
          sql += (i ? ", " : "") + std::to_string(i + 1) + (chance(50) ? " DESC" : "") +
                 (chance(30) ? " NULLS FIRST" : "");
        }
        if (chance(50)) sql += " LIMIT " + std::to_string(1 + pick(20));
      }
    }
    last_ordered_ = ordered;
    // Sometimes the same keys under ROLLUP / CUBE instead, with grouping()
    // first so that rows of different grouping sets never compare equal by
    // their keys (decided by the second stream: the queries above stay as
    // they were).
    if (!chosen.empty() && extra_() % 100 < 12) {
      std::string keys;
      for (size_t i = 0; i < chosen.size(); ++i) keys += (i ? ", " : "") + chosen[i];
      sql = "SELECT grouping(" + keys + "), " + selected + " FROM d" + where + " GROUP BY " +
            (extra_() % 2 ? "ROLLUP" : "CUBE") + " (" + keys + ")";
      last_ordered_ = false;
    }
    return sql;
  }

  // A set operation between two filtered selections of the same shape (an
  // integer column may meet a smallint or bigint one: UNION's type
  // resolution), sometimes ordered by every column and limited, sometimes
  // counted from a derived table. Rows compare by every column.
  std::string set_query() {
    // Integers of several widths meet each other; numeric only itself (an
    // integer and a numeric that compare equal print differently, and which
    // of the two PostgreSQL prints depends on its plan).
    static const char* numbers[] = {"k_small", "k_uni", "k_neg", "k_uni % 7", "k_small + 1", "length(k_text)",
                                    "v_small", "nullif(k_small, 0)"};
    static const char* others[] = {"k_text", "k_date", "flag", "lower(k_text)", "date_trunc('month', k_date)",
                                   "substr(k_text, 1, 2)", "k_num"};
    static const char* ops[] = {"UNION", "UNION ALL", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"};
    const int ncols = 1 + pick(2);
    std::vector<std::string> sides[2];
    for (int i = 0; i < ncols; ++i) {
      if (chance(60)) {
        sides[0].push_back(numbers[pick(static_cast<int>(std::size(numbers)))]);
        sides[1].push_back(chance(70) ? sides[0].back() : numbers[pick(static_cast<int>(std::size(numbers)))]);
      } else {
        sides[0].push_back(others[pick(static_cast<int>(std::size(others)))]);
        sides[1].push_back(sides[0].back());
      }
    }
    std::string sql;
    for (int s = 0; s < 2; ++s) {
      if (s == 1) sql += std::string(" ") + ops[pick(static_cast<int>(std::size(ops)))] + " ";
      sql += "SELECT ";
      for (int i = 0; i < ncols; ++i) sql += (i ? ", " : "") + sides[s][static_cast<size_t>(i)];
      sql += " FROM d";
      if (chance(80)) sql += " WHERE " + filter();
    }
    last_ordered_ = false;
    if (chance(20)) {
      return "SELECT count(*) FROM (" + sql + ") s";
    }
    if (chance(30)) {
      last_ordered_ = true;
      sql += " ORDER BY ";
      for (int i = 0; i < ncols; ++i) sql += (i ? ", " : "") + std::to_string(i + 1) + (chance(50) ? " DESC" : "");
      sql += " LIMIT " + std::to_string(1 + pick(30));
    }
    return sql;
  }

  std::string filter() {
    static const char* filters[] = {"v_int > 0", "k_text LIKE 'a%'", "k_small IN (0, 1, 2)",
                                    "k_date BETWEEN '2019-06-01' AND '2020-06-01'", "v_float IS NOT NULL",
                                    "k_uni < 500 AND flag", "NOT flag OR k_small IS NULL", "k_text ILIKE '%E%'",
                                    "v_num > 0", "k_neg < 0"};
    return filters[pick(static_cast<int>(std::size(filters)))];
  }

  bool last_ordered_ = false;

 private:
  std::mt19937_64 rng_;
  std::mt19937_64 extra_;  // set operations and ROLLUP / CUBE
};

}  // namespace tally::testing
