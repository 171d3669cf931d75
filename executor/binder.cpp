#include "executor/binder.hpp"
#include "executor/statement_words.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "executor/array_comparison.hpp"
#include "executor/array_text.hpp"
#include "executor/ddl/type_name.hpp"
#include "executor/record_value.hpp"
#include "executor/row_comparison.hpp"
#include "executor/row_locks.hpp"
#include "executor/scalar/array_functions.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar/interval_functions.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/scalar_functions.hpp"
#include "executor/settings.hpp"
#include "executor/types/type_io.hpp"
#include "executor/value_codec.hpp"
#include "executor/vector_cast.hpp"

namespace tally::executor {

using nlohmann::json;

namespace {

int location_of(const json& node) {
  if (node.is_object()) {
    for (auto& [key, body] : node.items()) {
      if (body.is_object() && body.contains("location")) return body["location"].get<int>();
    }
  }
  return -1;
}

Error at(Error error, const json& node) {
  const int loc = location_of(node);
  if (loc >= 0 && error.position() == 0) error.with_position(loc + 1);
  return error;
}

std::string string_of(const json& node) {
  if (node.contains("String")) return node["String"].value("sval", "");
  return "";
}

std::vector<std::string> name_list(const json& list) {
  std::vector<std::string> out;
  for (const auto& item : list) out.push_back(string_of(item));
  return out;
}

ExprPtr make_const(const json& konst) {
  if (konst.value("isnull", false)) return std::make_unique<ConstExpr>(SqlType{TypeId::unknown}, Null{});
  if (konst.contains("ival")) {
    const int64_t v = konst["ival"].value("ival", int64_t{0});
    return std::make_unique<ConstExpr>(SqlType{TypeId::int4}, v);
  }
  if (konst.contains("fval")) {
    const std::string text = konst["fval"].value("fval", "0");
    // Integer-looking literals are int4 when they fit (the grammar folds
    // "-2147483648" into one float token), else int8, then numeric: as
    // PostgreSQL's make_const types them.
    const bool integral = text.find_first_of(".eE") == std::string::npos;
    if (integral) {
      try {
        const int64_t v = std::stoll(text);
        const bool fits_int4 = v >= INT32_MIN && v <= INT32_MAX;
        return std::make_unique<ConstExpr>(SqlType{fits_int4 ? TypeId::int4 : TypeId::int8}, v);
      } catch (const std::exception&) {
      }
    }
    return std::make_unique<ConstExpr>(SqlType{TypeId::numeric}, Numeric::parse(text));
  }
  if (konst.contains("sval")) {
    return std::make_unique<ConstExpr>(SqlType{TypeId::unknown}, konst["sval"].value("sval", std::string()));
  }
  if (konst.contains("boolval")) {
    return std::make_unique<ConstExpr>(SqlType{TypeId::boolean}, konst["boolval"].value("boolval", false));
  }
  if (konst.contains("bsval")) {
    throw Error(SqlState::feature_not_supported, "bit string literals are not supported");
  }
  return std::make_unique<ConstExpr>(SqlType{TypeId::unknown}, Null{});
}

}  // namespace

std::string fold_identifier(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool equal_ignoring_locations(const json& a, const json& b) {
  if (a.is_object() && b.is_object()) {
    // Both objects' keys are sorted (nlohmann's std::map): walk them together,
    // stepping over "location" on either side.
    auto x = a.begin(), y = b.begin();
    for (;;) {
      while (x != a.end() && x.key() == "location") ++x;
      while (y != b.end() && y.key() == "location") ++y;
      if (x == a.end() || y == b.end()) return x == a.end() && y == b.end();
      if (x.key() != y.key() || !equal_ignoring_locations(x.value(), y.value())) return false;
      ++x;
      ++y;
    }
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!equal_ignoring_locations(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.is_structured() || b.is_structured()) return false;  // object vs array, or vs a scalar
  return a == b;
}

json strip_locations(const json& node) {
  if (node.is_object()) {
    json out = json::object();
    for (auto& [key, value] : node.items()) {
      if (key == "location") continue;
      out[key] = strip_locations(value);
    }
    return out;
  }
  if (node.is_array()) {
    json out = json::array();
    for (const auto& v : node) out.push_back(strip_locations(v));
    return out;
  }
  return node;
}

bool is_aggregate_name(const std::string& name) {
  static const char* names[] = {"count", "sum", "avg", "min", "max", "stddev", "stddev_samp", "stddev_pop",
                                "variance", "var_samp", "var_pop", "corr", "covar_pop", "covar_samp",
                                "regr_r2", "regr_slope", "regr_intercept", "regr_count", "regr_sxx",
                                "regr_syy", "regr_sxy", "regr_avgx", "regr_avgy", "bool_and", "bool_or",
                                "every", "percentile_cont", "percentile_disc", "mode", "array_agg", "string_agg",
                                // PostgreSQL 15's other aggregates: known as aggregates so that a
                                // query using one is told it is not supported (0A000), not that its
                                // argument "must appear in the GROUP BY clause" (42803).
                                "bit_and", "bit_or", "bit_xor", "json_agg",
                                "jsonb_agg", "json_object_agg", "jsonb_object_agg", "range_agg",
                                "range_intersect_agg", "xmlagg"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

bool is_window_function_name(const std::string& name) {
  static const char* names[] = {"row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile",
                                "lag", "lead", "first_value", "last_value", "nth_value"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

SqlType resolve_type_name(const json& type_name) {
  std::vector<std::string> names = name_list(type_name.value("names", json::array()));
  std::string name = names.empty() ? "" : names.back();
  if (type_name.contains("arrayBounds")) {
    // Arrays are held in their text form (array_text.hpp); text arrays are the kind catalog queries build.
    if (name == "text" || name == "varchar" || name == "name") return {TypeId::text_array};
    if (name == "oid") return {TypeId::oid_array};
    if (name == "int2") return {TypeId::int2_array};
    throw Error(SqlState::feature_not_supported, "arrays of type " + name + " are not supported");
  }
  std::vector<int> mods;
  for (const auto& m : type_name.value("typmods", json::array())) {
    if (m.contains("A_Const") && m["A_Const"].contains("ival")) {
      mods.push_back(static_cast<int>(m["A_Const"]["ival"].value("ival", int64_t{0})));
    } else {
      throw Error(SqlState::syntax_error, "type modifiers must be simple constants");
    }
  }
  if (name == "int2" || name == "smallint") return {TypeId::int2};
  if (name == "int4" || name == "int" || name == "integer") return {TypeId::int4};
  if (name == "int8" || name == "bigint") return {TypeId::int8};
  if (name == "float4" || name == "real") return {TypeId::float4};
  if (name == "float8" || name == "double precision") return {TypeId::float8};
  if (name == "float") {
    if (!mods.empty() && mods[0] <= 24) return {TypeId::float4};
    return {TypeId::float8};
  }
  if (name == "bool" || name == "boolean") return {TypeId::boolean};
  if (name == "numeric" || name == "decimal") {
    if (mods.empty()) return {TypeId::numeric};
    const int precision = mods[0], scale = mods.size() > 1 ? mods[1] : 0;
    if (precision < 1 || precision > 1000) {
      throw Error(SqlState::invalid_parameter_value,
                  "NUMERIC precision " + std::to_string(precision) + " must be between 1 and 1000");
    }
    if (scale < 0 || scale > precision) {
      throw Error(SqlState::invalid_parameter_value,
                  "NUMERIC scale " + std::to_string(scale) + " must be between 0 and precision " +
                      std::to_string(precision));
    }
    return SqlType::numeric(precision, scale);
  }
  if (name == "text") return {TypeId::text};
  if (name == "varchar") return mods.empty() ? SqlType{TypeId::varchar} : SqlType::varchar(mods[0]);
  // The parser names char(n) and character(n) bpchar; "char" (quoted, the
  // one-byte catalog type) reaches here under its own name.
  if (name == "char" && mods.empty()) return {TypeId::char_};
  if (name == "bpchar" || name == "char" || name == "character") {
    return SqlType::bpchar(mods.empty() ? 1 : mods[0]);
  }
  if (name == "date") return {TypeId::date};
  if (name == "timestamp") return {TypeId::timestamp};
  if (name == "timestamptz") return {TypeId::timestamptz};
  if (name == "time") return {TypeId::time, types::time_typmod(std::vector<int64_t>(mods.begin(), mods.end()))};
  if (name == "timetz") return {TypeId::timetz, types::time_typmod(std::vector<int64_t>(mods.begin(), mods.end()))};
  if (name == "bytea") return {TypeId::bytea};
  if (name == "interval") return scalar::interval_type(mods);
  if (name == "name") return {TypeId::name};
  if (name == "oid") return {TypeId::oid};
  if (name == "regclass") return {TypeId::regclass};
  if (name == "regtype") return {TypeId::regtype};
  if (name == "regnamespace") return {TypeId::regnamespace};
  if (name == "regproc") return {TypeId::regproc};
  if (name == "regoper") return {TypeId::regoper};
  if (name == "regprocedure") return {TypeId::regprocedure};
  if (name == "regoperator") return {TypeId::regoperator};
  if (name == "int2vector") return {TypeId::int2vector};
  if (name == "oidvector") return {TypeId::oidvector};
  if (name == "void") return {TypeId::void_};
  if (is_unsupported_postgres_type(name)) {
    throw Error(SqlState::feature_not_supported, "type \"" + name + "\" is not supported by Tally");
  }
  throw Error(SqlState::undefined_object, "type \"" + name + "\" does not exist");
}

ExprPtr coerce_to(ExprPtr expr, SqlType to, CastContext cast_context, BindContext& context, const char* what) {
  if (expr->type == to) return expr;
  if (expr->type.id == to.id && to.typmod < 0) return expr;
  if (auto* konst = dynamic_cast<ConstExpr*>(expr.get()); konst != nullptr && konst->type.id == TypeId::unknown) {
    Value v = is_null(konst->value) ? Value{Null{}}
                                    : cast_value(konst->value, {TypeId::text}, to, cast_context == CastContext::explicit_);
    return std::make_unique<ConstExpr>(to, std::move(v));
  }
  if (auto* param = dynamic_cast<ParamExpr*>(expr.get()); param != nullptr && param->type.id == TypeId::unknown) {
    if (context.parameter_types != nullptr) {
      auto& types = *context.parameter_types;
      if (types.size() <= static_cast<size_t>(param->index)) types.resize(static_cast<size_t>(param->index) + 1, 0);
      types[static_cast<size_t>(param->index)] = type_oid(to.id);
    }
    param->type = {to.id};
    if (to.typmod < 0) return expr;
  }
  const SqlType from = expr->type;
  if (!can_cast(from.id, to.id, cast_context)) {
    if (cast_context == CastContext::explicit_) {
      throw Error(SqlState::cannot_coerce, "cannot cast type " + format_type(from) + " to " + format_type(to));
    }
    Error e(SqlState::datatype_mismatch,
            std::string(what ? what : "expression") + " is of type " + format_type(from) + " but expression is of type " +
                format_type(to));
    throw Error(SqlState::datatype_mismatch, "cannot cast type " + format_type(from) + " to " + format_type(to));
  }
  const bool is_explicit = cast_context == CastContext::explicit_;
  if (auto* konst = dynamic_cast<ConstExpr*>(expr.get()); konst != nullptr) {
    // A cast of a constant is folded here, once, as PostgreSQL's planner
    // folds it (its errors included): not cast again for every row.
    Value v = is_null(konst->value) ? Value{Null{}} : cast_value(konst->value, from, to, is_explicit);
    return std::make_unique<ConstExpr>(to, std::move(v));
  }
  std::vector<ExprPtr> args;
  args.push_back(std::move(expr));
  auto cast = std::make_unique<FunctionExpr>(to, "cast", std::move(args),
                                             [from, to, is_explicit](std::span<const Value> a) {
                                               return cast_value(a[0], from, to, is_explicit);
                                             });
  cast->batch = vector_integer_cast(from, to);
  if (!cast->batch) cast->batch = vector_text_cast(from, to);
  return cast;
}

namespace {

// (r).name of a record (record_value.hpp): the field's text read back as its type.
ExprPtr bind_record_field(ExprPtr record, const std::string& name) {
  if (record->type.id != TypeId::record) {
    throw Error(SqlState::wrong_object_type, "column notation ." + name + " applied to type " +
                                                 format_type(record->type) + ", which is not a composite type");
  }
  const auto fields = record_fields(record->type);
  const auto it = std::find_if(fields.begin(), fields.end(), [&](const RecordField& f) { return f.name == name; });
  if (it == fields.end()) {
    throw Error(SqlState::undefined_column, "could not identify column \"" + name + "\" in record data type");
  }
  const size_t index = static_cast<size_t>(it - fields.begin());
  const SqlType type = it->type;
  std::vector<ExprPtr> args;
  args.push_back(std::move(record));
  // The field's position is in the name: two calls of one name and
  // arguments are one value (expression_equality.hpp).
  return std::make_unique<FunctionExpr>(type, "field " + std::to_string(index), std::move(args),
                                        [index, type](std::span<const Value> a) -> Value {
    const auto texts = record_field_texts(std::get<std::string>(a[0]));
    if (index >= texts.size() || !texts[index]) return Null{};
    return type.id == TypeId::text ? Value{*texts[index]} : parse_text(type, *texts[index]);
  });
}

ExprPtr bind_column_ref(const json& ref, BindContext& context) {
  const auto& fields = ref["fields"];
  if (fields.size() == 1 && fields[0].contains("A_Star")) {
    throw Error(SqlState::syntax_error, "\"*\" is not allowed here");
  }
  std::vector<std::string> parts;
  for (const auto& f : fields) {
    if (f.contains("A_Star")) throw Error(SqlState::feature_not_supported, "qualified \"*\" is not allowed here");
    parts.push_back(string_of(f));
  }
  std::string column = parts.back();
  if (context.relations != nullptr) {
    const int index = context.relations->resolve(parts, static_cast<bool>(context.outer_column));
    if (index >= 0) {
      for (const auto& c : context.relations->columns()) {
        if (c.index == index) return std::make_unique<ColumnExpr>(c.type, index, column);
      }
    }
    if (context.outer_column) {
      if (ExprPtr outer = context.outer_column(json{{"ColumnRef", ref}})) return outer;
      if (parts.size() >= 2 && !context.relations->has_relation(parts[parts.size() - 2])) {
        throw Error(SqlState::undefined_table, "missing FROM-clause entry for table \"" + parts[parts.size() - 2] + "\"");
      }
    }
    if (parts.size() >= 2) {
      if (column == "ctid") throw_row_identity_error();
      throw Error(SqlState::undefined_column, "column " + parts[parts.size() - 2] + "." + column + " does not exist");
    }
    if (column == "ctid") throw_row_identity_error();
    throw Error(SqlState::undefined_column, "column \"" + column + "\" does not exist");
  }
  if (parts.size() >= 2) {
    const std::string& relation = parts[parts.size() - 2];
    if (relation != context.table_name || (parts.size() == 3 && parts[0] != "public")) {
      // A subquery without FROM (SELECT 1 WHERE t.a = 1) reads its enclosing query's columns.
      if (context.outer_column) {
        if (ExprPtr outer = context.outer_column(json{{"ColumnRef", ref}})) return outer;
      }
      throw Error(SqlState::undefined_table, "missing FROM-clause entry for table \"" + relation + "\"");
    }
  }
  int found = -1;
  for (size_t i = 0; i < context.columns.size(); ++i) {
    if (context.columns[i].name == column) {
      if (found >= 0) {
        throw Error(SqlState::ambiguous_column, "column reference \"" + column + "\" is ambiguous");
      }
      found = static_cast<int>(i);
    }
  }
  if (found < 0) {
    if (context.outer_column) {
      if (ExprPtr outer = context.outer_column(json{{"ColumnRef", ref}})) return outer;
    }
    if (parts.size() >= 2) {
      if (column == "ctid") throw_row_identity_error();
      throw Error(SqlState::undefined_column, "column " + parts[parts.size() - 2] + "." + column + " does not exist");
    }
    if (column == "ctid") throw_row_identity_error();
    throw Error(SqlState::undefined_column, "column \"" + column + "\" does not exist");
  }
  return std::make_unique<ColumnExpr>(context.columns[static_cast<size_t>(found)].type, found, column);
}

ExprPtr bind_node(const json& node, BindContext& context);

bool is_row(const json& node) { return node.is_object() && node.contains("RowExpr"); }

size_t row_size(const json& row) {
  const json& r = row["RowExpr"];
  return r.contains("args") ? r["args"].size() : 0;
}

// A ROW constructor's elements, each bound afresh when asked for.
RowElement row_elements(const json& row, BindContext& context) {
  const json* args = &row["RowExpr"]["args"];
  return [args, &context](size_t i) { return bind_node((*args)[i], context); };
}

// (a, b) [NOT] IN ((c, d), ...): each item a row comparison, joined as
// PostgreSQL joins them (IN: any equal; NOT IN: every one unequal).
ExprPtr bind_row_in(const json& e, bool negated, BindContext& context) {
  const json& row = e["lexpr"];
  std::vector<ExprPtr> each;
  for (const auto& item : e["rexpr"]["List"]["items"]) {
    if (!is_row(item)) {
      throw scalar::no_operator(negated ? "<>" : "=", SqlType{TypeId::record}, bind_node(item, context)->type);
    }
    each.push_back(make_row_comparison(negated ? "<>" : "=", row_elements(row, context), row_size(row),
                                       row_elements(item, context), row_size(item), context));
  }
  if (each.size() == 1) return std::move(each.front());
  return std::make_unique<BoolExpr>(negated ? BoolOp::and_ : BoolOp::or_, std::move(each));
}

// x op ANY (ARRAY[a, b, ...]) for a pattern operator (LIKE, ILIKE, the
// regular expressions, their negations) as x op a OR x op b ... (ALL: AND),
// whose three-valued logic is ANY's and ALL's: true where one element
// matches, else NULL where one is NULL. x is evaluated once per element, so
// only an x without a volatile function or a subquery; nullptr otherwise.
ExprPtr pattern_over_array_elements(const json& e, const std::string& op, bool all, BindContext& context) {
  static const char* const kPatternOps[] = {"~~", "!~~", "~~*", "!~~*", "~", "!~", "~*", "!~*"};
  if (std::find(std::begin(kPatternOps), std::end(kPatternOps), op) == std::end(kPatternOps)) return nullptr;
  if (!e.contains("rexpr") || !e["rexpr"].contains("A_ArrayExpr")) return nullptr;
  const json& elements = e["rexpr"]["A_ArrayExpr"].value("elements", json::array());
  if (elements.empty() || contains_sublink_node(e["lexpr"]) ||
      json_any(e["lexpr"], [](const json& n) {
        return n.contains("FuncCall") && volatile_function(n["FuncCall"]["funcname"].back()["String"].value("sval", ""));
      })) {
    return nullptr;
  }
  std::vector<ExprPtr> tests;
  for (const json& element : elements) {
    tests.push_back(make_binary_operator(op, bind_node(e["lexpr"], context), bind_node(element, context), context));
  }
  if (tests.size() == 1) return std::move(tests[0]);
  return std::make_unique<BoolExpr>(all ? BoolOp::and_ : BoolOp::or_, std::move(tests));
}

ExprPtr bind_a_expr(const json& e, const json& whole, BindContext& context) {
  const std::string kind = e.value("kind", "");
  const std::vector<std::string> names = name_list(e.value("name", json::array()));
  const std::string op = names.empty() ? "" : names.back();
  if (e.contains("lexpr") && is_row(e["lexpr"]) && e.contains("rexpr")) {
    const json& left = e["lexpr"];
    const json& right = e["rexpr"];
    if (kind == "AEXPR_IN") return bind_row_in(e, op == "<>", context);
    // (a, b) op (SELECT x, y ...): PostgreSQL's parse analysis makes this a
    // ROWCOMPARE sublink; so does this binder.
    if (kind == "AEXPR_OP" && right.contains("SubLink") && right["SubLink"].value("subLinkType", "") == "EXPR_SUBLINK") {
      json link = right["SubLink"];
      link["subLinkType"] = "ROWCOMPARE_SUBLINK";
      link["testexpr"] = left;
      link["operName"] = e["name"];
      return bind_node(json{{"SubLink", std::move(link)}}, context);
    }
    if (is_row(right) && kind == "AEXPR_OP")
      return make_row_comparison(op, row_elements(left, context), row_size(left), row_elements(right, context),
                                 row_size(right), context);
    if (is_row(right) && (kind == "AEXPR_DISTINCT" || kind == "AEXPR_NOT_DISTINCT"))
      return make_row_distinct(kind == "AEXPR_NOT_DISTINCT", row_elements(left, context), row_size(left),
                               row_elements(right, context), row_size(right), context);
  }
  if (kind == "AEXPR_OP") {
    if (!e.contains("lexpr")) {
      ExprPtr right = bind_node(e["rexpr"], context);
      return make_unary_operator(op, std::move(right), context);
    }
    ExprPtr left = bind_node(e["lexpr"], context);
    ExprPtr right = bind_node(e["rexpr"], context);
    if (op == "||" && (is_array_type(left->type.id) || is_array_type(right->type.id))) {
      return scalar::make_array_concat(std::move(left), std::move(right), context);
    }
    return make_binary_operator(op, std::move(left), std::move(right), context);
  }
  // SIMILAR TO arrives as s ~ similar_to_escape(pattern), as PostgreSQL's grammar writes it.
  if (kind == "AEXPR_LIKE" || kind == "AEXPR_ILIKE" || kind == "AEXPR_SIMILAR") {
    ExprPtr left = bind_node(e["lexpr"], context);
    ExprPtr right = bind_node(e["rexpr"], context);
    return make_binary_operator(op, std::move(left), std::move(right), context);
  }
  if (kind == "AEXPR_OP_ANY" || kind == "AEXPR_OP_ALL") {
    if (ExprPtr expanded = pattern_over_array_elements(e, op, kind == "AEXPR_OP_ALL", context)) return expanded;
    ExprPtr left = bind_node(e["lexpr"], context);
    ExprPtr right = bind_node(e["rexpr"], context);
    return make_array_comparison(op, kind == "AEXPR_OP_ALL", std::move(left), std::move(right), context);
  }
  if (kind == "AEXPR_IN") {
    ExprPtr left = bind_node(e["lexpr"], context);
    std::vector<ExprPtr> items;
    for (const auto& item : e["rexpr"]["List"]["items"]) items.push_back(bind_node(item, context));
    SqlType common = left->type;
    for (const auto& item : items) common = common_supertype(common, item->type, "IN");
    if (common.id == TypeId::unknown) common = {TypeId::text};
    left = coerce_to(std::move(left), common, CastContext::implicit, context);
    for (auto& item : items) item = coerce_to(std::move(item), common, CastContext::implicit, context);
    return std::make_unique<InListExpr>(std::move(left), std::move(items), op == "<>");
  }
  if (kind == "AEXPR_BETWEEN" || kind == "AEXPR_NOT_BETWEEN" || kind == "AEXPR_BETWEEN_SYM" ||
      kind == "AEXPR_NOT_BETWEEN_SYM") {
    const auto& bounds = e["rexpr"]["List"]["items"];
    // x BETWEEN a AND b == x >= a AND x <= b (x is evaluated twice; it has no side effects).
    auto ge = make_binary_operator(">=", bind_node(e["lexpr"], context), bind_node(bounds[0], context), context);
    auto le = make_binary_operator("<=", bind_node(e["lexpr"], context), bind_node(bounds[1], context), context);
    std::vector<ExprPtr> both;
    both.push_back(std::move(ge));
    both.push_back(std::move(le));
    ExprPtr result = std::make_unique<BoolExpr>(BoolOp::and_, std::move(both));
    if (kind == "AEXPR_BETWEEN_SYM" || kind == "AEXPR_NOT_BETWEEN_SYM") {
      auto ge2 = make_binary_operator(">=", bind_node(e["lexpr"], context), bind_node(bounds[1], context), context);
      auto le2 = make_binary_operator("<=", bind_node(e["lexpr"], context), bind_node(bounds[0], context), context);
      std::vector<ExprPtr> both2;
      both2.push_back(std::move(ge2));
      both2.push_back(std::move(le2));
      std::vector<ExprPtr> either;
      either.push_back(std::move(result));
      either.push_back(std::make_unique<BoolExpr>(BoolOp::and_, std::move(both2)));
      result = std::make_unique<BoolExpr>(BoolOp::or_, std::move(either));
    }
    if (kind == "AEXPR_NOT_BETWEEN" || kind == "AEXPR_NOT_BETWEEN_SYM") {
      std::vector<ExprPtr> one;
      one.push_back(std::move(result));
      result = std::make_unique<BoolExpr>(BoolOp::not_, std::move(one));
    }
    return result;
  }
  if (kind == "AEXPR_NULLIF") {
    ExprPtr left = bind_node(e["lexpr"], context);
    ExprPtr right = bind_node(e["rexpr"], context);
    return make_nullif(std::move(left), std::move(right), context);
  }
  if (kind == "AEXPR_DISTINCT" || kind == "AEXPR_NOT_DISTINCT") {
    ExprPtr left = bind_node(e["lexpr"], context);
    ExprPtr right = bind_node(e["rexpr"], context);
    return make_is_distinct(std::move(left), std::move(right), kind == "AEXPR_NOT_DISTINCT", context);
  }
  (void)whole;
  throw Error(SqlState::feature_not_supported, "expression kind " + kind + " is not supported");
}

ExprPtr bind_func_call(const json& call, const json& whole, BindContext& context) {
  std::vector<std::string> names = name_list(call["funcname"]);
  std::string name = names.back();
  if (names.size() == 2 && names[0] != "pg_catalog" && names[0] != "public") {
    throw Error(SqlState::undefined_function, "function " + names[0] + "." + name + " does not exist");
  }
  const bool aggregate_syntax = call.value("agg_star", false) || call.value("agg_distinct", false) ||
                                call.contains("agg_filter") || call.value("agg_within_group", false) ||
                                call.contains("agg_order");
  if (call.contains("over")) {
    if (!context.on_window) throw Error(context.window_forbidden_state, context.window_forbidden_reason);
    return context.on_window(call, name);
  }
  if (is_window_function_name(name)) {
    throw Error(SqlState::wrong_object_type, "window function " + name + " requires an OVER clause");
  }
  if (is_aggregate_name(name)) {
    if (!context.on_aggregate) throw Error(SqlState::grouping_error, context.aggregate_forbidden_reason);
    return context.on_aggregate(call, name);
  }
  if (aggregate_syntax) {
    if (call.value("agg_star", false)) {
      throw Error(SqlState::wrong_object_type, name + "(*) specified, but " + name + " is not an aggregate function");
    }
    throw Error(SqlState::wrong_object_type,
                "DISTINCT specified, but " + name + " is not an aggregate function");
  }
  std::vector<ExprPtr> args;
  for (const auto& arg : call.value("args", json::array())) args.push_back(bind_node(arg, context));
  (void)whole;
  return make_function(name, std::move(args), context);
}

ExprPtr bind_node(const json& node, BindContext& context) {
  if (context.intercept) {
    if (ExprPtr replaced = context.intercept(node)) return replaced;
  }
  try {
    if (node.contains("A_Const")) return make_const(node["A_Const"]);
    if (node.contains("ColumnRef")) return bind_column_ref(node["ColumnRef"], context);
    if (node.contains("ParamRef")) {
      const int number = node["ParamRef"].value("number", 0);
      if (number < 1 || context.parameter_types == nullptr) {
        throw Error(SqlState::undefined_parameter, "there is no parameter $" + std::to_string(number));
      }
      auto& types = *context.parameter_types;
      if (types.size() < static_cast<size_t>(number)) types.resize(static_cast<size_t>(number), 0);
      const uint32_t oid_value = types[static_cast<size_t>(number - 1)];
      SqlType type{TypeId::unknown};
      if (oid_value != 0) {
        auto id = type_from_oid(oid_value);
        if (!id) throw Error(SqlState::feature_not_supported, "parameter type " + std::to_string(oid_value) + " is not supported");
        type = {*id};
      }
      return std::make_unique<ParamExpr>(type, number - 1);
    }
    if (node.contains("TypeCast")) {
      const auto& cast = node["TypeCast"];
      ExprPtr arg = bind_node(cast["arg"], context);
      if (ExprPtr reg_array = scalar::make_element_array_cast(arg, cast["typeName"], context)) return reg_array;
      const SqlType to = resolve_type_name(cast["typeName"]);
      return coerce_to(std::move(arg), to, CastContext::explicit_, context);
    }
    if (node.contains("A_Expr")) return bind_a_expr(node["A_Expr"], node, context);
    if (node.contains("BoolExpr")) {
      const auto& b = node["BoolExpr"];
      const std::string op = b.value("boolop", "");
      std::vector<ExprPtr> args;
      const char* clause = op == "AND_EXPR" ? "AND" : (op == "OR_EXPR" ? "OR" : "NOT");
      for (const auto& a : b["args"]) {
        ExprPtr arg = bind_node(a, context);
        if (arg->type.id != TypeId::boolean) {
          if (arg->type.id == TypeId::unknown) {
            arg = coerce_to(std::move(arg), {TypeId::boolean}, CastContext::implicit, context);
          } else {
            throw at(Error(SqlState::datatype_mismatch, std::string("argument of ") + clause +
                                                          " must be type boolean, not type " + format_type(arg->type)),
                     a);
          }
        }
        args.push_back(std::move(arg));
      }
      const BoolOp kind = op == "AND_EXPR" ? BoolOp::and_ : (op == "OR_EXPR" ? BoolOp::or_ : BoolOp::not_);
      return std::make_unique<BoolExpr>(kind, std::move(args));
    }
    if (node.contains("NullTest")) {
      const auto& t = node["NullTest"];
      ExprPtr arg = bind_node(t["arg"], context);
      return std::make_unique<NullTestExpr>(std::move(arg), t.value("nulltesttype", "") == "IS_NOT_NULL");
    }
    if (node.contains("BooleanTest")) {
      const auto& t = node["BooleanTest"];
      ExprPtr arg = coerce_to(bind_node(t["arg"], context), {TypeId::boolean}, CastContext::implicit, context);
      return make_boolean_test(std::move(arg), t.value("booltesttype", ""));
    }
    if (node.contains("FuncCall")) return bind_func_call(node["FuncCall"], node, context);
    if (node.contains("CaseExpr")) {
      const auto& c = node["CaseExpr"];
      ExprPtr subject;
      if (c.contains("arg")) subject = bind_node(c["arg"], context);
      std::vector<std::pair<ExprPtr, ExprPtr>> whens;
      std::vector<ExprPtr> results;
      std::vector<ExprPtr> conditions;
      for (const auto& w : c["args"]) {
        const auto& when = w["CaseWhen"];
        ExprPtr condition;
        if (c.contains("arg")) {
          condition = make_binary_operator("=", bind_node(c["arg"], context), bind_node(when["expr"], context), context);
        } else {
          condition = bind_node(when["expr"], context);
          if (condition->type.id == TypeId::unknown) {
            condition = coerce_to(std::move(condition), {TypeId::boolean}, CastContext::implicit, context);
          }
          if (condition->type.id != TypeId::boolean) {
            throw at(Error(SqlState::datatype_mismatch, "argument of CASE/WHEN must be type boolean, not type " +
                                                            format_type(condition->type)),
                     when["expr"]);
          }
        }
        conditions.push_back(std::move(condition));
        results.push_back(bind_node(when["result"], context));
      }
      ExprPtr otherwise;
      if (c.contains("defresult")) otherwise = bind_node(c["defresult"], context);
      SqlType common{TypeId::unknown};
      for (const auto& r : results) common = common_supertype(common, r->type, "CASE");
      if (otherwise) common = common_supertype(common, otherwise->type, "CASE");
      if (common.id == TypeId::unknown) common = {TypeId::text};
      for (size_t i = 0; i < results.size(); ++i) {
        whens.emplace_back(std::move(conditions[i]),
                           coerce_to(std::move(results[i]), common, CastContext::implicit, context));
      }
      if (otherwise) otherwise = coerce_to(std::move(otherwise), common, CastContext::implicit, context);
      return std::make_unique<CaseExpr>(common, std::move(whens), std::move(otherwise));
    }
    if (node.contains("CoalesceExpr")) {
      const auto& c = node["CoalesceExpr"];
      std::vector<ExprPtr> args;
      for (const auto& a : c["args"]) args.push_back(bind_node(a, context));
      SqlType common{TypeId::unknown};
      for (const auto& a : args) common = common_supertype(common, a->type, "COALESCE");
      if (common.id == TypeId::unknown) common = {TypeId::text};
      for (auto& a : args) a = coerce_to(std::move(a), common, CastContext::implicit, context);
      return std::make_unique<CoalesceExpr>(common, std::move(args));
    }
    if (node.contains("MinMaxExpr")) {
      const auto& m = node["MinMaxExpr"];
      std::vector<ExprPtr> args;
      for (const auto& a : m["args"]) args.push_back(bind_node(a, context));
      return make_greatest_least(m.value("op", "") == "IS_GREATEST", std::move(args), context);
    }
    if (node.contains("SQLValueFunction")) {
      const auto& f = node["SQLValueFunction"];
      // The parse tree leaves out a typmod of 0 (LOCALTIME(0)).
      return make_sql_value_function(f.value("op", ""), context, f.value("typmod", 0));
    }
    if (node.contains("SubLink")) {
      if (!context.on_sublink) throw Error(SqlState::feature_not_supported, "subqueries are not supported here");
      return context.on_sublink(node["SubLink"]);
    }
    if (node.contains("A_ArrayExpr")) {
      std::vector<ExprPtr> elements;
      for (const auto& e : node["A_ArrayExpr"].value("elements", json::array())) elements.push_back(bind_node(e, context));
      return scalar::make_array_constructor(std::move(elements), context);
    }
    if (node.contains("A_Indirection")) {
      // array[i] and (record).field; slices (a[1:2]) are not supported.
      const auto& indirection = node["A_Indirection"];
      ExprPtr value = bind_node(indirection["arg"], context);
      for (const auto& step : indirection["indirection"]) {
        if (step.contains("String")) {
          value = bind_record_field(std::move(value), string_of(step));
          continue;
        }
        if (!step.contains("A_Indices") || step["A_Indices"].value("is_slice", false) ||
            !step["A_Indices"].contains("uidx")) {
          throw Error(SqlState::feature_not_supported, "this kind of indirection is not supported");
        }
        value = scalar::make_array_subscript(std::move(value), bind_node(step["A_Indices"]["uidx"], context), context);
      }
      return value;
    }
    if (node.contains("CollateClause")) {
      // COLLATE "C"/"default": Tally compares bytewise, which is the C collation.
      return bind_node(node["CollateClause"]["arg"], context);
    }
    throw Error(SqlState::feature_not_supported, expression_words(node.begin().key()) + " is not supported by Tally");
  } catch (Error& error) {
    throw at(std::move(error), node);
  }
}

}  // namespace

ExprPtr bind_expression(const json& node, BindContext& context) { return bind_node(node, context); }

ExprPtr bind_condition(const json& node, BindContext& context, const char* clause) {
  ExprPtr e = bind_node(node, context);
  if (e->type.id == TypeId::unknown) e = coerce_to(std::move(e), {TypeId::boolean}, CastContext::implicit, context);
  if (e->type.id != TypeId::boolean) {
    throw at(Error(SqlState::datatype_mismatch, std::string("argument of ") + clause +
                                                    " must be type boolean, not type " + format_type(e->type)),
             node);
  }
  return e;
}

std::string output_column_name(const json& node) {
  if (node.contains("ColumnRef")) {
    const auto& fields = node["ColumnRef"]["fields"];
    const auto& last = fields[fields.size() - 1];
    if (last.contains("A_Star")) return "?column?";
    return string_of(last);
  }
  if (node.contains("FuncCall")) {
    auto names = name_list(node["FuncCall"]["funcname"]);
    return names.back();
  }
  if (node.contains("TypeCast")) {
    const auto& cast = node["TypeCast"];
    std::string inner = output_column_name(cast["arg"]);
    if (inner != "?column?") return inner;
    auto names = name_list(cast["typeName"].value("names", json::array()));
    std::string type = names.empty() ? "?column?" : names.back();
    // PostgreSQL names a cast column after the type's SQL name.
    if (type == "int4") return "int4";
    return type;
  }
  if (node.contains("CaseExpr")) return "case";
  // ARRAY[...] and ARRAY(SELECT ...) are named "array"; a[i] after a.
  if (node.contains("A_ArrayExpr")) return "array";
  if (node.contains("SubLink") && node["SubLink"].value("subLinkType", "") == "ARRAY_SUBLINK") return "array";
  if (node.contains("A_Indirection")) return output_column_name(node["A_Indirection"]["arg"]);
  if (node.contains("GroupingFunc")) return "grouping";
  if (node.contains("CoalesceExpr")) return "coalesce";
  if (node.contains("A_Expr") && node["A_Expr"].value("kind", "") == "AEXPR_NULLIF") return "nullif";
  if (node.contains("MinMaxExpr")) return node["MinMaxExpr"].value("op", "") == "IS_GREATEST" ? "greatest" : "least";
  if (node.contains("SQLValueFunction")) {
    const std::string op = node["SQLValueFunction"].value("op", "");
    if (op == "SVFOP_CURRENT_DATE") return "current_date";
    if (op == "SVFOP_CURRENT_TIMESTAMP") return "current_timestamp";
    if (op == "SVFOP_CURRENT_USER") return "current_user";
    if (op == "SVFOP_SESSION_USER") return "session_user";
    if (op == "SVFOP_USER") return "current_user";
    if (op == "SVFOP_CURRENT_CATALOG") return "current_catalog";
    if (op == "SVFOP_CURRENT_SCHEMA") return "current_schema";
    return "?column?";
  }
  if (node.contains("A_Const")) {
    const auto& c = node["A_Const"];
    if (c.contains("boolval")) return "bool";
  }
  return "?column?";
}

}  // namespace tally::executor
