#include "tests/differential/result_compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tally::testing {

using executor::testing::QueryOutcome;
using Row = std::vector<std::optional<std::string>>;

QueryOutcome run_postgres(PGconn* conn, const std::string& sql) {
  QueryOutcome r;
  PGresult* res = PQexec(conn, sql.c_str());
  if (PQresultStatus(res) != PGRES_TUPLES_OK && PQresultStatus(res) != PGRES_COMMAND_OK) {
    r.ok = false;
    const char* state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
    r.sqlstate = state ? state : "";
    r.message = PQresultErrorMessage(res);
  } else {
    for (int f = 0; f < PQnfields(res); ++f) r.oids.push_back(PQftype(res, f));
    for (int i = 0; i < PQntuples(res); ++i) {
      Row row;
      for (int f = 0; f < PQnfields(res); ++f) {
        row.push_back(PQgetisnull(res, i, f) ? std::nullopt : std::optional<std::string>(PQgetvalue(res, i, f)));
      }
      r.rows.push_back(std::move(row));
    }
  }
  PQclear(res);
  return r;
}

namespace {

bool is_float(uint32_t oid) { return oid == 700 || oid == 701; }

bool floats_match(const std::string& a, const std::string& b) {
  if (a == b) return true;
  char* end_a;
  char* end_b;
  const double x = std::strtod(a.c_str(), &end_a), y = std::strtod(b.c_str(), &end_b);
  if (*end_a || *end_b) return false;
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  const double scale = std::max({std::fabs(x), std::fabs(y), 1.0});
  return std::fabs(x - y) <= 1e-9 * scale;
}

// Rows sorted by a key where float values are rounded, so that values which
// differ in the last digits still line up.
std::vector<Row> canonical_order(const std::vector<Row>& rows, const std::vector<uint32_t>& oids) {
  std::vector<std::pair<Row, Row>> keyed;
  for (const auto& row : rows) {
    Row key = row;
    for (size_t c = 0; c < key.size() && c < oids.size(); ++c) {
      if (key[c] && is_float(oids[c])) {
        char buffer[64];
        std::snprintf(buffer, sizeof buffer, "%.6e", std::strtod(key[c]->c_str(), nullptr));
        key[c] = buffer;
      }
    }
    keyed.emplace_back(std::move(key), row);
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<Row> out;
  for (auto& k : keyed) out.push_back(std::move(k.second));
  return out;
}

std::string show(const Row& row) {
  std::string line;
  for (const auto& v : row) line += (v ? *v : "NULL") + "|";
  return line;
}

}  // namespace

std::string compare_outcomes(const QueryOutcome& pg, const QueryOutcome& tally, bool ordered) {
  if (pg.ok != tally.ok) {
    return pg.ok ? "Tally failed: " + tally.sqlstate + " " + tally.message
                 : "PostgreSQL failed (" + pg.sqlstate + " " + pg.message + ") but Tally succeeded";
  }
  if (!pg.ok) {
    return pg.sqlstate == tally.sqlstate ? ""
                                         : "SQLSTATE " + tally.sqlstate + " (" + tally.message + ") vs PostgreSQL " +
                                               pg.sqlstate + " (" + pg.message + ")";
  }
  if (pg.oids != tally.oids) {
    std::string a, b;
    for (auto o : pg.oids) a += std::to_string(o) + " ";
    for (auto o : tally.oids) b += std::to_string(o) + " ";
    return "result type OIDs differ: Tally " + b + "vs PostgreSQL " + a;
  }
  if (pg.rows.size() != tally.rows.size()) {
    return "row count " + std::to_string(tally.rows.size()) + " vs PostgreSQL " + std::to_string(pg.rows.size());
  }
  const auto a = ordered ? pg.rows : canonical_order(pg.rows, pg.oids);
  const auto b = ordered ? tally.rows : canonical_order(tally.rows, pg.oids);
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t c = 0; c < a[i].size(); ++c) {
      const auto& x = a[i][c];
      const auto& y = b[i][c];
      const bool same = x.has_value() == y.has_value() &&
                        (!x || (is_float(pg.oids[c]) ? floats_match(*x, *y) : *x == *y));
      if (same) continue;
      std::string context;
      for (size_t j = i; j < std::min(a.size(), i + 3); ++j) {
        context += "\n  pg:    " + show(a[j]) + "\n  tally: " + show(b[j]);
      }
      return "row " + std::to_string(i) + " column " + std::to_string(c) + ": Tally '" + (y ? *y : "NULL") +
             "' vs PostgreSQL '" + (x ? *x : "NULL") + "'" + context;
    }
  }
  return "";
}

}  // namespace tally::testing
