// Compiles a catalog SELECT: FROM (catalog relations, joins, subqueries in
// FROM, unnest), WHERE, the target list, ORDER BY, DISTINCT, row_number(),
// UNION/INTERSECT/EXCEPT, LIMIT/OFFSET.
#include <algorithm>
#include <set>

#include "common/error.hpp"
#include "executor/introspection/query_compiler.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor::introspection::detail {

std::shared_ptr<const Relation> Compiler::relation(const std::string& schema, const std::string& name) {
  const std::string key = schema + "." + name;
  auto it = relations_.find(key);
  if (it != relations_.end()) return it->second;
  auto built = build_relation(schema, name, source_);
  const bool user_table = std::any_of(source_.tables.begin(), source_.tables.end(),
                                      [&](const UserTable& t) { return t.name == name; });
  if (!built && user_table && (schema.empty() || schema == "public")) {
    unsupported("reading user table \"" + name + "\" together with catalog relations");
  }
  if (!built) {
    throw Error(SqlState::undefined_table,
                "relation \"" + (schema.empty() ? name : schema + "." + name) + "\" does not exist");
  }
  auto shared = std::make_shared<const Relation>(std::move(*built));
  relations_[key] = shared;
  return shared;
}


namespace {

struct SortKey {
  int output = -1;           // index into the output row, or
  std::optional<Expr> expr;  // an expression over the input row
  bool descending = false;
  bool nulls_first = false;
};

void sort_rows(std::vector<std::pair<Row, Row>>& rows, const std::vector<SortKey>& keys, const Env* outer) {
  if (keys.empty()) return;
  // Keys computed once per row: (input row, output row) -> key values.
  std::vector<std::pair<std::vector<Value>, size_t>> keyed;
  keyed.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    std::vector<Value> k;
    Env env{&rows[i].first, outer};
    for (const auto& key : keys) k.push_back(key.output >= 0 ? rows[i].second[static_cast<size_t>(key.output)] : key.expr->eval(env));
    keyed.emplace_back(std::move(k), i);
  }
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    for (size_t k = 0; k < keys.size(); ++k) {
      const Value& x = a.first[k];
      const Value& y = b.first[k];
      const bool xn = is_null(x), yn = is_null(y);
      if (xn && yn) continue;
      if (xn != yn) return xn == keys[k].nulls_first;
      const int c = compare_datums(x, y);
      if (c != 0) return keys[k].descending ? c > 0 : c < 0;
    }
    return false;
  });
  std::vector<std::pair<Row, Row>> sorted;
  sorted.reserve(rows.size());
  for (auto& [k, i] : keyed) sorted.push_back(std::move(rows[i]));
  rows = std::move(sorted);
}

// row_number(): appends each row's 1-based position within its partition,
// rows ordered by the window's ORDER BY (ties keep their input order).
void number_rows(std::vector<Row>& rows, const std::vector<Expr>& partition, const std::vector<SortKey>& order,
                 const Env* outer) {
  std::vector<SortKey> keys;
  for (const auto& p : partition) keys.push_back(SortKey{-1, p, false, false});
  for (const auto& o : order) keys.push_back(o);
  std::vector<std::pair<Row, Row>> pairs;
  for (size_t i = 0; i < rows.size(); ++i) pairs.emplace_back(rows[i], Row{Value{static_cast<int64_t>(i)}});
  sort_rows(pairs, keys, outer);
  std::vector<int64_t> numbers(rows.size());
  std::vector<Value> previous;
  int64_t n = 0;
  for (const auto& [row, index] : pairs) {
    std::vector<Value> part;
    Env env{&row, outer};
    for (const auto& p : partition) part.push_back(p.eval(env));
    const bool same = n > 0 && std::equal(part.begin(), part.end(), previous.begin(), previous.end(),
                                          [](const Value& a, const Value& b) {
                                            return is_null(a) == is_null(b) && (is_null(a) || compare_datums(a, b) == 0);
                                          });
    n = same ? n + 1 : 1;
    previous = std::move(part);
    numbers[static_cast<size_t>(std::get<int64_t>(index[0]))] = n;
  }
  for (size_t i = 0; i < rows.size(); ++i) rows[i].push_back(Value{numbers[i]});
}

void distinct_rows(std::vector<Row>& rows) {
  std::vector<Row> out;
  for (auto& r : rows) {
    const bool seen = std::any_of(out.begin(), out.end(), [&](const Row& o) {
      for (size_t i = 0; i < r.size(); ++i) {
        if (is_null(r[i]) != is_null(o[i])) return false;
        if (!is_null(r[i]) && compare_datums(r[i], o[i]) != 0) return false;
      }
      return true;
    });
    if (!seen) out.push_back(std::move(r));
  }
  rows = std::move(out);
}

}  // namespace

Compiler::Source Compiler::compile_from_item(const json& item, const Scope* outer) {
  if (item.contains("RangeVar")) {
    const auto& rv = item["RangeVar"];
    const std::string schema = rv.value("schemaname", "");
    const std::string name = rv.value("relname", "");
    auto rel = relation(schema, name);
    std::string alias = name;
    if (rv.contains("alias")) alias = rv["alias"].value("aliasname", name);
    Source s;
    for (const auto& c : rel->columns) s.columns.push_back({alias, c.name, c.type});
    s.rows = [rel](const Env*) { return rel->rows; };
    return s;
  }
  if (item.contains("RangeSubselect")) {
    const auto& rs = item["RangeSubselect"];
    if (rs.value("lateral", false)) unsupported("LATERAL");
    auto query = std::make_shared<Query>(compile_select(rs["subquery"], outer));
    const std::string alias = rs.contains("alias") ? rs["alias"].value("aliasname", "") : "";
    Source s;
    for (const auto& t : query->targets) s.columns.push_back({alias, t.name, t.type});
    s.rows = [query](const Env* env) { return query->run(env); };
    return s;
  }
  if (item.contains("RangeFunction")) {
    // unnest(text[]) of a value of the enclosing query (psql's \d+ reads toast options so).
    const auto& rf = item["RangeFunction"];
    if (rf.value("lateral", false) || rf.value("ordinality", false) || rf.value("is_rowsfrom", false) ||
        rf["functions"].size() != 1 || !outer) {
      unsupported("this function in FROM");
    }
    const json& call = rf["functions"][0]["List"]["items"][0];
    if (!call.contains("FuncCall") || last_name(call["FuncCall"]["funcname"]) != "unnest" ||
        call["FuncCall"].value("args", json::array()).size() != 1) {
      unsupported("functions in FROM other than unnest(array)");
    }
    Expr arg = compile_node(call["FuncCall"]["args"][0], *outer);
    if (arg.type.id != TypeId::text_array) unsupported("unnest of " + format_type(arg.type));
    const std::string alias = rf.contains("alias") ? rf["alias"].value("aliasname", "unnest") : "unnest";
    Source s;
    s.columns.push_back({alias, alias, SqlType{TypeId::text}});
    s.rows = [arg](const Env* env) {
      std::vector<Row> rows;
      Value v = arg.eval(*env);
      if (is_null(v)) return rows;
      for (auto& e : array_elements(std::get<std::string>(v))) rows.push_back(Row{Value{std::move(e)}});
      return rows;
    };
    return s;
  }
  if (item.contains("JoinExpr")) {
    const auto& j = item["JoinExpr"];
    if (j.contains("usingClause") || j.value("isNatural", false)) unsupported("JOIN USING/NATURAL");
    const std::string type = j.value("jointype", "JOIN_INNER");
    if (type != "JOIN_INNER" && type != "JOIN_LEFT") unsupported("join type " + type);
    Source left = compile_from_item(j["larg"], outer);
    Source right = compile_from_item(j["rarg"], outer);
    Source s;
    s.columns = left.columns;
    s.columns.insert(s.columns.end(), right.columns.begin(), right.columns.end());
    std::optional<Expr> quals;
    if (j.contains("quals")) {
      Scope scope{s.columns, outer};
      quals = compile(j["quals"], scope);
    }
    const bool left_join = type == "JOIN_LEFT";
    const size_t right_width = right.columns.size();
    s.rows = [left, right, quals, left_join, right_width](const Env* env) {
      std::vector<Row> out;
      const auto lrows = left.rows(env);
      const auto rrows = right.rows(env);
      for (const auto& l : lrows) {
        bool matched = false;
        for (const auto& r : rrows) {
          Row combined = l;
          combined.insert(combined.end(), r.begin(), r.end());
          Env e{&combined, env};
          if (!quals || truthy(quals->eval(e))) {
            matched = true;
            out.push_back(std::move(combined));
          }
        }
        if (!matched && left_join) {
          Row combined = l;
          combined.resize(combined.size() + right_width, Value{Null{}});
          out.push_back(std::move(combined));
        }
      }
      return out;
    };
    return s;
  }
  unsupported("FROM item " + item.begin().key());
}

Compiler::Source Compiler::compile_from(const json& from, const Scope* outer) {
  Source s;
  s.rows = [](const Env*) { return std::vector<Row>{Row{}}; };
  for (const auto& item : from) {
    Source next = compile_from_item(item, outer);
    Source prev = s;
    s.columns.insert(s.columns.end(), next.columns.begin(), next.columns.end());
    s.rows = [prev, next](const Env* env) {
      std::vector<Row> out;
      const auto a = prev.rows(env);
      const auto b = next.rows(env);
      for (const auto& x : a) {
        for (const auto& y : b) {
          Row r = x;
          r.insert(r.end(), y.begin(), y.end());
          out.push_back(std::move(r));
        }
      }
      return out;
    };
  }
  return s;
}


Query Compiler::compile_select(const json& node, const Scope* outer) {
  const json& s = unwrap_select(node);
  for (const char* clause : {"groupClause", "havingClause", "windowClause", "withClause", "valuesLists", "lockingClause"}) {
    if (s.contains(clause)) unsupported(std::string(clause));
  }
  const std::string op = s.value("op", "SETOP_NONE");
  // ORDER BY/LIMIT of the whole statement; output positions or names only for set operations.
  std::function<int64_t(const char*)> limit_value = [&](const char* clause) -> int64_t {
    if (!s.contains(clause)) return -1;
    Scope empty{{}, nullptr};
    Expr e = compile(s[clause], empty);
    Row none;
    Value v = e.eval(Env{&none, nullptr});
    if (is_null(v)) return -1;
    if (!std::holds_alternative<int64_t>(v)) unsupported("a non-integer LIMIT/OFFSET");
    return std::get<int64_t>(v);
  };
  const int64_t limit = limit_value("limitCount");
  const int64_t offset = limit_value("limitOffset");

  Query q;
  std::vector<SortKey> keys;
  auto output_key = [&](const json& target) -> int {
    if (target.contains("A_Const") && target["A_Const"].contains("ival")) {
      const int64_t n = target["A_Const"]["ival"].value("ival", int64_t{0});
      if (n < 1 || static_cast<size_t>(n) > q.targets.size()) {
        throw Error(SqlState::invalid_column_reference, "ORDER BY position " + std::to_string(n) + " is not in select list");
      }
      return static_cast<int>(n - 1);
    }
    if (target.contains("ColumnRef") && target["ColumnRef"]["fields"].size() == 1 &&
        target["ColumnRef"]["fields"][0].contains("String")) {
      const std::string name = str_of(target["ColumnRef"]["fields"][0]);
      for (size_t i = 0; i < q.targets.size(); ++i) {
        if (q.targets[i].name == name) return static_cast<int>(i);
      }
    }
    return -1;
  };
  auto read_sort = [&](const json& sort, SortKey& key) {
    const std::string dir = sort.value("sortby_dir", "SORTBY_DEFAULT");
    key.descending = dir == "SORTBY_DESC";
    const std::string nulls = sort.value("sortby_nulls", "SORTBY_NULLS_DEFAULT");
    key.nulls_first = nulls == "SORTBY_NULLS_DEFAULT" ? key.descending : nulls == "SORTBY_NULLS_FIRST";
    if (dir == "SORTBY_USING") unsupported("ORDER BY USING");
  };
  auto finish = [limit, offset](std::vector<Row>& rows) {
    if (offset > 0) rows.erase(rows.begin(), rows.begin() + std::min<int64_t>(offset, static_cast<int64_t>(rows.size())));
    if (limit >= 0 && static_cast<size_t>(limit) < rows.size()) rows.resize(static_cast<size_t>(limit));
  };

  if (op != "SETOP_NONE") {
    if (op != "SETOP_UNION") unsupported(op == "SETOP_INTERSECT" ? "INTERSECT" : "EXCEPT");
    auto left = std::make_shared<Query>(compile_select(s["larg"], outer));
    auto right = std::make_shared<Query>(compile_select(s["rarg"], outer));
    if (left->targets.size() != right->targets.size()) {
      throw Error(SqlState::syntax_error, "each UNION query must have the same number of columns");
    }
    q.targets = left->targets;
    for (size_t i = 0; i < q.targets.size(); ++i) {
      if (q.targets[i].type.id == TypeId::unknown) q.targets[i].type = right->targets[i].type;
      if (q.targets[i].type.id == TypeId::unknown) q.targets[i].type = SqlType{TypeId::text};
    }
    for (const auto& sort : s.value("sortClause", json::array())) {
      SortKey key;
      key.output = output_key(sort["SortBy"]["node"]);
      if (key.output < 0) unsupported("ORDER BY expressions on a UNION");
      read_sort(sort["SortBy"], key);
      keys.push_back(std::move(key));
    }
    const bool all = s.value("all", false);
    q.run = [left, right, all, keys, finish](const Env* env) {
      std::vector<Row> rows = left->run(env);
      for (auto& r : right->run(env)) rows.push_back(std::move(r));
      if (!all) distinct_rows(rows);
      std::vector<std::pair<Row, Row>> pairs;
      for (auto& r : rows) pairs.emplace_back(Row{}, std::move(r));
      sort_rows(pairs, keys, env);
      rows.clear();
      for (auto& p : pairs) rows.push_back(std::move(p.second));
      finish(rows);
      return rows;
    };
    return q;
  }

  Source from = compile_from(s.value("fromClause", json::array()), outer);
  auto scope = std::make_shared<Scope>(Scope{from.columns, outer});
  std::optional<Expr> where;
  if (s.contains("whereClause")) {
    where = compile(s["whereClause"], *scope);
    if (where->type.id != TypeId::boolean && where->type.id != TypeId::unknown) {
      throw Error(SqlState::datatype_mismatch, "argument of WHERE must be type boolean, not type " + format_type(where->type));
    }
  }
  // row_number() OVER (PARTITION BY ... ORDER BY ...) in the select list (pgjdbc's
  // getColumns): computed after WHERE into a hidden column appended to each row.
  struct Window {
    std::vector<Expr> partition;
    std::vector<SortKey> order;
    size_t column = 0;
  };
  auto windows = std::make_shared<std::vector<Window>>();
  std::map<size_t, size_t> window_columns;  // target position -> hidden column
  const json target_list = s.value("targetList", json::array());
  for (size_t position = 0; position < target_list.size(); ++position) {
    const json& val = target_list[position]["ResTarget"]["val"];
    if (!val.contains("FuncCall") || !val["FuncCall"].contains("over")) continue;
    const auto& f = val["FuncCall"];
    const auto& over = f["over"];  // a WindowDef, unwrapped
    if (last_name(f["funcname"]) != "row_number" || f.contains("args") || over.contains("name") ||
        over.contains("refname") || over.contains("startOffset")) {
      continue;  // compiled below as an unsupported window function
    }
    Window w;
    for (const auto& p : over.value("partitionClause", json::array())) w.partition.push_back(compile(p, *scope));
    for (const auto& o : over.value("orderClause", json::array())) {
      SortKey key;
      key.expr = compile(o["SortBy"]["node"], *scope);
      read_sort(o["SortBy"], key);
      w.order.push_back(std::move(key));
    }
    w.column = scope->columns.size();
    scope->columns.push_back({"", "", SqlType{TypeId::int8}});
    window_columns[position] = w.column;
    windows->push_back(std::move(w));
  }
  for (size_t position = 0; position < target_list.size(); ++position) {
    const auto& rt = target_list[position]["ResTarget"];
    const json& val = rt["val"];
    if (auto it = window_columns.find(position); it != window_columns.end()) {
      const size_t index = it->second;
      q.targets.push_back({SqlType{TypeId::int8}, [index](const Env& env) -> Value { return (*env.row)[index]; },
                           rt.value("name", "row_number")});
      continue;
    }
    if (val.contains("ColumnRef") && val["ColumnRef"]["fields"].back().contains("A_Star")) {
      const auto& fields = val["ColumnRef"]["fields"];
      const std::string rel = fields.size() >= 2 ? str_of(fields[fields.size() - 2]) : "";
      for (size_t i = 0; i < from.columns.size(); ++i) {
        if (!rel.empty() && from.columns[i].relation != rel) continue;
        const size_t index = i;
        q.targets.push_back({from.columns[i].type, [index](const Env& env) -> Value { return (*env.row)[index]; },
                             from.columns[i].name});
      }
      continue;
    }
    Expr e = compile(val, *scope);
    if (rt.contains("name")) e.name = rt.value("name", "");
    if (e.type.id == TypeId::unknown) e = cast_to(std::move(e), SqlType{TypeId::text});
    q.targets.push_back(std::move(e));
  }
  for (const auto& sort : s.value("sortClause", json::array())) {
    SortKey key;
    key.output = output_key(sort["SortBy"]["node"]);
    if (key.output < 0) key.expr = compile(sort["SortBy"]["node"], *scope);
    read_sort(sort["SortBy"], key);
    keys.push_back(std::move(key));
  }
  bool distinct = false;
  if (s.contains("distinctClause")) {
    for (const auto& d : s["distinctClause"]) {
      if (!d.empty()) unsupported("DISTINCT ON");
    }
    distinct = true;
  }
  auto targets = q.targets;
  q.run = [from, scope, where, targets, keys, distinct, finish, windows](const Env* env) {
    std::vector<Row> kept;
    for (auto& row : from.rows(env)) {
      Env e{&row, env};
      if (where && !truthy(where->eval(e))) continue;
      kept.push_back(std::move(row));
    }
    for (const auto& w : *windows) number_rows(kept, w.partition, w.order, env);
    std::vector<std::pair<Row, Row>> pairs;
    for (auto& row : kept) {
      Env e{&row, env};
      Row out;
      out.reserve(targets.size());
      for (const auto& t : targets) out.push_back(t.eval(e));
      pairs.emplace_back(std::move(row), std::move(out));
    }
    sort_rows(pairs, keys, env);
    std::vector<Row> rows;
    rows.reserve(pairs.size());
    for (auto& p : pairs) rows.push_back(std::move(p.second));
    if (distinct) distinct_rows(rows);
    finish(rows);
    return rows;
  };
  return q;
}

}  // namespace tally::executor::introspection::detail
