#include "executor/introspection/catalog_query.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <set>

#include "common/error.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor::introspection {
namespace {

using json = nlohmann::json;
using Row = std::vector<Value>;
using Parameters = std::vector<std::pair<SqlType, Value>>;

[[noreturn]] void unsupported(const std::string& what) {
  throw Error(SqlState::feature_not_supported, "catalog queries do not support " + what);
}

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

// Integer-like types are held as int64; regclass/regtype too (an OID), and
// turned into names only when rendered.
bool int_kind(TypeId id) {
  switch (id) {
    case TypeId::int2:
    case TypeId::int4:
    case TypeId::int8:
    case TypeId::oid:
    case TypeId::regclass:
    case TypeId::regtype:
      return true;
    default:
      return false;
  }
}
bool text_kind(TypeId id) {
  return id == TypeId::text || id == TypeId::name || id == TypeId::varchar || id == TypeId::bpchar ||
         id == TypeId::char_ || id == TypeId::unknown;
}

std::string str_of(const json& node) {
  if (node.contains("String")) return node["String"].value("sval", "");
  unsupported("this name form");
}

std::string last_name(const json& names) { return str_of(names.back()); }

const json& unwrap_select(const json& node) { return node.contains("SelectStmt") ? node["SelectStmt"] : node; }

bool truthy(const Value& v) { return std::holds_alternative<bool>(v) && std::get<bool>(v); }

std::string like_to_regex(const std::string& pattern) {
  std::string out = "^";
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      out += '\\';
      out += pattern[++i];
    } else if (c == '%') {
      out += ".*";
    } else if (c == '_') {
      out += '.';
    } else if (std::string_view(".^$|()[]{}*+?\\").find(c) != std::string_view::npos) {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return out + "$";
}

// text[] values are held in PostgreSQL's text form ("{a,\"b c\"}"): what the
// catalogs store and what a client receives.
std::vector<std::string> array_elements(const std::string& text) {
  std::vector<std::string> out;
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') {
    throw Error(SqlState::invalid_text_representation, "malformed array literal: \"" + text + "\"");
  }
  std::string current;
  bool quoted = false, any = false;
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\' && i + 2 < text.size()) current += text[++i];
      else if (c == '"') quoted = false;
      else current += c;
    } else if (c == '"') {
      quoted = any = true;
    } else if (c == ',') {
      out.push_back(current);
      current.clear();
      any = false;
    } else {
      current += c;
      any = true;
    }
  }
  if (any || !out.empty()) out.push_back(current);
  return out;
}

std::string array_text(const std::vector<std::string>& elements) {
  std::string out = "{";
  for (size_t i = 0; i < elements.size(); ++i) {
    const std::string& e = elements[i];
    const bool quote = e.empty() || e == "NULL" || e.find_first_of(",{}\" \\") != std::string::npos;
    if (i > 0) out += ',';
    if (!quote) {
      out += e;
      continue;
    }
    out += '"';
    for (char c : e) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

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

std::string Compiler::regclass_name(int64_t oid) const {
  for (const auto& t : source_.tables) {
    if (t.oid == oid) return t.name;
  }
  if (auto name = catalog_relation_name(oid)) return *name;
  return std::to_string(oid);
}

std::optional<int64_t> Compiler::regclass_oid(const std::string& text) const {
  std::string name = text;
  if (auto dot = name.rfind('.'); dot != std::string::npos) name = name.substr(dot + 1);
  if (name.size() >= 2 && name.front() == '"' && name.back() == '"') {
    name = name.substr(1, name.size() - 2);
  } else {
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  }
  for (const auto& t : source_.tables) {
    if (t.name == name) return t.oid;
  }
  if (auto oid = catalog_relation_oid(name)) return *oid;
  if (!name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return std::stoll(name);
  }
  return std::nullopt;
}

const std::regex& Compiler::regex_for(const std::string& pattern, bool icase) {
  const std::string key = (icase ? "i:" : "c:") + pattern;
  auto it = regexes_.find(key);
  if (it != regexes_.end()) return it->second;
  try {
    auto flags = std::regex::ECMAScript;
    if (icase) flags |= std::regex::icase;
    return regexes_.emplace(key, std::regex(pattern, flags)).first->second;
  } catch (const std::regex_error&) {
    throw Error(SqlState::invalid_regular_expression, "invalid regular expression: " + pattern);
  }
}

// Converts e to target: unknown literals and text are read with the target's
// input function (regclass: a table name), integers convert among themselves.
Expr Compiler::cast_to(Expr e, SqlType target) {
  const TypeId from = e.type.id;
  if (from == target.id) return e;
  Expr out{target, nullptr, e.name};
  auto inner = std::move(e.eval);
  if (target.id == TypeId::regclass && text_kind(from)) {
    out.eval = [this, inner](const Env& env) -> Value {
      Value v = inner(env);
      if (is_null(v)) return v;
      auto oid = regclass_oid(std::get<std::string>(v));
      if (!oid) throw Error(SqlState::undefined_table, "relation \"" + std::get<std::string>(v) + "\" does not exist");
      return *oid;
    };
  } else if (target.id == TypeId::regtype && text_kind(from)) {
    out.eval = [inner](const Env& env) -> Value {
      Value v = inner(env);
      if (is_null(v)) return v;
      auto oid = type_oid_by_name(std::get<std::string>(v));
      if (!oid) throw Error(SqlState::undefined_object, "type \"" + std::get<std::string>(v) + "\" does not exist");
      return static_cast<int64_t>(*oid);
    };
  } else if (int_kind(target.id) && int_kind(from)) {
    out.eval = inner;
  } else if (int_kind(target.id) && text_kind(from)) {
    const SqlType parse_type = target.id == TypeId::oid || target.id == TypeId::regclass || target.id == TypeId::regtype
                                   ? SqlType{TypeId::int8}
                                   : target;
    out.eval = [inner, parse_type](const Env& env) -> Value {
      Value v = inner(env);
      if (is_null(v)) return v;
      return parse_text(parse_type, std::get<std::string>(v));
    };
  } else if (text_kind(target.id) && (from == TypeId::regclass || from == TypeId::regtype)) {
    const bool is_class = from == TypeId::regclass;
    out.eval = [this, inner, is_class](const Env& env) -> Value {
      Value v = inner(env);
      if (is_null(v)) return v;
      const int64_t oid = std::get<int64_t>(v);
      if (is_class) return regclass_name(oid);
      auto name = type_name_of(static_cast<uint32_t>(oid));
      return name ? *name : std::to_string(oid);
    };
  } else if (text_kind(target.id)) {
    const SqlType from_type = e.type;
    const bool to_char = target.id == TypeId::char_;
    out.eval = [inner, from_type, to_char](const Env& env) -> Value {
      Value v = inner(env);
      if (is_null(v)) return v;
      std::string text = text_kind(from_type.id) ? std::get<std::string>(v) : value_to_text(from_type, v);
      if (to_char && text.size() > 1) text.resize(1);
      return text;
    };
  } else if (target.id == TypeId::boolean && text_kind(from)) {
    out.eval = [inner](const Env& env) -> Value {
      Value v = inner(env);
      if (is_null(v)) return v;
      return parse_text(SqlType{TypeId::boolean}, std::get<std::string>(v));
    };
  } else if (target.id == TypeId::float8 && (int_kind(from) || from == TypeId::float4)) {
    out.eval = [inner](const Env& env) -> Value {
      Value v = inner(env);
      if (std::holds_alternative<int64_t>(v)) return static_cast<double>(std::get<int64_t>(v));
      return v;
    };
  } else {
    unsupported("a cast from " + format_type(e.type) + " to " + format_type(target));
  }
  return out;
}

Expr Compiler::constant(const json& c) {
  if (c.value("isnull", false)) return {SqlType{TypeId::unknown}, [](const Env&) -> Value { return Null{}; }, "?column?"};
  if (c.contains("ival")) {
    const int64_t v = c["ival"].value("ival", int64_t{0});
    return {SqlType{TypeId::int4}, [v](const Env&) -> Value { return v; }, "?column?"};
  }
  if (c.contains("fval")) {
    const std::string text = c["fval"].value("fval", "0");
    if (text.find_first_of(".eE") == std::string::npos) {
      const int64_t v = std::stoll(text);
      return {SqlType{TypeId::int8}, [v](const Env&) -> Value { return v; }, "?column?"};
    }
    const double v = std::stod(text);
    return {SqlType{TypeId::float8}, [v](const Env&) -> Value { return v; }, "?column?"};
  }
  if (c.contains("sval")) {
    const std::string s = c["sval"].value("sval", "");
    return {SqlType{TypeId::unknown}, [s](const Env&) -> Value { return s; }, "?column?"};
  }
  if (c.contains("boolval")) {
    const bool b = c["boolval"].value("boolval", false);
    return {SqlType{TypeId::boolean}, [b](const Env&) -> Value { return b; }, "bool"};
  }
  unsupported("this constant");
}

Expr Compiler::column_ref(const json& ref, const Scope& scope) {
  const auto& fields = ref["fields"];
  std::vector<std::string> parts;
  for (const auto& f : fields) {
    if (f.contains("A_Star")) unsupported("\"*\" here");
    parts.push_back(str_of(f));
  }
  const std::string column = parts.back();
  const std::string relation = parts.size() >= 2 ? parts[parts.size() - 2] : "";
  int depth = 0;
  for (const Scope* s = &scope; s != nullptr; s = s->outer, ++depth) {
    int found = -1;
    for (size_t i = 0; i < s->columns.size(); ++i) {
      const auto& c = s->columns[i];
      if (c.name != column || (!relation.empty() && c.relation != relation)) continue;
      if (found >= 0) throw Error(SqlState::ambiguous_column, "column reference \"" + column + "\" is ambiguous");
      found = static_cast<int>(i);
    }
    if (found < 0) continue;
    const int d = depth;
    const size_t index = static_cast<size_t>(found);
    return {s->columns[index].type,
            [d, index](const Env& env) -> Value {
              const Env* e = &env;
              for (int k = 0; k < d; ++k) e = e->outer;
              return (*e->row)[index];
            },
            column};
  }
  const std::string full = relation.empty() ? column : relation + "." + column;
  throw Error(SqlState::undefined_column, "column " + full + " does not exist");
}

int compare_datums(const Value& a, const Value& b) {
  if (std::holds_alternative<int64_t>(a) && std::holds_alternative<double>(b)) {
    const double x = static_cast<double>(std::get<int64_t>(a));
    return x < std::get<double>(b) ? -1 : x > std::get<double>(b) ? 1 : 0;
  }
  if (std::holds_alternative<double>(a) && std::holds_alternative<int64_t>(b)) return -compare_datums(b, a);
  return compare_values(a, b);
}

Expr Compiler::compare(const std::string& op, Expr left, Expr right) {
  // An untyped literal takes the other side's type, as PostgreSQL resolves it.
  if (left.type.id == TypeId::unknown && right.type.id != TypeId::unknown) left = cast_to(std::move(left), right.type);
  if (right.type.id == TypeId::unknown && left.type.id != TypeId::unknown) right = cast_to(std::move(right), left.type);
  const bool lt = text_kind(left.type.id), rt = text_kind(right.type.id);
  if (lt != rt && left.type.id != right.type.id) {
    if (!(int_kind(left.type.id) || left.type.id == TypeId::float8 || left.type.id == TypeId::float4) ||
        !(int_kind(right.type.id) || right.type.id == TypeId::float8 || right.type.id == TypeId::float4)) {
      throw Error(SqlState::undefined_function, "operator does not exist: " + format_type(left.type) + " " + op + " " +
                                                    format_type(right.type));
    }
  }
  auto l = std::move(left.eval), r = std::move(right.eval);
  std::function<bool(int)> test;
  if (op == "=") test = [](int c) { return c == 0; };
  else if (op == "<>" || op == "!=") test = [](int c) { return c != 0; };
  else if (op == "<") test = [](int c) { return c < 0; };
  else if (op == ">") test = [](int c) { return c > 0; };
  else if (op == "<=") test = [](int c) { return c <= 0; };
  else if (op == ">=") test = [](int c) { return c >= 0; };
  else unsupported("operator " + op);
  return {SqlType{TypeId::boolean}, [l, r, test](const Env& env) -> Value {
            Value a = l(env);
            if (is_null(a)) return Null{};
            Value b = r(env);
            if (is_null(b)) return Null{};
            return test(compare_datums(a, b));
          }, "?column?"};
}

Expr Compiler::op_expr(const json& e, const Scope& scope) {
  const std::string kind = e.value("kind", "");
  const std::string op = e.contains("name") ? last_name(e["name"]) : "";
  if (kind == "AEXPR_IN") {
    Expr left = compile(e["lexpr"], scope);
    std::vector<Expr> tests;
    for (const auto& item : e["rexpr"]["List"]["items"]) {
      Expr right = compile(item, scope);
      Expr l2{left.type, left.eval, left.name};
      tests.push_back(compare("=", std::move(l2), std::move(right)));
    }
    const bool negate = op == "<>";
    return {SqlType{TypeId::boolean}, [tests, negate](const Env& env) -> Value {
              bool saw_null = false;
              for (const auto& t : tests) {
                Value v = t.eval(env);
                if (is_null(v)) saw_null = true;
                else if (std::get<bool>(v)) return !negate;
              }
              if (saw_null) return Null{};
              return negate;
            }, "?column?"};
  }
  if (kind == "AEXPR_NULLIF") {
    Expr l = compile(e["lexpr"], scope);
    Expr eq = compare("=", l, compile(e["rexpr"], scope));
    if (l.type.id == TypeId::unknown) l = cast_to(std::move(l), SqlType{TypeId::text});
    return {l.type, [l, eq](const Env& env) -> Value {
              Value v = l.eval(env);
              if (truthy(eq.eval(env))) return Null{};
              return v;
            }, "nullif"};
  }
  if (kind == "AEXPR_DISTINCT" || kind == "AEXPR_NOT_DISTINCT") {
    Expr eq = compare("=", compile(e["lexpr"], scope), compile(e["rexpr"], scope));
    Expr l = compile(e["lexpr"], scope), r = compile(e["rexpr"], scope);
    const bool distinct = kind == "AEXPR_DISTINCT";
    return {SqlType{TypeId::boolean}, [eq, l, r, distinct](const Env& env) -> Value {
              const bool ln = is_null(l.eval(env)), rn = is_null(r.eval(env));
              bool same = ln && rn;
              if (!ln && !rn) same = truthy(eq.eval(env));
              return distinct ? !same : same;
            }, "?column?"};
  }
  bool regex = false, icase = false, negate = false, like = false;
  if (kind == "AEXPR_LIKE" || kind == "AEXPR_ILIKE") {
    like = true;
    icase = kind == "AEXPR_ILIKE";
    negate = op.rfind("!", 0) == 0;
  } else if (kind == "AEXPR_OP") {
    if (op == "~" || op == "!~" || op == "~*" || op == "!~*") {
      regex = true;
      negate = op[0] == '!';
      icase = op.back() == '*';
    } else if (op == "~~" || op == "!~~" || op == "~~*" || op == "!~~*") {
      like = true;
      negate = op[0] == '!';
      icase = op.back() == '*';
    }
  } else {
    unsupported("expression kind " + kind);
  }
  if (regex || like) {
    Expr l = cast_to(compile(e["lexpr"], scope), SqlType{TypeId::text});
    Expr r = cast_to(compile(e["rexpr"], scope), SqlType{TypeId::text});
    return {SqlType{TypeId::boolean}, [this, l, r, like, icase, negate](const Env& env) -> Value {
              Value a = l.eval(env);
              if (is_null(a)) return Null{};
              Value b = r.eval(env);
              if (is_null(b)) return Null{};
              const std::string pattern = like ? like_to_regex(std::get<std::string>(b)) : std::get<std::string>(b);
              const bool match = std::regex_search(std::get<std::string>(a), regex_for(pattern, icase));
              return match != negate;
            }, "?column?"};
  }
  if (!e.contains("lexpr") && op == "-") {
    Expr r = compile(e["rexpr"], scope);
    if (!int_kind(r.type.id)) unsupported("unary minus on " + format_type(r.type));
    return {r.type, [r](const Env& env) -> Value {
              Value v = r.eval(env);
              if (is_null(v)) return v;
              return -std::get<int64_t>(v);
            }, "?column?"};
  }
  if (op == "||" && e.contains("lexpr") && e.contains("rexpr")) {
    Expr l = compile(e["lexpr"], scope), r = compile(e["rexpr"], scope);
    if (l.type.id == TypeId::text_array && r.type.id == TypeId::text_array) {
      // array_cat: a NULL side counts as an empty array.
      return {l.type, [l, r](const Env& env) -> Value {
                Value a = l.eval(env), b = r.eval(env);
                if (is_null(a)) return b;
                if (is_null(b)) return a;
                auto elements = array_elements(std::get<std::string>(a));
                for (auto& x : array_elements(std::get<std::string>(b))) elements.push_back(std::move(x));
                return array_text(elements);
              }, "?column?"};
    }
    if (l.type.id == TypeId::text_array || r.type.id == TypeId::text_array) unsupported("|| between an array and a scalar");
  }
  if (op == "||") {
    Expr l = cast_to(compile(e["lexpr"], scope), SqlType{TypeId::text});
    Expr r = cast_to(compile(e["rexpr"], scope), SqlType{TypeId::text});
    return {SqlType{TypeId::text}, [l, r](const Env& env) -> Value {
              Value a = l.eval(env), b = r.eval(env);
              if (is_null(a) || is_null(b)) return Null{};
              return std::get<std::string>(a) + std::get<std::string>(b);
            }, "?column?"};
  }
  if (op == "+" || op == "-" || op == "*") {
    Expr l = compile(e["lexpr"], scope), r = compile(e["rexpr"], scope);
    if (l.type.id == TypeId::unknown) l = cast_to(std::move(l), SqlType{TypeId::int4});
    if (r.type.id == TypeId::unknown) r = cast_to(std::move(r), SqlType{TypeId::int4});
    if (!int_kind(l.type.id) || !int_kind(r.type.id)) unsupported("arithmetic on non-integers");
    const SqlType type{l.type.id == TypeId::int8 || r.type.id == TypeId::int8 ? TypeId::int8 : TypeId::int4};
    const char o = op[0];
    return {type, [l, r, o](const Env& env) -> Value {
              Value a = l.eval(env), b = r.eval(env);
              if (is_null(a) || is_null(b)) return Null{};
              const int64_t x = std::get<int64_t>(a), y = std::get<int64_t>(b);
              return o == '+' ? x + y : o == '-' ? x - y : x * y;
            }, "?column?"};
  }
  return compare(op, compile(e["lexpr"], scope), compile(e["rexpr"], scope));
}

SqlType type_from_name(const json& type_name) {
  if (type_name.contains("arrayBounds")) unsupported("array types");
  std::string name = last_name(type_name["names"]);
  static const std::map<std::string, TypeId> kNames{
      {"regclass", TypeId::regclass}, {"regtype", TypeId::regtype}, {"oid", TypeId::oid},
      {"text", TypeId::text},         {"name", TypeId::name},       {"int2", TypeId::int2},
      {"int4", TypeId::int4},         {"int8", TypeId::int8},       {"bool", TypeId::boolean},
      {"varchar", TypeId::varchar},   {"char", TypeId::char_},      {"bpchar", TypeId::bpchar},
      {"float8", TypeId::float8},     {"float4", TypeId::float4},   {"integer", TypeId::int4},
      {"smallint", TypeId::int2},     {"bigint", TypeId::int8},     {"boolean", TypeId::boolean}};
  auto it = kNames.find(name);
  if (it == kNames.end()) unsupported("a cast to " + name);
  return SqlType{it->second};
}

Expr Compiler::type_cast(const json& c, const Scope& scope) {
  Expr arg = compile(c["arg"], scope);
  const SqlType target = type_from_name(c["typeName"]);
  std::string name = arg.name;
  if (c["arg"].contains("A_Const")) name = last_name(c["typeName"]["names"]);
  Expr out = cast_to(std::move(arg), target);
  out.name = name;
  return out;
}

Expr Compiler::func_call(const json& f, const Scope& scope) {
  const std::string name = last_name(f["funcname"]);
  if (f.contains("over")) unsupported("window functions");
  if (f.value("agg_star", false) || f.value("agg_distinct", false)) unsupported("aggregate " + name);
  std::vector<Expr> args;
  for (const auto& a : f.value("args", json::array())) args.push_back(compile(a, scope));
  auto arity = [&](size_t lo, size_t hi) {
    if (args.size() < lo || args.size() > hi) {
      throw Error(SqlState::undefined_function, "function " + name + " with " + std::to_string(args.size()) +
                                                    " arguments does not exist");
    }
  };
  auto constant_fn = [&](SqlType type, Value v) {
    return Expr{type, [v](const Env&) -> Value { return v; }, name};
  };
  if (name == "format_type") {
    arity(2, 2);
    Expr t = cast_to(args[0], SqlType{TypeId::oid}), m = cast_to(args[1], SqlType{TypeId::int4});
    return {SqlType{TypeId::text}, [t, m](const Env& env) -> Value {
              Value type = t.eval(env);
              if (is_null(type)) return Null{};
              Value mod = m.eval(env);
              const int32_t typmod = is_null(mod) ? -1 : static_cast<int32_t>(std::get<int64_t>(mod));
              const auto oid = static_cast<uint32_t>(std::get<int64_t>(type));
              if (auto id = type_from_oid(oid)) return format_type(SqlType{*id, typmod});
              if (auto n = type_name_of(oid)) return *n;
              return std::string("???");
            }, name};
  }
  if (name == "pg_table_is_visible" || name == "pg_type_is_visible" || name == "pg_function_is_visible" ||
      name == "has_table_privilege" || name == "has_schema_privilege" || name == "has_database_privilege" ||
      name == "has_column_privilege") {
    Expr a = args.empty() ? constant_fn(SqlType{TypeId::boolean}, true) : args.back();
    Expr first = args.empty() ? a : args.front();
    return {SqlType{TypeId::boolean}, [first](const Env& env) -> Value {
              if (is_null(first.eval(env))) return Null{};
              return true;
            }, name};
  }
  if (name == "pg_get_userbyid") {
    arity(1, 1);
    Expr a = cast_to(args[0], SqlType{TypeId::oid});
    const std::string user = source_.user;
    return {SqlType{TypeId::name}, [a, user](const Env& env) -> Value {
              Value v = a.eval(env);
              if (is_null(v)) return Null{};
              const int64_t id = std::get<int64_t>(v);
              if (id == kBootstrapUserOid) return user;
              if (id == 6171) return std::string("pg_database_owner");
              return "unknown (OID=" + std::to_string(id) + ")";
            }, name};
  }
  if (name == "pg_encoding_to_char") {
    arity(1, 1);
    Expr a = args[0];
    return {SqlType{TypeId::name}, [a](const Env& env) -> Value {
              Value v = a.eval(env);
              if (is_null(v)) return Null{};
              return std::string(std::get<int64_t>(v) == 6 ? "UTF8" : "");
            }, name};
  }
  if (name == "pg_get_expr" || name == "obj_description" || name == "col_description" ||
      name == "shobj_description" || name == "pg_get_indexdef" || name == "pg_get_constraintdef" ||
      name == "pg_get_viewdef" || name == "pg_get_partkeydef" || name == "pg_get_triggerdef") {
    // Nothing Tally holds has a default, comment, index, constraint or view.
    return constant_fn(SqlType{TypeId::text}, Null{});
  }
  if (name == "array_to_string") {
    arity(2, 3);
    if (args[0].type.id != TypeId::text_array) unsupported("array_to_string of " + format_type(args[0].type));
    Expr a = args[0];
    Expr separator = cast_to(args[1], SqlType{TypeId::text});
    return {SqlType{TypeId::text}, [a, separator](const Env& env) -> Value {
              Value v = a.eval(env), sep = separator.eval(env);
              if (is_null(v) || is_null(sep)) return Null{};
              std::string out;
              const auto elements = array_elements(std::get<std::string>(v));
              for (size_t i = 0; i < elements.size(); ++i) {
                if (i > 0) out += std::get<std::string>(sep);
                out += elements[i];
              }
              return out;
            }, name};
  }
  if (name == "current_database") return constant_fn(SqlType{TypeId::name}, source_.database);
  if (name == "current_schema") return constant_fn(SqlType{TypeId::name}, std::string("public"));
  if (name == "lower" || name == "upper" || name == "quote_ident" || name == "length") {
    arity(1, 1);
    Expr a = cast_to(args[0], SqlType{TypeId::text});
    const bool lower = name == "lower", upper = name == "upper", len = name == "length";
    return {len ? SqlType{TypeId::int4} : SqlType{TypeId::text}, [a, lower, upper, len](const Env& env) -> Value {
              Value v = a.eval(env);
              if (is_null(v)) return v;
              std::string s = std::get<std::string>(v);
              if (len) return static_cast<int64_t>(s.size());
              if (lower) std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
              else if (upper) std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
              else {
                const bool plain = !s.empty() && (std::islower(static_cast<unsigned char>(s[0])) || s[0] == '_') &&
                                   std::all_of(s.begin(), s.end(), [](unsigned char c) {
                                     return std::islower(c) || std::isdigit(c) || c == '_';
                                   });
                if (!plain) {
                  std::string q = "\"";
                  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
                  s = q + "\"";
                }
              }
              return s;
            }, name};
  }
  unsupported("function " + name + "()");
}

Expr Compiler::sub_link(const json& s, const Scope& scope) {
  const std::string kind = s.value("subLinkType", "");
  auto query = std::make_shared<Query>(compile_select(s["subselect"], &scope));
  if (kind == "EXISTS_SUBLINK") {
    return {SqlType{TypeId::boolean}, [query](const Env& env) -> Value { return !query->run(&env).empty(); }, "exists"};
  }
  if (query->targets.size() != 1) throw Error(SqlState::syntax_error, "subquery must return only one column");
  if (kind == "EXPR_SUBLINK") {
    SqlType type = query->targets[0].type;
    if (type.id == TypeId::unknown) type = SqlType{TypeId::text};
    return {type, [query](const Env& env) -> Value {
              auto rows = query->run(&env);
              if (rows.size() > 1) {
                throw Error(SqlState::cardinality_violation, "more than one row returned by a subquery used as an expression");
              }
              return rows.empty() ? Value{Null{}} : rows[0][0];
            }, query->targets[0].name};
  }
  if (kind == "ARRAY_SUBLINK") {
    if (!text_kind(query->targets[0].type.id)) unsupported("ARRAY() of " + format_type(query->targets[0].type));
    return {SqlType{TypeId::text_array}, [query](const Env& env) -> Value {
              std::vector<std::string> elements;
              for (const auto& row : query->run(&env)) {
                if (is_null(row[0])) unsupported("NULL elements in ARRAY()");
                elements.push_back(std::get<std::string>(row[0]));
              }
              return array_text(elements);
            }, "array"};
  }
  if (kind == "ANY_SUBLINK") {
    Expr test = compile(s["testexpr"], scope);
    const std::string op = s.contains("operName") ? last_name(s["operName"]) : "=";
    // The comparison sees the subquery's value through a one-column scope.
    auto holder = std::make_shared<Value>();
    Expr right{query->targets[0].type, [holder](const Env&) -> Value { return *holder; }, "?column?"};
    Expr cmp = compare(op, test, right);
    return {SqlType{TypeId::boolean}, [query, holder, cmp](const Env& env) -> Value {
              bool saw_null = false;
              for (const auto& row : query->run(&env)) {
                *holder = row[0];
                Value v = cmp.eval(env);
                if (is_null(v)) saw_null = true;
                else if (std::get<bool>(v)) return true;
              }
              return saw_null ? Value{Null{}} : Value{false};
            }, "?column?"};
  }
  unsupported("subquery kind " + kind);
}

// An expression this evaluator cannot compile fails when it is evaluated, not
// before: psql's \d reads catalogs Tally keeps empty (policies, publications,
// extended statistics) with array constructs, and over no rows nothing is
// evaluated, so the (empty) answer is exactly PostgreSQL's. Over rows, the
// statement fails with 0A000; it never answers something else.
Expr Compiler::compile(const json& node, const Scope& scope) {
  try {
    return compile_node(node, scope);
  } catch (const Error& e) {
    if (e.state() != SqlState::feature_not_supported) throw;
    const std::string message = e.what();
    // Typed unknown, so that the contexts around it (AND, comparisons) accept it.
    return {SqlType{TypeId::unknown}, [message](const Env&) -> Value {
              throw Error(SqlState::feature_not_supported, message);
            }, "?column?"};
  }
}

Expr Compiler::compile_node(const json& node, const Scope& scope) {
  if (node.contains("ColumnRef")) return column_ref(node["ColumnRef"], scope);
  if (node.contains("A_Const")) return constant(node["A_Const"]);
  if (node.contains("A_Expr")) return op_expr(node["A_Expr"], scope);
  if (node.contains("TypeCast")) return type_cast(node["TypeCast"], scope);
  if (node.contains("FuncCall")) return func_call(node["FuncCall"], scope);
  if (node.contains("SubLink")) return sub_link(node["SubLink"], scope);
  if (node.contains("CollateClause")) return compile(node["CollateClause"]["arg"], scope);
  if (node.contains("ParamRef")) {
    const int number = node["ParamRef"].value("number", 0);
    if (number < 1 || static_cast<size_t>(number) > parameters_.size()) {
      throw Error(SqlState::undefined_parameter, "there is no parameter $" + std::to_string(number));
    }
    const auto& p = parameters_[static_cast<size_t>(number - 1)];
    const Value v = p.second;
    return {p.first, [v](const Env&) -> Value { return v; }, "?column?"};
  }
  if (node.contains("BoolExpr")) {
    const auto& b = node["BoolExpr"];
    const std::string op = b.value("boolop", "");
    std::vector<Expr> args;
    for (const auto& a : b["args"]) {
      Expr e = compile(a, scope);
      if (e.type.id == TypeId::unknown) e = cast_to(std::move(e), SqlType{TypeId::boolean});
      if (e.type.id != TypeId::boolean) {
        throw Error(SqlState::datatype_mismatch, "argument of " + std::string(op == "AND_EXPR" ? "AND" : op == "OR_EXPR" ? "OR" : "NOT") +
                                                     " must be type boolean, not type " + format_type(e.type));
      }
      args.push_back(std::move(e));
    }
    if (op == "NOT_EXPR") {
      Expr a = args.at(0);
      return {SqlType{TypeId::boolean}, [a](const Env& env) -> Value {
                Value v = a.eval(env);
                if (is_null(v)) return v;
                return !std::get<bool>(v);
              }, "?column?"};
    }
    const bool is_and = op == "AND_EXPR";
    return {SqlType{TypeId::boolean}, [args, is_and](const Env& env) -> Value {
              bool saw_null = false;
              for (const auto& a : args) {
                Value v = a.eval(env);
                if (is_null(v)) saw_null = true;
                else if (std::get<bool>(v) != is_and) return !is_and;
              }
              if (saw_null) return Null{};
              return is_and;
            }, "?column?"};
  }
  if (node.contains("NullTest")) {
    const auto& n = node["NullTest"];
    Expr a = compile(n["arg"], scope);
    const bool want_null = n.value("nulltesttype", "") == "IS_NULL";
    return {SqlType{TypeId::boolean}, [a, want_null](const Env& env) -> Value { return is_null(a.eval(env)) == want_null; },
            "?column?"};
  }
  if (node.contains("CaseExpr")) {
    const auto& c = node["CaseExpr"];
    std::optional<Expr> arg;
    if (c.contains("arg")) arg = compile(c["arg"], scope);
    std::vector<Expr> results;
    for (const auto& w : c["args"]) results.push_back(compile(w["CaseWhen"]["result"], scope));
    if (c.contains("defresult")) results.push_back(compile(c["defresult"], scope));
    SqlType type{TypeId::unknown};
    for (const auto& r : results) {
      if (r.type.id != TypeId::unknown) {
        type = r.type;
        break;
      }
    }
    if (type.id == TypeId::unknown) type = SqlType{TypeId::text};
    for (auto& r : results) r = cast_to(std::move(r), type);
    std::vector<Expr> conditions;
    for (const auto& w : c["args"]) {
      if (arg) {
        conditions.push_back(compare("=", *arg, compile(w["CaseWhen"]["expr"], scope)));
      } else {
        conditions.push_back(compile(w["CaseWhen"]["expr"], scope));
      }
    }
    const bool has_default = c.contains("defresult");
    return {type, [conditions, results, has_default](const Env& env) -> Value {
              for (size_t i = 0; i < conditions.size(); ++i) {
                if (truthy(conditions[i].eval(env))) return results[i].eval(env);
              }
              return has_default ? results.back().eval(env) : Value{Null{}};
            }, "case"};
  }
  if (node.contains("CoalesceExpr")) {
    std::vector<Expr> args;
    for (const auto& a : node["CoalesceExpr"]["args"]) args.push_back(compile(a, scope));
    SqlType type{TypeId::text};
    for (const auto& a : args) {
      if (a.type.id != TypeId::unknown) {
        type = a.type;
        break;
      }
    }
    for (auto& a : args) a = cast_to(std::move(a), type);
    return {type, [args](const Env& env) -> Value {
              for (const auto& a : args) {
                Value v = a.eval(env);
                if (!is_null(v)) return v;
              }
              return Null{};
            }, "coalesce"};
  }
  if (node.contains("SQLValueFunction")) {
    const std::string op = node["SQLValueFunction"].value("op", "");
    std::string value, name;
    if (op == "SVFOP_CURRENT_USER" || op == "SVFOP_USER" || op == "SVFOP_SESSION_USER" || op == "SVFOP_CURRENT_ROLE") {
      value = source_.user;
      name = op == "SVFOP_SESSION_USER" ? "session_user" : op == "SVFOP_CURRENT_ROLE" ? "current_role" : "current_user";
    } else if (op == "SVFOP_CURRENT_CATALOG") {
      value = source_.database;
      name = "current_catalog";
    } else if (op == "SVFOP_CURRENT_SCHEMA") {
      value = "public";
      name = "current_schema";
    } else {
      unsupported(op);
    }
    return {SqlType{TypeId::name}, [value](const Env&) -> Value { return value; }, name};
  }
  unsupported("expression " + node.begin().key());
}

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

bool reads_catalog_node(const json& node, const CatalogSource& source) {
  if (node.is_object()) {
    if (node.contains("RangeVar")) {
      const auto& rv = node["RangeVar"];
      const std::string schema = rv.value("schemaname", "");
      const std::string name = rv.value("relname", "");
      if (!is_catalog_relation(schema, name)) return false;
      if (!schema.empty()) return true;
      // An unqualified name that is also a user table reads the user table.
      return std::none_of(source.tables.begin(), source.tables.end(), [&](const UserTable& t) { return t.name == name; });
    }
    for (const auto& [key, value] : node.items()) {
      if (reads_catalog_node(value, source)) return true;
    }
  } else if (node.is_array()) {
    for (const auto& v : node) {
      if (reads_catalog_node(v, source)) return true;
    }
  }
  return false;
}

std::vector<protocol::FieldDescription> fields_of(const Query& q) {
  std::vector<protocol::FieldDescription> fields;
  for (const auto& t : q.targets) fields.push_back(describe_column(t.name, t.type));
  return fields;
}

}  // namespace

ResultSet run_checked(const json& select_stmt, const CatalogSource& source, const Parameters& parameters);

bool reads_catalog(const json& select_stmt, const CatalogSource& source) {
  return reads_catalog_node(select_stmt, source);
}

ResultSet run_catalog_query(const json& select_stmt, const CatalogSource& source, const Parameters& parameters) {
  try {
    return run_checked(select_stmt, source, parameters);
  } catch (const json::exception& e) {
    // A parse-tree shape this evaluator does not expect: a clean error.
    throw Error(SqlState::feature_not_supported, std::string("catalog queries do not support this statement form: ") + e.what());
  }
}

ResultSet run_checked(const json& select_stmt, const CatalogSource& source, const Parameters& parameters) {
  Compiler compiler(source, parameters);
  Query q = compiler.compile_select(select_stmt, nullptr);
  ResultSet result;
  result.fields = fields_of(q);
  for (const auto& t : q.targets) result.columns.emplace_back(t.type);
  const auto rows = q.run(nullptr);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      const TypeId id = q.targets[c].type.id;
      const Value& v = row[c];
      // regclass/regtype are OIDs while evaluating; their columns hold names.
      if (!is_null(v) && (id == TypeId::regclass || id == TypeId::regtype) && std::holds_alternative<int64_t>(v)) {
        const auto oid = std::get<int64_t>(v);
        std::string name;
        if (id == TypeId::regtype) {
          auto n = type_name_of(static_cast<uint32_t>(oid));
          name = n ? *n : std::to_string(oid);
        } else {
          name = std::to_string(oid);
          for (const auto& t : source.tables) {
            if (t.oid == oid) name = t.name;
          }
        }
        result.columns[c].push(Value{name});
      } else {
        result.columns[c].push(v);
      }
    }
  }
  result.rows = rows.size();
  return result;
}

std::vector<protocol::FieldDescription> catalog_query_fields(const json& select_stmt, const CatalogSource& source,
                                                             const std::vector<SqlType>& parameter_types) {
  Parameters parameters;
  for (const auto& t : parameter_types) parameters.emplace_back(t, Value{Null{}});
  Compiler compiler(source, parameters);
  try {
    return fields_of(compiler.compile_select(select_stmt, nullptr));
  } catch (const json::exception& e) {
    throw Error(SqlState::feature_not_supported, std::string("catalog queries do not support this statement form: ") + e.what());
  }
}

}  // namespace tally::executor::introspection
