#include "executor/distinct_count_rewrite.hpp"

#include <string>

namespace tally::executor {

using json = nlohmann::json;

std::optional<json> distinct_count_as_grouping(const json& select) {
  for (const char* clause : {"groupClause", "havingClause", "distinctClause", "windowClause", "withClause",
                             "lockingClause", "intoClause", "valuesLists", "sortClause"}) {
    if (select.contains(clause)) return std::nullopt;
  }
  if (select.value("op", "SETOP_NONE") != "SETOP_NONE" || !select.contains("fromClause") ||
      !select.contains("targetList") || select["targetList"].size() != 1) {
    return std::nullopt;
  }
  const json& target = select["targetList"][0];
  if (!target.contains("ResTarget") || !target["ResTarget"].contains("val")) return std::nullopt;
  const json& value = target["ResTarget"]["val"];
  if (!value.contains("FuncCall")) return std::nullopt;
  const json& f = value["FuncCall"];
  if (!f.value("agg_distinct", false) || f.contains("over") || f.contains("agg_filter") || f.contains("agg_order") ||
      f.value("agg_within_group", false) || f.value("func_variadic", false) || !f.contains("args") ||
      f["args"].size() != 1 || !f["args"][0].contains("ColumnRef")) {
    return std::nullopt;
  }
  const json& names = f["funcname"];
  if (names.size() > 2 || (names.size() == 2 && names[0]["String"].value("sval", "") != "pg_catalog") ||
      names[names.size() - 1]["String"].value("sval", "") != "count") {
    return std::nullopt;
  }
  const json& column = f["args"][0];
  json grouped{{"targetList", json::array({json{{"ResTarget", {{"name", "tally_value"}, {"val", column}}}}})},
               {"fromClause", select["fromClause"]},
               {"groupClause", json::array({column})},
               {"limitOption", "LIMIT_OPTION_DEFAULT"},
               {"op", "SETOP_NONE"}};
  if (select.contains("whereClause")) grouped["whereClause"] = select["whereClause"];
  json value_ref{{"ColumnRef", {{"fields", json::array({json{{"String", {{"sval", "tally_value"}}}}})}, {"location", -1}}}};
  json count_values{{"FuncCall",
                     {{"funcname", json::array({json{{"String", {{"sval", "count"}}}}})},
                      {"args", json::array({std::move(value_ref)})},
                      {"funcformat", "COERCE_EXPLICIT_CALL"},
                      {"location", -1}}}};
  json out_target{{"ResTarget", {{"val", std::move(count_values)}}}};
  // PostgreSQL names the column count, as this count's; an alias stays.
  if (target["ResTarget"].contains("name")) out_target["ResTarget"]["name"] = target["ResTarget"]["name"];
  json out{{"targetList", json::array({std::move(out_target)})},
           {"fromClause", json::array({json{{"RangeSubselect",
                                             {{"subquery", {{"SelectStmt", std::move(grouped)}}},
                                              {"alias", {{"aliasname", "tally_distinct"}}}}}}})},
           {"limitOption", "LIMIT_OPTION_DEFAULT"},
           {"op", "SETOP_NONE"}};
  for (const char* clause : {"limitCount", "limitOffset", "limitOption"}) {
    if (select.contains(clause)) out[clause] = select[clause];
  }
  return out;
}

}  // namespace tally::executor
