#include "executor/function_relation.hpp"

#include <algorithm>
#include <functional>

#include "common/error.hpp"
#include "executor/array_text.hpp"
#include "executor/binder.hpp"
#include "executor/expression.hpp"
#include "executor/scalar/catalog_functions.hpp"
#include "executor/scalar/interval_functions.hpp"
#include "executor/settings.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor {
namespace {

using nlohmann::json;

// More rows than this are refused rather than materialized at planning.
constexpr int64_t kMaxSeriesRows = int64_t{1} << 27;

std::string function_name(const json& call) {
  std::vector<std::string> names;
  for (const auto& n : call.value("funcname", json::array())) names.push_back(n["String"].value("sval", ""));
  if (names.empty()) return "";
  if (names.size() == 2 && names[0] != "pg_catalog") return names[0] + "." + names[1];
  return names.back();
}

Error unsupported(const std::string& what) {
  return Error(SqlState::feature_not_supported, what + " in FROM is not supported");
}

// A constant argument: no column of another FROM item (LATERAL) and no
// parameter, since the rows are made while planning.
ExprPtr constant_expression(const json& arg, BindContext& context, const std::string& function) {
  const std::string text = arg.dump();
  if (text.find("\"ColumnRef\"") != std::string::npos || text.find("\"ParamRef\"") != std::string::npos) {
    throw unsupported(function + " with arguments other than constants");
  }
  return bind_expression(arg, context);
}

Value constant_argument(const json& arg, TypeId type, BindContext& context, const std::string& function) {
  ExprPtr bound = coerce_to(constant_expression(arg, context, function), {type}, CastContext::implicit, context);
  return evaluate_constant(*bound, nullptr);
}

// An argument that may read an enclosing query's columns (a subquery's
// generate_series(1, t.n) or unnest(tc.reloptions)) or parameters; a column
// of a FROM item beside this one would be LATERAL. `correlated` is set when
// its value is known only when the scan runs.
ExprPtr outer_only_argument(const json& arg, BindContext& context, bool& correlated) {
  const std::string text = arg.dump();
  // A parameter's value, too, is known only when the statement runs.
  if (text.find("\"ParamRef\"") != std::string::npos) correlated = true;
  if (text.find("\"ColumnRef\"") == std::string::npos) return bind_expression(arg, context);
  correlated = true;
  BindContext outer_only = context;
  outer_only.relations = nullptr;
  outer_only.columns.clear();
  outer_only.table_name.clear();
  try {
    return bind_expression(arg, outer_only);
  } catch (const Error& e) {
    if (e.state() != SqlState::undefined_column && e.state() != SqlState::undefined_table) throw;
    throw unsupported("a set-returning function of a column of another FROM item here");
  }
}

// The relation's rows: made now for constant arguments, else when the scan
// runs (once per outer row).
std::shared_ptr<MaterializedRelation> relation_of(const std::string& name, SqlType type, bool correlated,
                                                  std::function<DataChunk(const std::vector<Value>*)> make) {
  auto relation = std::make_shared<MaterializedRelation>();
  relation->name = name;
  if (correlated) {
    relation->rows.columns.emplace_back(type);
    relation->rows_at_run = std::move(make);
  } else {
    relation->rows = make(nullptr);
  }
  return relation;
}

std::shared_ptr<MaterializedRelation> timestamp_series_relation(std::vector<ExprPtr>& bound, bool with_zone,
                                                                 bool correlated, BindContext& context) {
  const SqlType type{with_zone ? TypeId::timestamptz : TypeId::timestamp};
  std::vector<std::shared_ptr<const Expr>> shared;
  for (size_t i = 0; i < bound.size(); ++i) {
    shared.emplace_back(coerce_to(std::move(bound[i]), i < 2 ? type : SqlType{TypeId::interval}, CastContext::implicit, context));
  }
  auto make = [shared, type, with_zone](const std::vector<Value>* parameters) {
    std::vector<Value> v;
    for (const auto& e : shared) v.push_back(evaluate_constant(*e, parameters));
    Vector column{type};
    if (std::none_of(v.begin(), v.end(), [](const Value& x) { return is_null(x); })) {
      for (const int64_t t : scalar::timestamp_series(std::get<int64_t>(v[0]), std::get<int64_t>(v[1]),
                                                       std::get<Interval>(v[2]), with_zone, kMaxSeriesRows))
        column.push(Value{t});
    }
    DataChunk chunk;
    chunk.rows = column.count;
    chunk.columns.push_back(std::move(column));
    return chunk;
  };
  return relation_of("generate_series", type, correlated, std::move(make));
}

std::shared_ptr<MaterializedRelation> generate_series(const json& call, BindContext& context) {
  const auto& args = call.value("args", json::array());
  if (args.size() != 2 && args.size() != 3) throw unsupported("this form of generate_series");
  bool correlated = false;
  std::vector<ExprPtr> bound;
  for (const auto& a : args) bound.push_back(outer_only_argument(a, context, correlated));
  if (bound.size() == 3) {
    if (const auto series = scalar::timestamp_series_type(bound[0]->type.id, bound[1]->type.id, bound[2]->type.id))
      return timestamp_series_relation(bound, *series == TypeId::timestamptz, correlated, context);
  }
  // int4 when every argument is, as PostgreSQL picks generate_series(int4, int4).
  TypeId type = TypeId::int4;
  for (const auto& e : bound) {
    const TypeId id = e->type.id;
    if (id == TypeId::int8) type = TypeId::int8;
    else if (id != TypeId::int4 && id != TypeId::int2 && id != TypeId::unknown)
      throw unsupported("generate_series over " + format_type(e->type));
  }
  std::vector<std::shared_ptr<const Expr>> shared;
  for (auto& e : bound) shared.emplace_back(coerce_to(std::move(e), {type}, CastContext::implicit, context));
  auto make = [shared, type](const std::vector<Value>* parameters) {
    std::vector<int64_t> v;
    bool any_null = false;
    for (const auto& e : shared) {
      const Value value = evaluate_constant(*e, parameters);
      any_null = any_null || is_null(value);
      v.push_back(is_null(value) ? 0 : std::get<int64_t>(value));
    }
    Vector column{SqlType{type}};
    const int64_t step = v.size() == 3 ? v[2] : 1;
    if (!any_null) {
      if (step == 0) throw Error(SqlState::invalid_parameter_value, "step size cannot equal zero");
      // A stop before the start (in the step's direction) gives no rows; the
      // division truncates toward zero, so it is checked first.
      const bool empty = step > 0 ? v[1] < v[0] : v[1] > v[0];
      const __int128 span = (static_cast<__int128>(v[1]) - v[0]) / step;
      const int64_t rows = empty ? 0 : static_cast<int64_t>(std::min<__int128>(span + 1, kMaxSeriesRows + 1));
      if (rows > kMaxSeriesRows) throw unsupported("generate_series of more than 2^27 rows");
      column.ints.reserve(static_cast<size_t>(rows));
      for (int64_t i = 0; i < rows; ++i) column.push(Value{v[0] + i * step});
    }
    DataChunk chunk;
    chunk.rows = column.count;
    chunk.columns.push_back(std::move(column));
    return chunk;
  };
  return relation_of("generate_series", SqlType{type}, correlated, std::move(make));
}

// unnest(array): the elements of a constant array (text[], int2vector,
// oidvector, an array literal), in order.
// An enclosing query's column (unnest(tc.reloptions) in a subquery) is read
// when the scan runs, once per outer row.
std::shared_ptr<MaterializedRelation> unnest_array(const json& arg, BindContext& context) {
  bool correlated = false;
  ExprPtr array = outer_only_argument(arg, context, correlated);
  if (array->type.id == TypeId::unknown) array = coerce_to(std::move(array), {TypeId::text_array}, CastContext::implicit, context);
  const TypeId array_type = array->type.id;
  if (!is_array_type(array_type)) {
    throw Error(SqlState::undefined_function, "function unnest(" + format_type(array->type) + ") does not exist");
  }
  const SqlType element{array_element_type(array_type)};
  std::shared_ptr<const Expr> shared(std::move(array));
  auto make = [shared, array_type, element](const std::vector<Value>* parameters) {
    const Value value = evaluate_constant(*shared, parameters);
    DataChunk rows;
    Vector column{element};
    if (!is_null(value)) {
      for (const auto& e : array_elements(array_type, std::get<std::string>(value))) {
        if (!e) column.push(Value{Null{}});
        else column.push(element.id == TypeId::text ? Value{*e} : parse_text(element, *e));
      }
    }
    rows.rows = column.count;
    rows.columns.push_back(std::move(column));
    return rows;
  };
  return relation_of("unnest", element, correlated, std::move(make));
}

std::shared_ptr<MaterializedRelation> unnest(const json& call, BindContext& context) {
  const auto& args = call.value("args", json::array());
  if (args.size() != 1) throw unsupported("unnest of several arrays");
  const json* inner = args[0].contains("FuncCall") ? &args[0]["FuncCall"] : nullptr;
  if (inner == nullptr || function_name(*inner) != "current_schemas" || inner->value("args", json::array()).size() != 1) {
    return unnest_array(args[0], context);
  }
  const Value implicit = constant_argument((*inner)["args"][0], TypeId::boolean, context, "current_schemas");
  auto relation = std::make_shared<MaterializedRelation>();
  relation->name = "unnest";
  Vector column{SqlType{TypeId::name}};
  if (!is_null(implicit)) {
    for (const auto& s : scalar::current_schemas(std::get<bool>(implicit), context.settings)) column.push(Value{s});
  }
  relation->rows.rows = column.count;
  relation->rows.columns.push_back(std::move(column));
  return relation;
}

// pg_options_to_table(options text[]): each "name=value" element of a
// catalog's options array (reloptions, fdwoptions, ...) as a row
// (option_name, option_value); an element without "=" has a NULL value.
std::shared_ptr<MaterializedRelation> options_to_table(const json& call, BindContext& context) {
  const auto& args = call.value("args", json::array());
  if (args.size() != 1) throw unsupported("this form of pg_options_to_table");
  bool correlated = false;
  ExprPtr array = outer_only_argument(args[0], context, correlated);
  array = coerce_to(std::move(array), {TypeId::text_array}, CastContext::implicit, context);
  std::shared_ptr<const Expr> shared(std::move(array));
  const SqlType text{TypeId::text};
  auto make = [shared, text](const std::vector<Value>* parameters) {
    const Value value = evaluate_constant(*shared, parameters);
    DataChunk rows;
    Vector names{text}, values{text};
    if (!is_null(value)) {
      for (const auto& e : array_elements(TypeId::text_array, std::get<std::string>(value))) {
        if (!e) continue;
        const size_t equals = e->find('=');
        names.push(Value{e->substr(0, equals)});
        values.push(equals == std::string::npos ? Value{Null{}} : Value{e->substr(equals + 1)});
      }
    }
    rows.rows = names.count;
    rows.columns.push_back(std::move(names));
    rows.columns.push_back(std::move(values));
    return rows;
  };
  auto relation = std::make_shared<MaterializedRelation>();
  relation->name = "pg_options_to_table";
  relation->columns = {{"option_name", text}, {"option_value", text}};
  if (correlated) {
    relation->rows.columns.emplace_back(text);
    relation->rows.columns.emplace_back(text);
    relation->rows_at_run = std::move(make);
  } else {
    relation->rows = make(nullptr);
  }
  return relation;
}

// pg_partition_tree(regclass): the partitions under a partitioned table or
// index, itself included. Tally has no partitioned relations and no
// partitions, and PostgreSQL lists no rows for any other relation (psql's
// \dP+ reads it LATERAL for each partitioned relation it lists).
std::shared_ptr<MaterializedRelation> partition_tree(const json& call, BindContext& context) {
  const auto& args = call.value("args", json::array());
  if (args.size() != 1) throw unsupported("this form of pg_partition_tree");
  bool correlated = false;
  coerce_to(outer_only_argument(args[0], context, correlated), {TypeId::regclass}, CastContext::implicit, context);
  auto relation = std::make_shared<MaterializedRelation>();
  relation->name = "pg_partition_tree";
  relation->columns = {{"relid", SqlType{TypeId::regclass}},
                       {"parentrelid", SqlType{TypeId::regclass}},
                       {"isleaf", SqlType{TypeId::boolean}},
                       {"level", SqlType{TypeId::int4}}};
  for (const auto& c : relation->columns) relation->rows.columns.emplace_back(c.type);
  return relation;
}

}  // namespace

FunctionRelation plan_function_relation(const json& range_function, BindContext& context) {
  const auto& functions = range_function.value("functions", json::array());
  if (range_function.value("is_rowsfrom", false) || functions.size() != 1) throw unsupported("ROWS FROM");
  const json& item = functions[0]["List"]["items"][0];
  if (!item.contains("FuncCall")) throw unsupported("this function call");
  const json& call = item["FuncCall"];
  const std::string name = function_name(call);
  std::shared_ptr<MaterializedRelation> relation;
  if (name == "generate_series") relation = generate_series(call, context);
  else if (name == "unnest") relation = unnest(call, context);
  else if (name == "pg_options_to_table") relation = options_to_table(call, context);
  else if (name == "pg_partition_tree") relation = partition_tree(call, context);
  else throw unsupported("function " + name);
  // One column is named after the alias (FROM f(...) AS x), else the
  // function; AS t(x) names both. Several are named by the function.
  const json* alias = range_function.contains("alias") ? &range_function["alias"] : nullptr;
  const std::string alias_name = alias ? alias->value("aliasname", name) : name;
  if (relation->columns.empty()) relation->columns.push_back({alias ? alias_name : name, relation->rows.columns[0].type});
  if (range_function.value("ordinality", false)) {
    // WITH ORDINALITY: the row's position, from 1, as a bigint column.
    auto number = [](DataChunk& rows) {
      Vector ordinality{SqlType{TypeId::int8}};
      for (size_t i = 0; i < rows.rows; ++i) ordinality.push(Value{static_cast<int64_t>(i + 1)});
      rows.columns.push_back(std::move(ordinality));
    };
    number(relation->rows);
    if (relation->rows_at_run) {
      relation->rows_at_run = [make = relation->rows_at_run, number](const std::vector<Value>* parameters) {
        DataChunk rows = make(parameters);
        number(rows);
        return rows;
      };
    }
    relation->columns.push_back({"ordinality", SqlType{TypeId::int8}});
  }
  return {std::move(relation), alias_name};
}

}  // namespace tally::executor
