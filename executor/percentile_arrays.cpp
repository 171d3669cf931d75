#include "executor/percentile_arrays.hpp"

#include <cctype>
#include <string>
#include <vector>

#include "executor/plan_expressions.hpp"

namespace tally::executor {

using nlohmann::json;

namespace {

json as_float8(json value) {
  json names = json::array({json{{"String", {{"sval", "pg_catalog"}}}}, json{{"String", {{"sval", "float8"}}}}});
  return {{"TypeCast", {{"arg", std::move(value)}, {"typeName", {{"names", std::move(names)}, {"typemod", -1}}}}}};
}

// The fractions of an array literal's text ('{0.25, 0.5, NULL}'), each a
// constant; nullopt for anything else.
std::optional<std::vector<json>> literal_fractions(const std::string& text) {
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return std::nullopt;
  std::vector<json> out;
  std::string item;
  const auto flush = [&]() -> bool {
    size_t b = 0, e = item.size();
    while (b < e && std::isspace(static_cast<unsigned char>(item[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(item[e - 1]))) --e;
    const std::string t = item.substr(b, e - b);
    item.clear();
    if (t.empty()) return false;
    std::string upper;
    for (const char c : t) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper == "NULL") {
      out.push_back({{"A_Const", {{"isnull", true}}}});
      return true;
    }
    for (const char c : t)
      if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '+' && c != 'e' && c != 'E') return false;
    out.push_back({{"A_Const", {{"fval", {{"fval", t}}}}}});
    return true;
  };
  const std::string body = text.substr(1, text.size() - 2);
  if (body.find_first_not_of(" \t") == std::string::npos) return out;  // '{}': no fractions
  for (const char c : body) {
    if (c == ',') {
      if (!flush()) return std::nullopt;
    } else {
      item += c;
    }
  }
  if (!flush()) return std::nullopt;
  return out;
}

// The fractions of a percentile call's argument, where it is an array.
std::optional<std::vector<json>> fractions(const json& arg) {
  if (arg.contains("A_ArrayExpr")) {
    std::vector<json> out;
    for (const json& e : arg["A_ArrayExpr"].value("elements", json::array())) out.push_back(e);
    if (out.empty()) return std::nullopt;  // ARRAY[] has no type of its own
    return out;
  }
  if (!arg.contains("TypeCast")) return std::nullopt;
  const json& cast = arg["TypeCast"];
  if (!cast.at("typeName").contains("arrayBounds") || !cast.at("arg").contains("A_Const")) return std::nullopt;
  const json& c = cast["arg"]["A_Const"];
  if (!c.contains("sval")) return std::nullopt;
  return literal_fractions(c["sval"].value("sval", ""));
}

bool is_percentile(const json& call) {
  if (!call.value("agg_within_group", false)) return false;
  const json& name = call.value("funcname", json::array());
  if (name.empty() || !name.back().contains("String")) return false;
  const std::string n = name.back()["String"].value("sval", "");
  return (n == "percentile_cont" || n == "percentile_disc") && call.value("args", json::array()).size() == 1;
}

// Expands in place, walking with a stack of its own (the parser's trees
// nest thousands of levels deep: a CASE in a CASE ...); true where anything
// was. Subqueries are left alone: they are planned, and expanded, on their own.
bool expand(json& root) {
  bool changed = false;
  std::vector<json*> todo{&root};
  while (!todo.empty()) {
    json& node = *todo.back();
    todo.pop_back();
    if (node.is_array()) {
      for (json& n : node) todo.push_back(&n);
      continue;
    }
    if (!node.is_object()) continue;
    if (node.contains("FuncCall") && is_percentile(node["FuncCall"])) {
      if (const auto fs = fractions(node["FuncCall"]["args"][0]); fs && !fs->empty()) {
        const json& call = node["FuncCall"];
        json elements = json::array();
        for (const json& f : *fs) {
          json one = call;
          one["args"] = json::array({as_float8(f)});
          elements.push_back({{"FuncCall", std::move(one)}});
        }
        // No value to order (no row, or NULLs only): NULL, not an array of NULLs.
        json count = {{"funcname", json::array({json{{"String", {{"sval", "count"}}}}})},
                      {"args", json::array({call.at("agg_order").at(0).at("SortBy").at("node")})},
                      {"funcformat", "COERCE_EXPLICIT_CALL"}};
        if (call.contains("agg_filter")) count["agg_filter"] = call["agg_filter"];
        json some = {{"A_Expr", {{"kind", "AEXPR_OP"}, {"name", json::array({json{{"String", {{"sval", ">"}}}}})},
                                 {"lexpr", {{"FuncCall", std::move(count)}}}, {"rexpr", {{"A_Const", {{"ival", {{"ival", 0}}}}}}}}}};
        json array = {{"A_ArrayExpr", {{"elements", std::move(elements)}, {"location", -1}}}};
        node = {{"CaseExpr", {{"args", json::array({json{{"CaseWhen", {{"expr", std::move(some)}, {"result", std::move(array)}}}}})}}}};
        changed = true;
        continue;
      }
    }
    for (auto& [key, value] : node.items())
      if (key != "SelectStmt") todo.push_back(&value);
  }
  return changed;
}

// Whether a percentile_cont or percentile_disc call is anywhere in `root`
// (the same walk, reading only): most SELECTs have none, and are not copied.
bool mentions_percentile(const json& root) {
  return json_walk(root, [](const json& node) {
    if (node.contains("FuncCall") && is_percentile(node["FuncCall"])) return WalkStep::stop;
    return node.contains("SelectStmt") ? WalkStep::skip_children : WalkStep::descend;
  });
}

}  // namespace

std::optional<json> expand_percentile_arrays(const json& select) {
  bool any = false;
  for (const char* key : {"targetList", "havingClause", "sortClause"})
    any = any || (select.contains(key) && mentions_percentile(select[key]));
  if (!any) return std::nullopt;
  json out = select;
  bool changed = false;
  for (const char* key : {"targetList", "havingClause", "sortClause"}) {
    if (!out.contains(key)) continue;
    if (std::string(key) == "targetList") {
      for (json& t : out[key]) {
        json& rt = t["ResTarget"];
        const bool unnamed = !rt.contains("name") && rt.contains("val") && rt["val"].contains("FuncCall");
        const std::string name = unnamed ? rt["val"]["FuncCall"]["funcname"].back()["String"].value("sval", "") : "";
        if (expand(rt["val"])) {
          changed = true;
          if (unnamed && rt["val"].contains("CaseExpr")) rt["name"] = name;
        }
      }
      continue;
    }
    changed |= expand(out[key]);
  }
  if (!changed) return std::nullopt;
  return out;
}

}  // namespace tally::executor
