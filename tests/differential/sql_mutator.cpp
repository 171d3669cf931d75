#include "tests/differential/sql_mutator.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

namespace tally::testing {

namespace {

std::vector<std::string> tokens(const std::string& sql) {
  std::vector<std::string> out;
  std::istringstream in(sql);
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? " " : "") + parts[i];
  return out;
}

}  // namespace

std::string SqlMutator::odd_literal() {
  static const char* literals[] = {
      "99999999999999999999999999999999999999", "-2147483648", "9223372036854775808", "-9223372036854775808",
      "1e308", "1e309", "-1e-320", "'NaN'::float8", "'-Infinity'::float8", "'infinity'::date", "0.0000000000000000001",
      "1e131072", "'\\x00'", "E'\\\\'", "''''", "'2020-02-30'::date", "'abc'::int", "NULL::int", "(1/0)",
      "x'ff'", "$1", "'\xc3\x28'", "99999999999999999999.99::numeric(4,2)", "ARRAY[1,2]", "'{}'::int[]",
      "interval '1 day'", "'24:00'::time", "2147483647 + 1", "-32768::smallint"};
  const int roll = random_.pick(100);
  if (roll < 5) return "'" + std::string(static_cast<size_t>(1 + random_.pick(200000)), 'x') + "'";
  if (roll < 8) return std::string(static_cast<size_t>(1 + random_.pick(5000)), '9');
  return random_.one_of(literals);
}

std::string SqlMutator::deep(int depth) {
  std::string sql;
  switch (random_.pick(5)) {
    case 0:
      sql = "SELECT " + std::string(static_cast<size_t>(depth), '(') + "1" + std::string(static_cast<size_t>(depth), ')');
      break;
    case 1:
      sql = "SELECT a FROM t1";
      for (int i = 0; i < depth; ++i) sql = "SELECT a FROM (" + sql + ") AS s" + std::to_string(i);
      break;
    case 2:
      sql = "1";
      for (int i = 0; i < depth; ++i) sql = "CASE WHEN a > " + std::to_string(i) + " THEN " + sql + " ELSE 0 END";
      sql = "SELECT " + sql + " FROM t1";
      break;
    case 3:
      sql = "a > 0";
      for (int i = 0; i < depth; ++i) sql = "NOT (" + sql + ")";
      sql = "SELECT count(*) FROM t1 WHERE " + sql;
      break;
    default:
      // Planning nested scalar subqueries grows faster than linearly in
      // Tally and does not see statement_timeout (about 6 s at 400 levels;
      // PostgreSQL: 1 s, and 54001 past about 1,500): kept to 300 levels.
      sql = "SELECT 1";
      for (int i = 0; i < std::min(depth, 300); ++i) sql = "SELECT (" + sql + ") + 1";
      break;
  }
  return sql;
}

std::string SqlMutator::mutate_once(const std::string& sql) {
  static const char* keywords[] = {"SELECT", "FROM", "WHERE", "GROUP BY", "ORDER BY", "HAVING", "JOIN", "ON",
                                   "UNION", "INTERSECT", "EXCEPT", "ALL", "DISTINCT", "LIMIT", "OFFSET", "AND", "OR",
                                   "NOT", "NULL", "CASE", "WHEN", "THEN", "END", "AS", "IN", "EXISTS", "OVER",
                                   "PARTITION BY", "WITH", "LATERAL", "FULL", "ROLLUP", "(", ")", ",", "*", "::", ";",
                                   "COPY", "VALUES", "BETWEEN", "ANY", "FILTER", "ROWS", "RANGE", "RECURSIVE"};
  auto parts = tokens(sql);
  if (parts.empty()) return sql;
  const size_t i = static_cast<size_t>(random_.pick(static_cast<int>(parts.size())));
  const size_t j = static_cast<size_t>(random_.pick(static_cast<int>(parts.size())));
  switch (random_.pick(9)) {
    case 0: parts.erase(parts.begin() + static_cast<long>(i)); break;
    case 1: parts.insert(parts.begin() + static_cast<long>(i), parts[j]); break;
    case 2: std::swap(parts[i], parts[j]); break;
    case 3: parts[i] = random_.one_of(keywords); break;
    case 4: parts.insert(parts.begin() + static_cast<long>(i), random_.one_of(keywords)); break;
    case 5: parts[i] = odd_literal(); break;
    case 6: parts.resize(i); break;
    case 7: {
      const int n = 1 + random_.pick(300);
      parts[i] = std::string(static_cast<size_t>(n), '(') + parts[i] + std::string(static_cast<size_t>(n), ')');
      break;
    }
    default: {
      // A character dropped from inside a token (a quote, a parenthesis).
      std::string& t = parts[i];
      if (!t.empty()) t.erase(static_cast<size_t>(random_.pick(static_cast<int>(t.size()))), 1);
      break;
    }
  }
  return join(parts);
}

std::string SqlMutator::mutate(const std::string& sql) {
  std::string out = sql;
  // One mutation mostly, so that many statements still parse and reach
  // the binder and the executor.
  for (int n = random_.chance(60) ? 1 : 2 + random_.pick(2); n > 0; --n) out = mutate_once(out);
  return out;
}

}  // namespace tally::testing
