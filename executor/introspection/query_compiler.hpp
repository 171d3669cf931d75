#pragma once
// The parts of the catalog query evaluator (catalog_query.hpp) shared by its
// source files: the compiled forms (Expr, Query), name scopes, and the
// Compiler that turns a SELECT's parse tree into closures over rows.
//   query_values.cpp        value helpers (LIKE, text[] literals, comparisons)
//   compile_expression.cpp  columns, constants, operators, casts, CASE, ...
//   compile_function.cpp    the catalog functions clients call
//   compile_subquery.cpp    scalar, EXISTS, IN/ANY subqueries
//   compile_select.cpp      FROM/joins, WHERE, GROUP-free projection, ORDER BY,
//                           DISTINCT, set operations, LIMIT, row_number()
// Internal to executor/introspection.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/introspection/catalog_relations.hpp"

namespace tally::executor::introspection::detail {

using json = nlohmann::json;
using Row = std::vector<Value>;
using Parameters = std::vector<std::pair<SqlType, Value>>;

// 0A000 "catalog queries do not support <what>".
[[noreturn]] void unsupported(const std::string& what);

// Row context of one query level, chained to the enclosing levels for
// correlated subqueries.
struct Env {
  const Row* row = nullptr;
  const Env* outer = nullptr;
};

struct ScopeColumn {
  std::string relation;
  std::string name;
  SqlType type;
};

struct Scope {
  std::vector<ScopeColumn> columns;
  const Scope* outer = nullptr;
};

using EvalFn = std::function<Value(const Env&)>;

struct Expr {
  SqlType type;
  EvalFn eval;
  std::string name = "?column?";
};

struct Query {
  std::vector<Expr> targets;  // output names and types (eval unused at top level)
  std::function<std::vector<Row>(const Env*)> run;
};

// Value helpers shared by the compiler's parts (query_values.cpp).
// Integer-like types are held as int64; regclass/regtype too (an OID), and
// turned into names only when rendered.
bool int_kind(TypeId id);
bool text_kind(TypeId id);
std::string str_of(const json& node);
std::string last_name(const json& names);
const json& unwrap_select(const json& node);
bool truthy(const Value& v);
// LIKE pattern -> ECMAScript regex (anchored).
std::string like_to_regex(const std::string& pattern);
// text[] values are held in PostgreSQL's text form ("{a,\"b c\"}"): what the
// catalogs store and what a client receives.
std::vector<std::string> array_elements(const std::string& text);
std::string array_text(const std::vector<std::string>& elements);
// compare_values, plus int64 against double (float4 columns vs integer literals).
int compare_datums(const Value& a, const Value& b);
// The target type of a cast's TypeName (the types catalog queries cast to).
SqlType type_from_name(const json& type_name);

class Compiler {
 public:
  Compiler(const CatalogSource& source, const Parameters& parameters) : source_(source), parameters_(parameters) {}

  Query compile_select(const json& node, const Scope* outer);

 private:
  struct Source {
    std::vector<ScopeColumn> columns;
    std::function<std::vector<Row>(const Env*)> rows;
  };

  Source compile_from_item(const json& item, const Scope* outer);
  Source compile_from(const json& from, const Scope* outer);
  Expr compile(const json& node, const Scope& scope);
  Expr compile_node(const json& node, const Scope& scope);
  Expr column_ref(const json& ref, const Scope& scope);
  Expr constant(const json& c);
  Expr op_expr(const json& e, const Scope& scope);
  Expr compare(const std::string& op, Expr left, Expr right);
  Expr func_call(const json& f, const Scope& scope);
  Expr type_cast(const json& c, const Scope& scope);
  Expr sub_link(const json& s, const Scope& scope);
  Expr cast_to(Expr e, SqlType target);
  std::shared_ptr<const Relation> relation(const std::string& schema, const std::string& name);
  std::string regclass_name(int64_t oid) const;
  std::optional<int64_t> regclass_oid(const std::string& name) const;
  const std::regex& regex_for(const std::string& pattern, bool icase);

  const CatalogSource& source_;
  const Parameters& parameters_;
  std::map<std::string, std::shared_ptr<const Relation>> relations_;
  std::map<std::string, std::regex> regexes_;
};

}  // namespace tally::executor::introspection::detail
