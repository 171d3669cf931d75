#include "executor/statement_shape.hpp"

#include <map>

#include "executor/plan_constants.hpp"
#include "executor/select_plan_detail.hpp"

namespace tally::executor {
namespace {

using nlohmann::json;

constexpr char kLiteralMark = '\x01';
constexpr int64_t kMaxIntegerLiteral = 2147483647;  // larger digits lex as FCONST (numeric/int8)

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool is_word(char c) { return is_word_start(c) || is_digit(c) || c == '$'; }

// The comparison operators whose literal operand may take another value.
bool is_comparison(const json& a_expr) {
  if (a_expr.value("kind", "") != "AEXPR_OP") return false;
  const auto& name = a_expr.value("name", json::array());
  if (name.size() != 1 || !name[0].contains("String")) return false;
  const std::string op = name[0]["String"].value("sval", "");
  return op == "<" || op == "<=" || op == ">" || op == ">=" || op == "=" || op == "<>" || op == "!=";
}

bool is_integer_const(const json& node) {
  return node.is_object() && node.contains("A_Const") && node["A_Const"].contains("ival");
}

// Locations (and values) of the integer A_Consts that are an operand of a
// comparison whose other operand is not a constant, anywhere in `node`.
void comparison_literals(const json& node, std::map<int, int64_t>& out) {
  if (node.is_array()) {
    for (const auto& child : node) comparison_literals(child, out);
    return;
  }
  if (!node.is_object()) return;
  if (auto e = node.find("A_Expr"); e != node.end() && is_comparison(*e)) {
    static const json kNone;
    const auto l = e->find("lexpr");
    const auto r = e->find("rexpr");
    const json& left = l == e->end() ? kNone : *l;
    const json& right = r == e->end() ? kNone : *r;
    for (const auto& [literal, other] : {std::pair{&left, &right}, std::pair{&right, &left}}) {
      if (is_integer_const(*literal) && !(other->is_object() && other->contains("A_Const"))) {
        const auto& k = (*literal)["A_Const"];
        out[k.value("location", -1)] = k["ival"].value("ival", int64_t{0});
      }
    }
  }
  for (const auto& [key, child] : node.items()) comparison_literals(child, out);
}

}  // namespace

std::optional<TextShape> shape_of(std::string_view sql) {
  TextShape shape;
  shape.key.reserve(sql.size());
  size_t i = 0;
  const size_t n = sql.size();
  while (i < n) {
    const char c = sql[i];
    if (c == '-' && i + 1 < n && sql[i + 1] == '-') {  // -- comment
      const size_t end = sql.find('\n', i);
      const size_t stop = end == std::string_view::npos ? n : end;
      shape.key.append(sql.substr(i, stop - i));
      i = stop;
    } else if (c == '/' && i + 1 < n && sql[i + 1] == '*') {  // /* comments nest */
      size_t j = i + 2;
      int depth = 1;
      while (j < n && depth > 0) {
        if (sql[j] == '/' && j + 1 < n && sql[j + 1] == '*') {
          ++depth;
          j += 2;
        } else if (sql[j] == '*' && j + 1 < n && sql[j + 1] == '/') {
          --depth;
          j += 2;
        } else {
          ++j;
        }
      }
      if (depth > 0) return std::nullopt;
      shape.key.append(sql.substr(i, j - i));
      i = j;
    } else if (c == '\'' || c == '"') {
      // A prefixed string (E'', B'', X'', U&'', N'') has its own lexing rules.
      if (c == '\'' && i > 0 && (is_word(sql[i - 1]) || sql[i - 1] == '&')) return std::nullopt;
      size_t j = i + 1;
      while (true) {
        if (j >= n) return std::nullopt;
        if (sql[j] == c) {
          if (j + 1 < n && sql[j + 1] == c) {
            j += 2;
            continue;
          }
          ++j;
          break;
        }
        ++j;
      }
      shape.key.append(sql.substr(i, j - i));
      i = j;
    } else if (c == '$') {
      // $n parameters stay as they are; $tag$ quoting is left to the parser.
      if (i + 1 >= n || !is_digit(sql[i + 1])) return std::nullopt;
      size_t j = i + 1;
      while (j < n && is_digit(sql[j])) ++j;
      if (j < n && is_word(sql[j])) return std::nullopt;
      shape.key.append(sql.substr(i, j - i));
      i = j;
    } else if (is_word_start(c)) {
      size_t j = i + 1;
      while (j < n && is_word(sql[j])) ++j;
      shape.key.append(sql.substr(i, j - i));
      i = j;
    } else if (is_digit(c) || (c == '.' && i + 1 < n && is_digit(sql[i + 1]))) {
      size_t j = i;
      while (j < n && is_digit(sql[j])) ++j;
      const bool integer = j > i && (j >= n || (sql[j] != '.' && sql[j] != 'e' && sql[j] != 'E' && !is_word(sql[j])));
      if (!integer) {
        // A numeric or exponent literal stays as written (its type follows its text).
        while (j < n && (is_digit(sql[j]) || sql[j] == '.')) ++j;
        if (j < n && (sql[j] == 'e' || sql[j] == 'E')) {
          ++j;
          if (j < n && (sql[j] == '+' || sql[j] == '-')) ++j;
          while (j < n && is_digit(sql[j])) ++j;
        }
        if (j < n && is_word(sql[j])) return std::nullopt;
        shape.key.append(sql.substr(i, j - i));
        i = j;
        continue;
      }
      int64_t value = 0;
      bool fits = j - i <= 10;
      for (size_t k = i; fits && k < j; ++k) value = value * 10 + (sql[k] - '0');
      fits = fits && value <= kMaxIntegerLiteral;
      if (!fits) {
        shape.key.append(sql.substr(i, j - i));
      } else {
        TextShape::Literal literal;
        literal.location = static_cast<int>(i);
        literal.value = value;
        size_t back = i;
        while (back > 0 && is_space(sql[back - 1])) --back;
        if (back > 0 && sql[back - 1] == '-') literal.minus = static_cast<int>(back - 1);
        shape.literals.push_back(literal);
        shape.key.push_back(kLiteralMark);
      }
      i = j;
    } else {
      shape.key.push_back(c);
      ++i;
    }
  }
  if (shape.literals.empty()) return std::nullopt;
  return shape;
}

std::vector<ShapeSlot> shape_slots(const TextShape& shape, const json& select_body, const SelectPlan& plan) {
  std::map<int, int64_t> candidates;  // A_Const location -> its value
  for (const char* clause : {"whereClause", "havingClause"}) {
    if (auto it = select_body.find(clause); it != select_body.end()) comparison_literals(*it, candidates);
  }
  if (candidates.empty()) return {};
  std::map<int, int> constants_at;  // literal_location -> ConstExprs of the plan there
  std::map<int, int64_t> value_at;
  for (const ConstExpr* k : plan_literals(plan)) {
    ++constants_at[k->literal_location];
    if (const auto* v = std::get_if<int64_t>(&k->value)) value_at[k->literal_location] = *v;
  }
  std::vector<ShapeSlot> slots(shape.literals.size());
  bool any = false;
  for (size_t i = 0; i < shape.literals.size(); ++i) {
    const auto& literal = shape.literals[i];
    for (const bool negated : {false, true}) {
      const int at = negated ? literal.minus : literal.location;
      if (at < 0) continue;
      auto candidate = candidates.find(at);
      const int64_t written = negated ? -literal.value : literal.value;
      if (candidate == candidates.end() || candidate->second != written) continue;
      if (constants_at[at] != 1 || !value_at.contains(at) || value_at[at] != written) continue;
      slots[i] = {at, negated};
      any = true;
    }
  }
  if (!any) return {};
  return slots;
}

}  // namespace tally::executor
