#include "executor/project_set.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "executor/array_text.hpp"
#include "executor/binder.hpp"
#include "executor/cancel_point.hpp"
#include "executor/scalar/interval_functions.hpp"
#include "executor/cast.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/project_set_grouping.hpp"
#include "executor/record_value.hpp"
#include "executor/scalar/regex_set_functions.hpp"
#include "executor/select_plan_detail.hpp"
#include "executor/statement_context.hpp"
#include "executor/system_relation_provider.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor {
namespace {

using nlohmann::json;

// The relation the expanded rows are scanned as (pg_catalog is where the
// planner looks for relations that are not user tables).
constexpr const char* kRelationSchema = "pg_catalog";
constexpr const char* kRelationName = "__tally_project_set";
// More rows than this from one generate_series call are refused.
constexpr int64_t kMaxSeriesRows = int64_t{1} << 27;

enum class SetFunction { unnest, generate_subscripts, generate_series, regexp_split_to_table, regexp_matches, expandarray };

Error unsupported(const std::string& what) { return Error(SqlState::feature_not_supported, what + " is not supported"); }

std::optional<SetFunction> set_function_of(const json& node) {
  if (!node.is_object() || !node.contains("FuncCall")) return std::nullopt;
  const auto& names = node["FuncCall"].value("funcname", json::array());
  if (names.empty() || names.size() > 2) return std::nullopt;
  const std::string schema = names.size() == 2 ? names[0]["String"].value("sval", "") : "pg_catalog";
  const std::string name = names.back()["String"].value("sval", "");
  if (node["FuncCall"].contains("over")) return std::nullopt;
  // information_schema's helper pgjdbc's getPrimaryKeys and getIndexInfo call.
  if (schema == "information_schema" && name == "_pg_expandarray") return SetFunction::expandarray;
  if (schema != "pg_catalog") return std::nullopt;
  if (name == "unnest") return SetFunction::unnest;
  if (name == "generate_subscripts") return SetFunction::generate_subscripts;
  if (name == "generate_series") return SetFunction::generate_series;
  if (name == "regexp_split_to_table") return SetFunction::regexp_split_to_table;
  if (name == "regexp_matches") return SetFunction::regexp_matches;
  return std::nullopt;
}

// A set-returning call anywhere in the node but inside a subquery.
bool contains_set_function(const json& node) {
  if (node.is_object()) {
    if (node.contains("SubLink")) return false;
    if (set_function_of(node)) return true;
    for (const auto& [key, value] : node.items()) {
      if (contains_set_function(value)) return true;
    }
  } else if (node.is_array()) {
    for (const auto& v : node) {
      if (contains_set_function(v)) return true;
    }
  }
  return false;
}

const char* function_name(SetFunction f) {
  switch (f) {
    case SetFunction::unnest: return "unnest";
    case SetFunction::generate_subscripts: return "generate_subscripts";
    case SetFunction::generate_series: return "generate_series";
    case SetFunction::regexp_split_to_table: return "regexp_split_to_table";
    case SetFunction::regexp_matches: return "regexp_matches";
    case SetFunction::expandarray: return "_pg_expandarray";
  }
  return "";
}

// One item of the target list: a set-returning call over `arguments` inner
// outputs, or `width` plain outputs (more than one for a *).
struct Item {
  std::optional<SetFunction> function;
  size_t first = 0;  // its first inner output
  size_t width = 1;
  SqlType type;      // the call's result type
  TypeId array_type = TypeId::unknown;
  std::string name;
  int field = -1;    // _pg_expandarray: -1 the (x, n) record, 0 its x, 1 its n
  std::vector<SqlType> arg_types;  // the inner query's types of the call's arguments
  // An expression over the call's value (generate_series(...)::date): the
  // target's expression with the call replaced by kCallValue, evaluated
  // over the expanded rows; null for a bare call.
  std::optional<json> over_call;
};

int64_t integer_of(const Value& v) {
  if (std::holds_alternative<int64_t>(v)) return std::get<int64_t>(v);
  throw Error(SqlState::internal_error, "set-returning function argument is not an integer");
}

// The values one call gives for one row of the inner query.
std::vector<Value> call_values(const Item& item, const std::vector<Value>& args) {
  std::vector<Value> out;
  if (std::any_of(args.begin(), args.end(), [](const Value& v) { return is_null(v); })) {
    // generate_subscripts' third argument (reverse) being NULL is an empty set as well.
    return out;
  }
  switch (*item.function) {
    case SetFunction::unnest: {
      const SqlType element{array_element_type(item.array_type)};
      for (const auto& e : array_elements(item.array_type, std::get<std::string>(args[0]))) {
        if (!e) out.emplace_back(Null{});
        else out.push_back(element.id == TypeId::text ? Value{*e} : parse_text(element, *e));
      }
      return out;
    }
    case SetFunction::generate_subscripts: {
      if (integer_of(args[1]) != 1) return out;  // a one-dimensional array has no other dimension
      const auto count = static_cast<int64_t>(array_elements(item.array_type, std::get<std::string>(args[0])).size());
      const int64_t lower = array_lower_bound(item.array_type, std::get<std::string>(args[0]));
      const bool reverse = args.size() == 3 && std::get<bool>(args[2]);
      for (int64_t i = 0; i < count; ++i) out.emplace_back(reverse ? lower + count - 1 - i : lower + i);
      return out;
    }
    case SetFunction::generate_series: {
      if (item.type.id == TypeId::timestamp || item.type.id == TypeId::timestamptz) {
        const auto stamp = [&](size_t i) { return std::get<int64_t>(cast_value(args[i], item.arg_types[i], item.type, false)); };
        const Value step = cast_value(args[2], item.arg_types[2], SqlType{TypeId::interval}, false);
        for (const int64_t t : scalar::timestamp_series(stamp(0), stamp(1), std::get<Interval>(step),
                                                         item.type.id == TypeId::timestamptz, kMaxSeriesRows))
          out.emplace_back(t);
        return out;
      }
      const int64_t start = integer_of(args[0]), stop = integer_of(args[1]);
      const int64_t step = args.size() == 3 ? integer_of(args[2]) : 1;
      if (step == 0) throw Error(SqlState::invalid_parameter_value, "step size cannot equal zero");
      if (step > 0 ? stop < start : stop > start) return out;
      const __int128 rows = (static_cast<__int128>(stop) - start) / step + 1;
      if (rows > kMaxSeriesRows) throw unsupported("generate_series of more than 2^27 rows");
      for (int64_t i = 0; i < static_cast<int64_t>(rows); ++i) out.emplace_back(start + i * step);
      return out;
    }
    case SetFunction::regexp_split_to_table: {
      const std::string flags = args.size() == 3 ? std::get<std::string>(args[2]) : std::string();
      for (auto& piece : scalar::regexp_split(std::get<std::string>(args[0]), std::get<std::string>(args[1]), flags))
        out.emplace_back(std::move(piece));
      return out;
    }
    case SetFunction::regexp_matches: {
      const std::string flags = args.size() == 3 ? std::get<std::string>(args[2]) : std::string();
      for (auto& match : scalar::regexp_matches(std::get<std::string>(args[0]), std::get<std::string>(args[1]), flags))
        out.emplace_back(std::move(match));
      return out;
    }
    case SetFunction::expandarray: {
      // Each element x with its position n counted from 1 (whatever the lower bound).
      const SqlType element{array_element_type(item.array_type)};
      const auto elements = array_elements(item.array_type, std::get<std::string>(args[0]));
      for (size_t k = 0; k < elements.size(); ++k) {
        const int64_t n = static_cast<int64_t>(k) + 1;
        if (item.field == 1) {
          out.emplace_back(n);
        } else if (item.field == 0) {
          if (!elements[k]) out.emplace_back(Null{});
          else out.push_back(element.id == TypeId::text ? Value{*elements[k]} : parse_text(element, *elements[k]));
        } else {
          out.emplace_back(record_text({elements[k], std::to_string(n)}));
        }
      }
      return out;
    }
  }
  return out;
}

// The result type of a call, from its arguments' types; 42883 as PostgreSQL
// for arguments no such function takes.
void type_call(Item& item, const std::vector<SqlType>& args) {
  std::string signature;
  for (const auto& t : args) signature += (signature.empty() ? "" : ", ") + format_type(t);
  const Error no_such(SqlState::undefined_function,
                      std::string("function ") + function_name(*item.function) + "(" + signature + ") does not exist");
  auto integer = [](const SqlType& t) {
    return t.id == TypeId::int2 || t.id == TypeId::int4 || t.id == TypeId::int8;
  };
  switch (*item.function) {
    case SetFunction::unnest:
    case SetFunction::generate_subscripts: {
      const size_t min_args = item.function == SetFunction::unnest ? 1 : 2;
      const size_t max_args = item.function == SetFunction::unnest ? 1 : 3;
      if (args.size() < min_args || args.size() > max_args) {
        if (item.function == SetFunction::unnest) throw unsupported("unnest of several arrays");
        throw no_such;
      }
      item.array_type = args[0].id == TypeId::unknown ? TypeId::text_array : args[0].id;
      if (!is_array_type(item.array_type)) throw no_such;
      if (item.function == SetFunction::generate_subscripts) {
        if (!integer(args[1]) || (args.size() == 3 && args[2].id != TypeId::boolean)) throw no_such;
        item.type = SqlType{TypeId::int4};
      } else {
        item.type = SqlType{array_element_type(item.array_type)};
      }
      return;
    }
    case SetFunction::generate_series: {
      if (args.size() != 2 && args.size() != 3) throw no_such;
      if (args.size() == 3) {
        if (const auto series = scalar::timestamp_series_type(args[0].id, args[1].id, args[2].id)) {
          item.type = SqlType{*series};
          item.arg_types = args;
          return;
        }
      }
      TypeId type = TypeId::int4;
      for (const auto& t : args) {
        if (!integer(t)) throw unsupported("generate_series over " + format_type(t) + " in a select list");
        if (t.id == TypeId::int8) type = TypeId::int8;
      }
      item.type = SqlType{type};
      return;
    }
    case SetFunction::regexp_split_to_table:
    case SetFunction::regexp_matches: {
      if (args.size() != 2 && args.size() != 3) throw no_such;
      for (const auto& t : args) {
        if (!is_text_kind(t.id)) throw no_such;
      }
      item.type = SqlType{item.function == SetFunction::regexp_matches ? TypeId::text_array : TypeId::text};
      return;
    }
    case SetFunction::expandarray: {
      if (args.size() != 1 || !is_array_type(args[0].id)) throw no_such;
      item.array_type = args[0].id;
      const SqlType element{array_element_type(item.array_type)};
      item.type = item.field == 0   ? element
                  : item.field == 1 ? SqlType{TypeId::int4}
                                    : record_type({{"x", element}, {"n", SqlType{TypeId::int4}}});
      return;
    }
  }
}

// Expands the inner query's rows (ProjectSet).
DataChunk expand(const std::vector<Item>& items, const ResultSet& inner) {
  DataChunk out;
  for (const auto& item : items) {
    if (item.function) {
      out.columns.emplace_back(item.type);
    } else {
      for (size_t i = 0; i < item.width; ++i) out.columns.emplace_back(inner.columns[item.first + i].type);
    }
  }
  CancelTicker ticker;
  std::vector<std::vector<Value>> calls(items.size());
  for (size_t row = 0; row < inner.rows; ++row) {
    size_t rows = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      if (!items[i].function) continue;
      std::vector<Value> args;
      for (size_t a = 0; a < items[i].width; ++a) args.push_back(inner.columns[items[i].first + a].get(row));
      calls[i] = call_values(items[i], args);
      rows = std::max(rows, calls[i].size());
    }
    for (size_t r = 0; r < rows; ++r) {
      ticker.tick();
      size_t column = 0;
      for (size_t i = 0; i < items.size(); ++i) {
        if (items[i].function) {
          out.columns[column++].push(r < calls[i].size() ? calls[i][r] : Value{Null{}});
          continue;
        }
        for (size_t c = 0; c < items[i].width; ++c) out.columns[column++].push(inner.columns[items[i].first + c].get(row));
      }
    }
  }
  out.rows = out.columns.empty() ? 0 : out.columns[0].count;
  return out;
}

// The planner's catalog relations plus the expanded rows.
class WithProjectSet final : public SystemRelationProvider {
 public:
  WithProjectSet(SystemRelationProvider* base, std::shared_ptr<const MaterializedRelation> relation)
      : base_(base), relation_(std::move(relation)) {}
  std::shared_ptr<const MaterializedRelation> find(std::string_view schema, std::string_view name) override {
    if (schema == kRelationSchema && name == kRelationName) return relation_;
    return base_ != nullptr ? base_->find(schema, name) : nullptr;
  }

 private:
  SystemRelationProvider* base_;
  std::shared_ptr<const MaterializedRelation> relation_;
};

json string_node(const std::string& s) { return json{{"String", {{"sval", s}}}}; }

// Where an expression over one set-returning call reads the call's value.
constexpr const char* kCallValue = "__tally_call_value";

bool is_call_value(const json& node) {
  return node.is_object() && node.contains("ColumnRef") && node["ColumnRef"]["fields"].size() == 1 &&
         node["ColumnRef"]["fields"][0].contains("String") &&
         node["ColumnRef"]["fields"][0]["String"].value("sval", "") == kCallValue;
}

// `node` with its one set-returning call taken out into `call` and replaced
// by kCallValue; nullopt unless the rest reads no column, no subquery and no
// other set-returning call (it is evaluated over the expanded rows alone).
std::optional<json> take_out_call(const json& node, json& call) {
  if (node.is_object()) {
    if (set_function_of(node)) {
      if (!call.is_null()) return std::nullopt;
      call = node;
      return json{{"ColumnRef", {{"fields", json::array({string_node(kCallValue)})}}}};
    }
    if (node.contains("ColumnRef") || node.contains("SubLink")) return std::nullopt;
    json out = json::object();
    for (const auto& [key, value] : node.items()) {
      auto part = take_out_call(value, call);
      if (!part) return std::nullopt;
      out[key] = std::move(*part);
    }
    return out;
  }
  if (node.is_array()) {
    json out = json::array();
    for (const auto& v : node) {
      auto part = take_out_call(v, call);
      if (!part) return std::nullopt;
      out.push_back(std::move(*part));
    }
    return out;
  }
  return node;
}

// `expression` with kCallValue read from `column`.
json read_call_value(const json& expression, const std::string& column) {
  return replace_column_refs(expression, [&](const json& ref) -> std::optional<json> {
    if (!is_call_value(json{{"ColumnRef", ref}})) return std::nullopt;
    return json{{"ColumnRef", {{"fields", json::array({string_node(column)})}}}};
  });
}

// The call of `(call).x` / `(call).n` over _pg_expandarray, setting `field`;
// null for any other node. Another field name is PostgreSQL's 42703.
const json* field_of_set_call(const json& node, int& field) {
  if (!node.is_object() || !node.contains("A_Indirection")) return nullptr;
  const auto& ind = node["A_Indirection"];
  const auto& steps = ind.value("indirection", json::array());
  if (steps.size() != 1 || !steps[0].contains("String")) return nullptr;
  if (set_function_of(ind["arg"]) != SetFunction::expandarray) return nullptr;
  const std::string name = steps[0]["String"].value("sval", "");
  if (name != "x" && name != "n") {
    throw Error(SqlState::undefined_column, "column \"" + name + "\" not found in data type record");
  }
  field = name == "x" ? 0 : 1;
  return &ind["arg"];
}

}  // namespace

bool is_set_returning_call(const json& node) { return set_function_of(node).has_value(); }

std::optional<SqlType> set_returning_result(const std::string& name, const std::vector<SqlType>& args) {
  Item item;
  item.function = set_function_of(json{{"FuncCall", {{"funcname", json::array({string_node(name)})}}}});
  if (!item.function || item.function == SetFunction::expandarray) return std::nullopt;
  item.width = args.size();
  try {
    type_call(item, args);
  } catch (const Error&) {
    return std::nullopt;
  }
  return item.type;
}

bool has_set_returning_target(const json& select) {
  return contains_set_function(select.value("targetList", json::array()));
}

std::shared_ptr<const SelectPlan> plan_project_set(const json& select, PlanContext& pc) {
  if (auto grouped = group_after_set_functions(select)) return plan_select(*grouped, pc);
  // The query without the calls: each call's arguments are its outputs.
  json inner = select;
  for (const char* clause : {"sortClause", "limitCount", "limitOffset", "limitOption", "distinctClause", "withClause",
                             "lockingClause"}) {
    inner.erase(clause);
  }
  std::vector<Item> items;
  json targets = json::array();
  size_t star_items = 0;
  for (const auto& t : select.value("targetList", json::array())) {
    const auto& rt = t["ResTarget"];
    const json* call_node = &rt["val"];
    Item item;
    // (information_schema._pg_expandarray(a)).x or .n: one field of its record.
    if (const auto* ind = field_of_set_call(*call_node, item.field)) call_node = ind;
    const json* val_node = call_node;
    json taken;
    if (!set_function_of(*val_node) && contains_set_function(*val_node)) {
      item.over_call = take_out_call(*val_node, taken);
      if (!item.over_call) throw unsupported("a set-returning function inside an expression that reads columns");
      val_node = &taken;
    }
    const json& val = *val_node;
    item.function = set_function_of(val);
    if (!item.function) {
      const bool star = val.contains("ColumnRef") && val["ColumnRef"]["fields"].back().contains("A_Star");
      if (star) {
        ++star_items;
        item.width = 0;  // known once the inner query is planned
      }
      targets.push_back(t);
      items.push_back(std::move(item));
      continue;
    }
    const auto& call = val["FuncCall"];
    if (call.contains("agg_order") || call.value("agg_distinct", false) || call.value("agg_star", false) ||
        call.value("func_variadic", false) || call.contains("agg_filter")) {
      throw unsupported(std::string("this form of ") + function_name(*item.function));
    }
    item.name = rt.contains("name")  ? rt["name"].get<std::string>()
                : item.over_call      ? output_column_name(rt["val"])
                : item.field == 0     ? std::string("x")
                : item.field == 1     ? std::string("n")
                                      : std::string(function_name(*item.function));
    const auto& args = call.value("args", json::array());
    item.width = args.size();
    for (const auto& a : args) {
      if (contains_set_function(a)) throw unsupported("a set-returning function inside an expression");
      targets.push_back(json{{"ResTarget", {{"val", a}}}});
    }
    items.push_back(std::move(item));
  }
  if (star_items > 1) throw unsupported("several * items beside a set-returning function");
  inner["targetList"] = targets;

  PlanContext inner_pc = pc;
  const auto inner_plan = plan_select(inner, inner_pc);
  size_t fixed = 0;
  for (const auto& item : items) fixed += item.width;
  size_t next = 0;
  for (auto& item : items) {
    if (!item.function && item.width == 0) item.width = inner_plan->visible - fixed;
    item.first = next;
    next += item.width;
    if (item.function) {
      std::vector<SqlType> args;
      for (size_t i = 0; i < item.width; ++i) args.push_back(inner_plan->outputs[item.first + i]->type);
      type_call(item, args);
    }
  }

  auto relation = std::make_shared<MaterializedRelation>();
  relation->name = "ProjectSet";
  json outer_targets = json::array();
  for (const auto& item : items) {
    const size_t count = item.function ? 1 : item.width;
    for (size_t i = 0; i < count; ++i) {
      const std::string column = "c" + std::to_string(relation->columns.size());
      const std::string name = item.function ? item.name : inner_plan->names[item.first + i];
      const SqlType type = item.function ? item.type : inner_plan->outputs[item.first + i]->type;
      relation->columns.push_back({column, type});
      relation->rows.columns.emplace_back(type);
      json ref{{"ColumnRef", {{"fields", json::array({string_node(column)})}}}};
      if (item.over_call) ref = read_call_value(*item.over_call, column);
      outer_targets.push_back(json{{"ResTarget", {{"name", name}, {"val", ref}}}});
    }
  }
  relation->rows_at_run = [inner_plan, items](const std::vector<Value>* parameters) {
    ExecContext context = nested_context(parameters);
    const ResultSet rows = run_select(*inner_plan, context);
    return expand(items, rows);
  };

  // ORDER BY, DISTINCT and LIMIT over the expanded rows.
  json outer = json::object();
  outer["targetList"] = outer_targets;
  outer["fromClause"] = json::array({json{{"RangeVar",
                                          {{"schemaname", kRelationSchema},
                                           {"relname", kRelationName},
                                           {"inh", true},
                                           {"relpersistence", "p"},
                                           {"alias", {{"aliasname", "project_set"}}}}}}});
  for (const char* clause : {"sortClause", "limitCount", "limitOffset", "limitOption", "distinctClause"}) {
    if (select.contains(clause)) outer[clause] = select[clause];
  }
  outer["op"] = "SETOP_NONE";
  WithProjectSet relations(pc.system_relations, relation);
  PlanContext outer_pc = pc;
  outer_pc.system_relations = &relations;
  return plan_select(outer, outer_pc);
}

}  // namespace tally::executor
