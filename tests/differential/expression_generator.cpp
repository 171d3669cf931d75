#include "tests/differential/expression_generator.hpp"

#include <cstdio>

namespace tally::testing {

bool Scope::has(Kind kind) const {
  for (const auto& c : columns) {
    if (c.kind == kind) return true;
  }
  return false;
}

std::string ExpressionGenerator::alias(const char* prefix) { return prefix + std::to_string(aliases_++); }

std::string ExpressionGenerator::literal(Kind kind) {
  static const char* texts[] = {"'alpha'", "'Beta'", "'zeta'", "'ärger'", "''", "'b'"};
  char buffer[64];
  switch (kind) {
    case Kind::Int:
      return std::to_string(random_.pick(21) - 10);
    case Kind::Numeric:
      // Scale 2 like every numeric column: values that compare equal print
      // alike, so which duplicate DISTINCT, UNION or GROUP BY keeps cannot show.
      std::snprintf(buffer, sizeof buffer, "%d.%02d", random_.pick(200) - 100, random_.pick(100));
      return buffer;
    case Kind::Float:
      std::snprintf(buffer, sizeof buffer, "%d.5::float8", random_.pick(200) - 100);
      return buffer;
    case Kind::Text:
      return random_.one_of(texts);
    case Kind::Date:
      std::snprintf(buffer, sizeof buffer, "DATE '2020-%02d-15'", 1 + random_.pick(12));
      return buffer;
    case Kind::Bool:
      return random_.chance(50) ? "true" : "false";
  }
  return "NULL";
}

std::string ExpressionGenerator::column(Kind kind, const Scope& scope) {
  std::vector<const ScopeColumn*> matching;
  for (const auto& c : scope.columns) {
    if (c.kind == kind) matching.push_back(&c);
  }
  if (matching.empty()) return literal(kind);
  return matching[static_cast<size_t>(random_.pick(static_cast<int>(matching.size())))]->expr;
}

Kind ExpressionGenerator::any_kind(const Scope& scope, bool allow_bool) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    const auto& c = scope.columns[static_cast<size_t>(random_.pick(static_cast<int>(scope.columns.size())))];
    if (allow_bool || c.kind != Kind::Bool) return c.kind;
  }
  return Kind::Int;
}

std::string ExpressionGenerator::expr(Kind kind, const Scope& scope, int depth) {
  const int roll = random_.pick(100);
  if (depth <= 0 || roll < 45) return column(kind, scope);
  if (roll < 52) return literal(kind);
  if (roll < 60) {
    return "CASE WHEN " + predicate(scope, depth - 1) + " THEN " + expr(kind, scope, depth - 1) + " ELSE " +
           expr(kind, scope, depth - 1) + " END";
  }
  if (roll < 66 && kind != Kind::Bool) return "coalesce(" + expr(kind, scope, depth - 1) + ", " + literal(kind) + ")";
  const std::string a = expr(kind, scope, depth - 1);
  switch (kind) {
    case Kind::Int: {
      if (random_.chance(15) && scope.has(Kind::Text)) return "length(" + column(Kind::Text, scope) + ")";
      switch (random_.pick(8)) {
        case 0: return "abs(" + a + ")";
        case 1: return "(" + a + " % 3)";
        case 2: return "nullif(" + a + ", " + literal(kind) + ")";
        case 3: return "greatest(" + a + ", " + expr(kind, scope, depth - 1) + ")";
        case 4: return "least(" + a + ", " + expr(kind, scope, depth - 1) + ")";
        case 5: return "(" + a + " * " + expr(kind, scope, depth - 1) + ")";
        case 6: return "(" + a + " - " + expr(kind, scope, depth - 1) + ")";
        default: return "(" + a + " + " + expr(kind, scope, depth - 1) + ")";
      }
    }
    case Kind::Numeric:
      switch (random_.pick(5)) {
        case 0: return "(" + a + " + " + expr(kind, scope, depth - 1) + ")";
        case 1: return "(" + a + " * " + column(Kind::Int, scope) + ")";
        case 2: return "round(" + a + ", 2)";
        case 3: return "abs(" + a + ")";
        default: return "(" + a + " - " + literal(kind) + ")";
      }
    case Kind::Float:
      switch (random_.pick(3)) {
        case 0: return "(" + a + " + " + expr(kind, scope, depth - 1) + ")";
        case 1: return "(" + a + " * 2)";
        default: return "abs(" + a + ")";
      }
    case Kind::Text:
      switch (random_.pick(5)) {
        case 0: return "lower(" + a + ")";
        case 1: return "upper(" + a + ")";
        case 2: return "substr(" + a + ", 1, 2)";
        case 3: return "(" + a + " || 'x')";
        default: return "nullif(" + a + ", " + literal(kind) + ")";
      }
    case Kind::Date:
      return "(" + a + " + " + std::to_string(random_.pick(61) - 30) + ")";
    case Kind::Bool:
      return predicate(scope, depth - 1);
  }
  return a;
}

std::string ExpressionGenerator::comparison(const Scope& scope, int depth) {
  static const char* ops[] = {"=", "<>", "<", "<=", ">", ">="};
  const Kind kind = any_kind(scope, false);
  const std::string a = expr(kind, scope, depth);
  switch (random_.pick(8)) {
    case 0: return a + (random_.chance(50) ? " IS NULL" : " IS NOT NULL");
    case 1: {
      std::string lo = literal(kind), hi = literal(kind);
      return a + (random_.chance(20) ? " NOT" : "") + " BETWEEN " + lo + " AND " + hi;
    }
    case 2: {
      std::string list = literal(kind);
      for (int i = random_.pick(4); i >= 0; --i) list += ", " + literal(kind);
      if (random_.chance(15)) list += ", NULL";
      return a + (random_.chance(30) ? " NOT IN (" : " IN (") + list + ")";
    }
    case 3:
      if (kind == Kind::Text) {
        static const char* patterns[] = {"'a%'", "'%a%'", "'_e%'", "'%\\_%'", "'B%'"};
        return a + (random_.chance(50) ? " LIKE " : " ILIKE ") + random_.one_of(patterns);
      }
      [[fallthrough]];
    default: {
      const std::string b = random_.chance(50) ? literal(kind) : expr(kind, scope, depth);
      return a + " " + random_.one_of(ops) + " " + b;
    }
  }
}

std::string ExpressionGenerator::base_table(Scope& scope, bool allow_empty) {
  const auto& tables = fuzz_tables();
  const FuzzTable* table = nullptr;
  do {
    table = &tables[static_cast<size_t>(random_.pick(static_cast<int>(tables.size())))];
  } while (!allow_empty && table->rows == 0);
  const std::string name = alias("x");
  for (const auto& c : table->columns) scope.columns.push_back({name + "." + c.name, c.kind});
  scope.ids.push_back(name + ".id");
  return table->name + " " + name;
}

std::string ExpressionGenerator::subquery_predicate(const Scope& outer, int depth) {
  Scope inner;
  const std::string from = base_table(inner);
  std::string where;
  if (random_.chance(60)) {
    // Correlated: an inner column against an outer expression of its kind.
    for (int attempt = 0; attempt < 5 && where.empty(); ++attempt) {
      const auto& c = inner.columns[static_cast<size_t>(random_.pick(static_cast<int>(inner.columns.size())))];
      if (c.kind != Kind::Bool && outer.has(c.kind)) {
        where = c.expr + (random_.chance(75) ? " = " : " < ") + column(c.kind, outer);
      }
    }
  }
  if (random_.chance(50)) where += (where.empty() ? "" : " AND ") + predicate(inner, depth - 1);
  const std::string filter = where.empty() ? "" : " WHERE " + where;
  const Kind kind = any_kind(inner, false);
  const std::string inner_column = column(kind, inner);
  const std::string outer_expr = outer.has(kind) ? expr(kind, outer, 1) : literal(kind);
  static const char* ops[] = {"=", "<>", "<", ">="};
  switch (random_.pick(5)) {
    case 0: return std::string(random_.chance(40) ? "NOT " : "") + "EXISTS (SELECT 1 FROM " + from + filter + ")";
    case 1:
      return outer_expr + (random_.chance(40) ? " NOT IN" : " IN") + " (SELECT " + inner_column + " FROM " + from +
             filter + ")";
    case 2:
      return outer_expr + " " + random_.one_of(ops) + (random_.chance(50) ? " ANY" : " ALL") + " (SELECT " +
             inner_column + " FROM " + from + filter + ")";
    case 3: {
      static const char* aggs[] = {"max", "min"};
      return outer_expr + " " + random_.one_of(ops) + " (SELECT " + random_.one_of(aggs) + "(" + inner_column +
             ") FROM " + from + filter + ")";
    }
    default:
      return "(SELECT count(*) FROM " + from + filter + ") " + random_.one_of(ops) + " " +
             std::to_string(random_.pick(5));
  }
}

std::string ExpressionGenerator::predicate(const Scope& scope, int depth) {
  const int roll = random_.pick(100);
  if (depth > 0 && roll < 12) return "(" + predicate(scope, depth - 1) + " AND " + predicate(scope, depth - 1) + ")";
  if (depth > 0 && roll < 20) return "(" + predicate(scope, depth - 1) + " OR " + predicate(scope, depth - 1) + ")";
  if (depth > 0 && roll < 24) return "NOT (" + predicate(scope, depth - 1) + ")";
  if (depth > 0 && roll < 38) return subquery_predicate(scope, depth);
  if (roll < 44 && scope.has(Kind::Bool)) return column(Kind::Bool, scope);
  return comparison(scope, depth > 0 ? 1 : 0);
}

}  // namespace tally::testing
