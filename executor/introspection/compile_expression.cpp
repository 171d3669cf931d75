// Compiles expressions of catalog SELECTs: column references, constants and
// parameters, operators (comparison, AND/OR/NOT, ~, LIKE, ||, arithmetic),
// casts (oid, regclass, regtype, text), CASE, COALESCE, NULLIF, IS [NOT] NULL,
// ARRAY constructs, and the lazily failing compile() wrapper.
#include <algorithm>

#include "common/error.hpp"
#include "executor/introspection/query_compiler.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor::introspection::detail {

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


Expr Compiler::type_cast(const json& c, const Scope& scope) {
  Expr arg = compile(c["arg"], scope);
  const SqlType target = type_from_name(c["typeName"]);
  std::string name = arg.name;
  if (c["arg"].contains("A_Const")) name = last_name(c["typeName"]["names"]);
  Expr out = cast_to(std::move(arg), target);
  out.name = name;
  return out;
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

}  // namespace tally::executor::introspection::detail
