#include "tests/differential/query_shapes.hpp"

namespace tally::testing {

namespace {

std::string item(const std::string& expr, size_t index) { return expr + " AS c" + std::to_string(index); }

void merge(Scope& into, const Scope& from) {
  into.columns.insert(into.columns.end(), from.columns.begin(), from.columns.end());
  // A total order survives a join only if both sides had one.
  if (into.ids.empty() || from.ids.empty()) {
    into.ids.clear();
  } else {
    into.ids.insert(into.ids.end(), from.ids.begin(), from.ids.end());
  }
}

// Whether `expr` references none of the scope's columns.
bool constant(const std::string& expr, const Scope& scope) {
  for (const auto& c : scope.columns) {
    if (expr.find(c.expr) != std::string::npos) return false;
  }
  return true;
}

}  // namespace

GeneratedQuery QueryGenerator::next() {
  exprs_.reset_aliases();
  ctes_.clear();
  std::string with;
  if (random_.chance(15)) {
    Relation cte = relation(1, false);
    with = "WITH w AS (" + cte.sql + ") ";
    ctes_.push_back({"w", cte.kinds});
  }
  Relation top = relation(2, true);
  if (!top.ordered && random_.chance(25)) {
    order_by_all(top, random_.chance(60));
  } else if (top.ordered && random_.chance(30)) {
    top.sql += " LIMIT " + std::to_string(1 + random_.pick(10));
  }
  return {with + top.sql, top.ordered};
}

QueryGenerator::Relation QueryGenerator::relation(int depth, bool top, const std::vector<Kind>* required) {
  if (required == nullptr && depth > 0 && random_.chance(18)) return set_operation(depth, top);
  return select(depth, top, required);
}

void QueryGenerator::order_by_all(Relation& rel, bool limit) {
  rel.sql += " ORDER BY ";
  for (size_t i = 0; i < rel.kinds.size(); ++i) {
    rel.sql += (i ? ", " : "") + std::to_string(i + 1) + (random_.chance(40) ? " DESC" : "") +
               (random_.chance(20) ? (random_.chance(50) ? " NULLS FIRST" : " NULLS LAST") : "");
  }
  if (limit) {
    rel.sql += " LIMIT " + std::to_string(random_.pick(12));
    if (random_.chance(40)) rel.sql += " OFFSET " + std::to_string(random_.pick(8));
  } else if (random_.chance(15)) {
    rel.sql += " OFFSET " + std::to_string(random_.pick(8));
  }
  rel.ordered = true;
}

std::string QueryGenerator::from_item(Scope& scope, int depth, bool allow_empty) {
  const int roll = random_.pick(100);
  if (depth > 0 && roll < 15) {
    Relation inner = relation(depth - 1, false);
    if (!inner.ordered && random_.chance(20)) order_by_all(inner, true);
    const std::string name = exprs_.alias("q");
    for (size_t i = 0; i < inner.kinds.size(); ++i) {
      scope.columns.push_back({name + ".c" + std::to_string(i), inner.kinds[i]});
    }
    return "(" + inner.sql + ") AS " + name;
  }
  if (!ctes_.empty() && roll < 35) {
    const std::string name = exprs_.alias("w");
    for (size_t i = 0; i < ctes_[0].kinds.size(); ++i) {
      scope.columns.push_back({name + ".c" + std::to_string(i), ctes_[0].kinds[i]});
    }
    return ctes_[0].name + " AS " + name;
  }
  return exprs_.base_table(scope, allow_empty);
}

std::string QueryGenerator::join_condition(const Scope& left, const Scope& right, bool equi_only) {
  auto equality = [&]() -> std::string {
    for (int attempt = 0; attempt < 10; ++attempt) {
      const auto& r = right.columns[static_cast<size_t>(random_.pick(static_cast<int>(right.columns.size())))];
      if (r.kind != Kind::Float && r.kind != Kind::Bool && left.has(r.kind)) {
        return exprs_.column(r.kind, left) + " = " + r.expr;
      }
    }
    return "";
  };
  std::string condition = equality();
  if (condition.empty()) return "true";
  if (random_.chance(30)) {
    const std::string second = equality();
    if (!second.empty()) condition += " AND " + second;
  }
  // PostgreSQL runs FULL JOIN only on hash- or merge-joinable conditions
  // (0A000 otherwise): full joins get equalities alone.
  if (equi_only) return condition;
  const int roll = random_.pick(100);
  if (roll < 10) {
    // Non-equi only: a nested-loop join.
    const auto& r = right.columns[static_cast<size_t>(random_.pick(static_cast<int>(right.columns.size())))];
    if (r.kind != Kind::Bool && left.has(r.kind)) return exprs_.column(r.kind, left) + " < " + r.expr;
  } else if (roll < 35) {
    Scope both = left;
    merge(both, right);
    condition += " AND " + exprs_.predicate(both, 0);
  }
  return condition;
}

std::string QueryGenerator::from_clause(Scope& scope, int depth) {
  std::string sql = from_item(scope, depth, true);
  const int roll = random_.pick(100);
  const int joins = roll < 40 ? 0 : (roll < 82 ? 1 : 2);
  for (int j = 0; j < joins; ++j) {
    Scope right;
    const std::string item = from_item(right, depth, true);
    const int type = random_.pick(100);
    if (type < 5 && joins == 1) {
      sql += " CROSS JOIN " + item;
    } else if (type < 40) {
      sql += " JOIN " + item + " ON " + join_condition(scope, right, false);
    } else if (type < 65) {
      sql += " LEFT JOIN " + item + " ON " + join_condition(scope, right, false);
    } else if (type < 82) {
      sql += " RIGHT JOIN " + item + " ON " + join_condition(scope, right, false);
    } else {
      sql += " FULL JOIN " + item + " ON " + join_condition(scope, right, true);
    }
    merge(scope, right);
  }
  return sql;
}

std::string QueryGenerator::plain_list(const Scope& scope, int depth, const std::vector<Kind>* required,
                                       Relation& out) {
  const size_t n = required ? required->size() : static_cast<size_t>(1 + random_.pick(4));
  std::string list;
  for (size_t i = 0; i < n; ++i) {
    const Kind kind = required ? (*required)[i] : exprs_.any_kind(scope);
    list += (i ? ", " : "") + item(exprs_.expr(kind, scope, depth > 0 ? 2 : 1), i);
    out.kinds.push_back(kind);
  }
  return list;
}

// The GROUP BY, HAVING and aggregates of an aggregate query; `list` gets the
// keys and aggregates, the return value the clauses after WHERE.
std::string QueryGenerator::aggregate_tail(const Scope& scope, bool top, Relation& out, std::string& list) {
  const int nkeys = random_.pick(3);
  std::vector<std::string> keys;
  for (int i = 0; i < nkeys; ++i) {
    const Kind kind = exprs_.any_kind(scope);
    keys.push_back(exprs_.expr(kind, scope, 1));
    // A constant key is a position (an integer) or an error (anything else).
    if (constant(keys.back(), scope)) keys.back() = exprs_.column(kind, scope);
    list += (i ? ", " : "") + item(keys.back(), out.kinds.size());
    out.kinds.push_back(kind);
  }
  const int naggs = 1 + random_.pick(3);
  for (int i = 0; i < naggs; ++i) {
    std::string agg;
    Kind kind = Kind::Int;
    const int roll = random_.pick(10);
    if (roll == 1) {
      agg = "count(" + exprs_.expr(exprs_.any_kind(scope), scope, 1) + ")";
    } else if (roll == 2) {
      agg = "count(DISTINCT " + exprs_.column(exprs_.any_kind(scope), scope) + ")";
    } else if (roll == 3 && scope.has(Kind::Int)) {
      agg = "sum(" + exprs_.expr(Kind::Int, scope, 1) + ")";
    } else if (roll == 4 && scope.has(Kind::Numeric)) {
      agg = "sum(" + exprs_.column(Kind::Numeric, scope) + ")";
      kind = Kind::Numeric;
    } else if (roll == 5 && (scope.has(Kind::Int) || scope.has(Kind::Numeric))) {
      const Kind in = scope.has(Kind::Numeric) && random_.chance(50) ? Kind::Numeric : Kind::Int;
      agg = "avg(" + exprs_.column(in, scope) + ")";
      // Inside a larger query avg's scale would meet other numerics' scale 2
      // (equal values printed differently): rounded there, raw at the top.
      if (!top) agg = "round(" + agg + ", 2)";
      kind = Kind::Numeric;
    } else if (roll == 6) {
      kind = exprs_.any_kind(scope, false);
      agg = std::string(random_.chance(50) ? "min(" : "max(") + exprs_.column(kind, scope) + ")";
    } else if (roll == 7) {
      agg = std::string(random_.chance(50) ? "bool_and(" : "bool_or(") + exprs_.predicate(scope, 0) + ")";
      kind = Kind::Bool;
    } else if (roll == 8 && scope.has(Kind::Float)) {
      agg = std::string(random_.chance(50) ? "sum(" : "avg(") + exprs_.column(Kind::Float, scope) + ")";
      kind = Kind::Float;
    } else if (roll == 9) {
      agg = "count(*) FILTER (WHERE " + exprs_.predicate(scope, 0) + ")";
    } else {
      agg = "count(*)";
    }
    list += (list.empty() ? "" : ", ") + item(agg, out.kinds.size());
    out.kinds.push_back(kind);
  }
  std::string tail;
  if (!keys.empty()) {
    std::string joined;
    for (size_t i = 0; i < keys.size(); ++i) joined += (i ? ", " : "") + keys[i];
    const int form = random_.pick(100);
    if (form < 60) {
      tail = " GROUP BY " + joined;
    } else if (form < 72) {
      tail = " GROUP BY ROLLUP (" + joined + ")";
    } else if (form < 82) {
      tail = " GROUP BY CUBE (" + joined + ")";
    } else {
      tail = " GROUP BY GROUPING SETS ((" + keys[0] + "), ()" + (keys.size() > 1 ? ", (" + joined + "))" : ")");
    }
  }
  if (random_.chance(25)) {
    tail += " HAVING count(*) > " + std::to_string(random_.pick(4));
    if (scope.has(Kind::Int) && random_.chance(40)) {
      tail += " AND max(" + exprs_.column(Kind::Int, scope) + ") > " + exprs_.literal(Kind::Int);
    }
  }
  return tail;
}

std::string QueryGenerator::window_call(const Scope& scope, bool top, Kind& kind) {
  std::string partition;
  if (random_.chance(55)) partition = "PARTITION BY " + exprs_.column(exprs_.any_kind(scope, false), scope);
  std::vector<std::string> keys;
  for (int i = random_.pick(3); i > 0; --i) {
    keys.push_back(exprs_.column(exprs_.any_kind(scope), scope) + (random_.chance(30) ? " DESC" : ""));
  }
  auto over = [&](const std::vector<std::string>& order, const std::string& frame) {
    std::string s = " OVER (" + partition;
    if (!order.empty()) {
      s += (partition.empty() ? "" : " ") + std::string("ORDER BY ");
      for (size_t i = 0; i < order.size(); ++i) s += (i ? ", " : "") + order[i];
    }
    if (!frame.empty()) s += " " + frame;
    return s + ")";
  };
  const int roll = random_.pick(100);
  if (!scope.ids.empty() && roll < 45) {
    // Functions that see row order: ordered by the unique ids last.
    auto total = keys;
    total.insert(total.end(), scope.ids.begin(), scope.ids.end());
    kind = exprs_.any_kind(scope);
    const std::string col = exprs_.column(kind, scope);
    static const char* frames[] = {"ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING",
                                   "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
                                   "ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING", "ROWS 2 PRECEDING"};
    switch (random_.pick(9)) {
      case 0: kind = Kind::Int; return "row_number()" + over(total, "");
      case 1: kind = Kind::Int; return "ntile(3)" + over(total, "");
      case 2: return "lag(" + col + ")" + over(total, "");
      case 3: return "lead(" + col + ", 2, " + exprs_.literal(kind) + ")" + over(total, "");
      case 4: return "first_value(" + col + ")" + over(total, "");
      case 5: return "last_value(" + col + ")" + over(total, random_.one_of(frames));
      case 6: return "nth_value(" + col + ", 2)" + over(total, random_.one_of(frames));
      case 7:
        kind = Kind::Int;
        return "count(*)" + over(total, random_.one_of(frames));
      default:
        if (!scope.has(Kind::Int)) break;
        kind = Kind::Int;
        return "sum(" + exprs_.column(Kind::Int, scope) + ")" + over(total, random_.one_of(frames));
    }
  }
  if (roll < 70) {
    if (keys.empty()) keys.push_back(exprs_.column(exprs_.any_kind(scope), scope));
    static const char* ranks[] = {"rank()", "dense_rank()", "percent_rank()", "cume_dist()"};
    const std::string fn = random_.one_of(ranks);
    kind = fn[0] == 'p' || fn[0] == 'c' ? Kind::Float : Kind::Int;
    return fn + over(keys, "");
  }
  // Aggregates over the partition, or over the peers up to the current row:
  // the same for every order of peers.
  std::string frame;
  if (keys.size() == 1 && keys[0].find(" DESC") == std::string::npos && random_.chance(30)) {
    for (const auto& c : scope.columns) {
      if (c.expr == keys[0] && c.kind == Kind::Int) frame = "RANGE BETWEEN 2 PRECEDING AND 1 FOLLOWING";
    }
  }
  switch (random_.pick(4)) {
    case 0: kind = Kind::Int; return "count(*)" + over(keys, frame);
    case 1:
      if (scope.has(Kind::Numeric)) {
        kind = Kind::Numeric;
        const std::string avg = "avg(" + exprs_.column(Kind::Numeric, scope) + ")" + over(keys, frame);
        return top ? avg : "round(" + avg + ", 2)";
      }
      [[fallthrough]];
    case 2:
      kind = exprs_.any_kind(scope, false);
      return std::string(random_.chance(50) ? "min(" : "max(") + exprs_.column(kind, scope) + ")" + over(keys, frame);
    default:
      kind = Kind::Int;
      return "sum(" + exprs_.column(Kind::Int, scope) + ")" + over(keys, frame);
  }
}

QueryGenerator::Relation QueryGenerator::select(int depth, bool top, const std::vector<Kind>* required) {
  Scope scope;
  const std::string from = from_clause(scope, depth);
  const std::string where = random_.chance(55) ? " WHERE " + exprs_.predicate(scope, depth >= 1 ? 2 : 1) : "";
  Relation out;
  const int shape = required ? 0 : random_.pick(100);
  if (shape < 35) {
    const bool distinct = random_.chance(20);
    out.sql = std::string("SELECT ") + (distinct ? "DISTINCT " : "") + plain_list(scope, depth, required, out) +
              " FROM " + from + where;
  } else if (shape < 65) {
    std::string list;
    const std::string tail = aggregate_tail(scope, top, out, list);
    out.sql = "SELECT " + list + " FROM " + from + where + tail;
  } else if (shape < 85) {
    std::string list = plain_list(scope, 0, nullptr, out);
    for (int i = random_.pick(2); i >= 0; --i) {
      Kind kind;
      const std::string call = window_call(scope, top, kind);
      list += ", " + item(call, out.kinds.size());
      out.kinds.push_back(kind);
    }
    out.sql = "SELECT " + list + " FROM " + from + where;
  } else {
    // DISTINCT ON keeps the first row of each group in the ORDER BY, which
    // covers every output column: the kept rows are determined.
    std::string list = plain_list(scope, 0, nullptr, out);
    if (constant(list.substr(0, list.find(" AS c0")), scope)) {
      list = item(exprs_.column(out.kinds[0], scope), 0) + list.substr(list.find(" AS c0") + 6);
    }
    const std::string first = list.substr(0, list.find(" AS c0"));
    std::string order;
    for (size_t i = 0; i < out.kinds.size(); ++i) {
      order += (i ? ", " : "") + std::to_string(i + 1) + (random_.chance(30) ? " DESC" : "");
    }
    out.sql = "SELECT DISTINCT ON (" + first + ") " + list + " FROM " + from + where + " ORDER BY " + order;
    out.ordered = true;
  }
  return out;
}

QueryGenerator::Relation QueryGenerator::set_operation(int depth, bool top) {
  static const char* ops[] = {"UNION", "UNION ALL", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"};
  (void)top;
  Relation left = select(depth - 1, false, nullptr);
  Relation right = select(depth - 1, false, &left.kinds);
  auto branch = [&](const Relation& r) { return r.ordered || random_.chance(25) ? "(" + r.sql + ")" : r.sql; };
  Relation out;
  out.kinds = left.kinds;
  out.sql = branch(left) + " " + random_.one_of(ops) + " " + branch(right);
  if (random_.chance(20)) {
    Relation third = select(depth - 1, false, &left.kinds);
    if (random_.chance(50)) out.sql = "(" + out.sql + ")";
    out.sql += std::string(" ") + random_.one_of(ops) + " " + branch(third);
  }
  return out;
}

}  // namespace tally::testing
