#include "executor/distinct_count_rewrite.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "executor/binder.hpp"
#include "executor/engine_aggregator.hpp"
#include "executor/select_plan.hpp"
#include "executor/select_plan_detail.hpp"

namespace tally::executor {

using json = nlohmann::json;

namespace {

constexpr const char* kValue = "tally_value";

// A column reference's one unqualified name, or "" for anything else.
std::string bare_name(const json& node) {
  if (!node.contains("ColumnRef")) return "";
  const json& fields = node["ColumnRef"]["fields"];
  if (fields.size() != 1 || !fields[0].contains("String")) return "";
  return fields[0]["String"].value("sval", "");
}

// The function a FuncCall names (its last name part, pg_catalog allowed), or "".
std::string function_name(const json& f) {
  const json& names = f["funcname"];
  if (names.empty() || names.size() > 2 || (names.size() == 2 && names[0]["String"].value("sval", "") != "pg_catalog")) {
    return "";
  }
  return names[names.size() - 1]["String"].value("sval", "");
}

class Rewriter {
 public:
  explicit Rewriter(std::set<std::string> keys) : keys_(std::move(keys)) {}

  // Rewrites each count(DISTINCT u) in `node` to count(tally_value); false
  // where the node holds something the rewrite cannot carry: another
  // aggregate or a window, a subquery, a column other than a key (or, with
  // `outputs`, an output's name).
  bool rewrite(json& node, const std::set<std::string>* outputs = nullptr) {
    if (node.is_array()) {
      for (json& item : node) {
        if (!rewrite(item, outputs)) return false;
      }
      return true;
    }
    if (!node.is_object()) return true;
    if (node.contains("SubLink") || (node.contains("ColumnRef") && !column_allowed(node, outputs))) return false;
    if (node.contains("FuncCall")) {
      json& f = node["FuncCall"];
      if (f.contains("over")) return false;
      if (f.value("agg_distinct", false)) return rewrite_count(f);
      if (f.contains("agg_star") || f.contains("agg_order") || f.contains("agg_filter") ||
          f.value("agg_within_group", false) || is_aggregate_name(function_name(f))) {
        return false;
      }
    }
    for (auto& [key, child] : node.items()) {
      if (!rewrite(child, outputs)) return false;
    }
    return true;
  }

  const std::string& counted() const { return counted_; }
  const json& counted_node() const { return counted_node_; }

 private:
  bool column_allowed(const json& node, const std::set<std::string>* outputs) const {
    const std::string name = bare_name(node);
    return !name.empty() && (keys_.count(name) > 0 || (outputs != nullptr && outputs->count(name) > 0));
  }

  bool rewrite_count(json& f) {
    if (function_name(f) != "count" || f.contains("agg_filter") || f.contains("agg_order") ||
        f.value("agg_within_group", false) || f.value("func_variadic", false) || !f.contains("args") ||
        f["args"].size() != 1) {
      return false;
    }
    const std::string name = bare_name(f["args"][0]);
    if (name.empty() || keys_.count(name) > 0 || (!counted_.empty() && counted_ != name)) return false;
    if (counted_.empty()) {
      counted_ = name;
      counted_node_ = f["args"][0];
    }
    f.erase("agg_distinct");
    f["args"][0] = json{{"ColumnRef", {{"fields", json::array({json{{"String", {{"sval", kValue}}}}})}, {"location", -1}}}};
    return true;
  }

  std::set<std::string> keys_;
  std::string counted_;
  json counted_node_;
};

}  // namespace

std::optional<json> distinct_count_as_grouping(const json& select, const PlanContext& context) {
  if (context.outer_column) return std::nullopt;
  for (const char* clause : {"distinctClause", "windowClause", "withClause", "lockingClause", "intoClause",
                             "valuesLists"}) {
    if (select.contains(clause)) return std::nullopt;
  }
  if (select.value("op", "SETOP_NONE") != "SETOP_NONE" || !select.contains("fromClause") ||
      !select.contains("targetList")) {
    return std::nullopt;
  }
  std::set<std::string> keys;
  json key_nodes = json::array();
  if (select.contains("groupClause")) {
    for (const json& k : select["groupClause"]) {
      const std::string name = bare_name(k);
      if (name.empty() || name == kValue || !keys.insert(name).second) return std::nullopt;
      key_nodes.push_back(k);
    }
  }
  Rewriter rewriter(keys);
  json targets = select["targetList"];
  std::set<std::string> outputs;
  for (json& t : targets) {
    if (!t.contains("ResTarget") || !t["ResTarget"].contains("val")) return std::nullopt;
    if (t["ResTarget"].contains("name")) outputs.insert(t["ResTarget"]["name"].get<std::string>());
    if (!rewriter.rewrite(t["ResTarget"]["val"])) return std::nullopt;
  }
  json having = select.value("havingClause", json());
  if (!having.is_null() && !rewriter.rewrite(having)) return std::nullopt;
  json sort = select.value("sortClause", json());
  if (!sort.is_null() && !rewriter.rewrite(sort, &outputs)) return std::nullopt;
  if (rewriter.counted().empty()) return std::nullopt;

  json inner_targets = json::array();
  for (const json& k : key_nodes) inner_targets.push_back(json{{"ResTarget", {{"val", k}}}});
  inner_targets.push_back(json{{"ResTarget", {{"name", kValue}, {"val", rewriter.counted_node()}}}});
  json inner_keys = key_nodes;
  inner_keys.push_back(rewriter.counted_node());
  json grouped{{"targetList", std::move(inner_targets)},
               {"fromClause", select["fromClause"]},
               {"groupClause", std::move(inner_keys)},
               {"limitOption", "LIMIT_OPTION_DEFAULT"},
               {"op", "SETOP_NONE"}};
  if (select.contains("whereClause")) grouped["whereClause"] = select["whereClause"];
  json out{{"targetList", std::move(targets)},
           {"fromClause", json::array({json{{"RangeSubselect",
                                             {{"subquery", {{"SelectStmt", std::move(grouped)}}},
                                              {"alias", {{"aliasname", "tally_distinct"}}}}}}})},
           {"limitOption", "LIMIT_OPTION_DEFAULT"},
           {"op", "SETOP_NONE"}};
  if (!key_nodes.empty()) out["groupClause"] = key_nodes;
  if (!having.is_null()) out["havingClause"] = std::move(having);
  if (!sort.is_null()) out["sortClause"] = std::move(sort);
  for (const char* clause : {"limitCount", "limitOffset", "limitOption"}) {
    if (select.contains(clause)) out[clause] = select[clause];
  }
  return out;
}

std::shared_ptr<const SelectPlan> plan_distinct_counts(const json& select, PlanContext& pc) {
  if (pc.keep_distinct_counts) return nullptr;
  std::optional<json> grouped = distinct_count_as_grouping(select, pc);
  if (!grouped) return nullptr;
  PlanContext as_written = pc;
  as_written.keep_distinct_counts = true;
  std::shared_ptr<const SelectPlan> plan = plan_select(*grouped, pc);  // made here: ours to complete
  std::shared_ptr<const SelectPlan> written = plan_select(select, as_written);
  const bool engine_counts =
      written->table != nullptr && !written->aggregates.empty() &&
      std::all_of(written->aggregates.begin(), written->aggregates.end(),
                  [](const AggregateCall& call) { return engine_aggregation::map_aggregate(call).has_value(); });
  if (engine_counts) std::const_pointer_cast<SelectPlan>(plan)->distinct_rows_form = std::move(written);
  return plan;
}

}  // namespace tally::executor
