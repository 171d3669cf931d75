#include "executor/ddl/view_deparse.hpp"

#include <cctype>
#include <set>

namespace tally::executor::ddl {
namespace {

using nlohmann::json;

// Thrown where the printer meets what it does not print as PostgreSQL does.
struct NotPrintable {};

// An identifier PostgreSQL prints without quotes (lower case, not starting
// with a digit); others would need quote_ident's rules, reserved words included.
const std::string& ident(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) throw NotPrintable{};
  for (const char ch : name)
    if (!(std::islower(static_cast<unsigned char>(ch)) || std::isdigit(static_cast<unsigned char>(ch)) || ch == '_'))
      throw NotPrintable{};
  return name;
}

class Printer {
 public:
  Printer(const json& select, const catalog::TableDef& table, bool pretty) : table_(table), pretty_(pretty) {
    const json& from = select.at("fromClause").at(0).at("RangeVar");
    qualifier_ = from.contains("alias") ? from["alias"].value("aliasname", table.name) : table.name;
  }

  const std::string& qualifier() const { return qualifier_; }

  // The table column a ColumnRef names (-1: not a plain column of the table).
  int column_of(const json& node) const {
    if (!node.contains("ColumnRef")) return -1;
    const json& fields = node["ColumnRef"].at("fields");
    if (fields.empty() || fields.size() > 2 || !fields.back().contains("String")) return -1;
    if (fields.size() == 2 && fields[0]["String"].value("sval", "") != qualifier_) return -1;
    return table_.find_column(fields.back()["String"].value("sval", ""));
  }

  std::string column(int c) const { return ident(qualifier_) + "." + ident(table_.columns[static_cast<size_t>(c)].name); }

  // An expression; `peer`: the column an operator compares it with (types a
  // string constant). Pretty output parenthesizes an operation only where its
  // parent binds tighter (`parent`: the parent's precedence; `right`: the
  // right operand of an arithmetic operator, where equal precedence needs
  // them too); plain output parenthesizes every operation.
  std::string expr(const json& node, int peer = -1, int parent = 0, bool right = false) const {
    if (node.contains("ColumnRef")) {
      const int c = column_of(node);
      if (c < 0) throw NotPrintable{};
      return column(c);
    }
    if (node.contains("A_Const")) return constant(node["A_Const"], peer);
    if (node.contains("A_Expr")) return operation(node["A_Expr"], parent, right);
    if (node.contains("BoolExpr")) return boolean(node["BoolExpr"], parent);
    if (node.contains("FuncCall")) return call(node["FuncCall"]);
    throw NotPrintable{};
  }

 private:
  std::string constant(const json& c, int peer) const {
    if (c.contains("ival")) {
      const int64_t v = c["ival"].value("ival", int64_t{0});
      if (peer >= 0 && !is_integer(peer)) throw NotPrintable{};  // PostgreSQL shows the implicit cast
      return v < 0 ? "'" + std::to_string(v) + "'::integer" : std::to_string(v);
    }
    if (c.contains("sval")) {
      const std::string text = c["sval"].value("sval", "");
      std::string quoted = "'";
      for (const char ch : text) quoted += ch == '\'' ? std::string("''") : std::string(1, ch);
      quoted += "'";
      if (peer < 0) return quoted + "::text";
      const TypeId id = table_.columns[static_cast<size_t>(peer)].type.id;
      if (id != TypeId::text && id != TypeId::date && id != TypeId::timestamp) throw NotPrintable{};
      return quoted + "::" + format_type(SqlType{id});
    }
    if (c.contains("boolval")) return c["boolval"].value("boolval", false) ? "true" : "false";
    throw NotPrintable{};
  }

  bool is_integer(int c) const {
    const TypeId id = table_.columns[static_cast<size_t>(c)].type.id;
    return id == TypeId::int2 || id == TypeId::int4 || id == TypeId::int8;
  }

  std::string wrap(std::string text, int precedence, int parent, bool right) const {
    const bool paren = !pretty_ || precedence < parent || (right && precedence == parent);
    return paren ? "(" + text + ")" : text;
  }

  std::string operation(const json& e, int parent, bool right_side) const {
    static const std::set<std::string> ops = {"=", "<>", "<", ">", "<=", ">=", "+", "-", "*", "/", "%"};
    const std::string op = e.value("kind", "") == "AEXPR_OP" && e.at("name").size() == 1
                               ? e["name"][0]["String"].value("sval", "")
                               : "";
    if (!ops.count(op) || !e.contains("lexpr") || !e.contains("rexpr")) throw NotPrintable{};
    const int left = column_of(e["lexpr"]), right = column_of(e["rexpr"]);
    // Integer arithmetic and comparison only: other types show implicit casts.
    for (const int c : {left, right})
      if (c >= 0 && !is_integer(c) && op != "=" && op != "<>" && op != "<" && op != ">" && op != "<=" && op != ">=")
        throw NotPrintable{};
    if (left >= 0 && right >= 0 &&
        table_.columns[static_cast<size_t>(left)].type.id != table_.columns[static_cast<size_t>(right)].type.id)
      throw NotPrintable{};
    const int precedence = op == "+" || op == "-" ? 5 : op == "*" || op == "/" || op == "%" ? 6 : 4;
    const bool arithmetic = precedence > 4;
    // PostgreSQL keeps parentheses around any operation inside a comparison.
    const int inner = arithmetic ? precedence : 7;
    return wrap(expr(e["lexpr"], right, inner) + " " + op + " " + expr(e["rexpr"], left, inner, arithmetic),
                precedence, parent, right_side);
  }

  std::string boolean(const json& b, int parent) const {
    const std::string op = b.value("boolop", "");
    const json& args = b.at("args");
    if (op == "NOT_EXPR") return wrap("NOT " + expr(args.at(0), -1, 3), 3, parent, false);
    const char* word = op == "AND_EXPR" ? " AND " : op == "OR_EXPR" ? " OR " : nullptr;
    if (!word) throw NotPrintable{};
    const int precedence = op == "AND_EXPR" ? 2 : 1;
    std::string out;
    for (size_t i = 0; i < args.size(); ++i) out += (i ? word : "") + expr(args[i], -1, precedence + 1);
    return wrap(out, precedence, parent, false);
  }

  std::string call(const json& f) const {
    if (f.contains("agg_filter") || f.contains("over") || f.contains("agg_order") || f.value("agg_distinct", false) ||
        f.at("funcname").size() != 1)
      throw NotPrintable{};
    const std::string name = f["funcname"][0]["String"].value("sval", "");
    if (f.value("agg_star", false)) return name + "(*)";
    if (name != "count" && name != "sum" && name != "min" && name != "max") throw NotPrintable{};
    std::string out = name + "(";
    const json args = f.value("args", json::array());
    for (size_t i = 0; i < args.size(); ++i) out += (i ? ", " : "") + expr(args[i]);
    return out + ")";
  }

  const catalog::TableDef& table_;
  bool pretty_;
  std::string qualifier_;
};

// A GROUP BY or ORDER BY item: a column of the table, as PostgreSQL prints it.
std::string sort_item(const Printer& p, const json& node) {
  const json* item = &node;
  std::string suffix;
  if (node.contains("SortBy")) {
    const json& s = node["SortBy"];
    const std::string dir = s.value("sortby_dir", "SORTBY_DEFAULT");
    if (s.value("sortby_nulls", "SORTBY_NULLS_DEFAULT") != "SORTBY_NULLS_DEFAULT" || s.contains("useOp"))
      throw NotPrintable{};
    if (dir == "SORTBY_DESC") suffix = " DESC";
    else if (dir != "SORTBY_DEFAULT" && dir != "SORTBY_ASC") throw NotPrintable{};
    item = &s.at("node");
  }
  const int c = p.column_of(*item);
  if (c < 0) throw NotPrintable{};
  return p.column(c) + suffix;
}

}  // namespace

std::optional<std::string> deparse_view(const json& select, const catalog::TableDef& table,
                                        const std::vector<catalog::ViewColumn>& columns, bool pretty, bool qualify) {
  static const std::set<std::string> known = {"targetList", "fromClause", "whereClause", "groupClause",
                                              "sortClause", "limitOption", "op"};
  for (const auto& [key, value] : select.items())
    if (!known.count(key)) return std::nullopt;
  if (select.value("op", "") != "SETOP_NONE" || select.value("limitOption", "") != "LIMIT_OPTION_DEFAULT" ||
      !select.contains("fromClause") || select["fromClause"].size() != 1 ||
      !select["fromClause"][0].contains("RangeVar"))
    return std::nullopt;
  try {
    const Printer p(select, table, pretty);
    std::vector<std::string> targets;
    for (const auto& t : select.at("targetList")) {
      const json& val = t.at("ResTarget").at("val");
      if (val.contains("ColumnRef") && val["ColumnRef"]["fields"].back().contains("A_Star")) {
        if (val["ColumnRef"]["fields"].size() != 1) return std::nullopt;
        for (size_t c = 0; c < table.columns.size(); ++c) targets.push_back(p.column(static_cast<int>(c)));
        continue;
      }
      const int c = p.column_of(val);
      targets.push_back(c >= 0 ? p.column(c) : p.expr(val));
    }
    if (targets.size() != columns.size()) return std::nullopt;
    std::string out = " SELECT ";
    for (size_t i = 0; i < targets.size(); ++i) {
      // A column keeps its name; anything else is named by AS, as PostgreSQL prints it.
      const std::string& name = columns[i].name;
      const bool same = targets[i] == p.qualifier() + "." + name;
      if (i) out += ",\n    ";
      out += targets[i];
      if (!same) out += " AS " + ident(name);
    }
    out += "\n   FROM " + (qualify ? ident(table.schema) + "." : std::string()) + ident(table.name);
    if (p.qualifier() != table.name) out += " " + p.qualifier();
    if (select.contains("whereClause")) out += "\n  WHERE " + p.expr(select["whereClause"]);
    for (const char* clause : {"groupClause", "sortClause"}) {
      if (!select.contains(clause)) continue;
      out += clause[0] == 'g' ? "\n  GROUP BY " : "\n  ORDER BY ";
      bool first = true;
      for (const auto& item : select[clause]) {
        out += (first ? "" : ", ") + sort_item(p, item);
        first = false;
      }
    }
    return out + ";";
  } catch (const NotPrintable&) {
    return std::nullopt;
  }
}

}  // namespace tally::executor::ddl
