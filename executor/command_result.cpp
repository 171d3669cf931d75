#include "executor/command_result.hpp"

#include "common/error.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor {

using nlohmann::json;

std::string constant_text(const json& node) {
  if (node.contains("A_Const")) {
    const auto& c = node["A_Const"];
    if (c.contains("sval")) return c["sval"].value("sval", "");
    if (c.contains("ival")) return std::to_string(c["ival"].value("ival", int64_t{0}));
    if (c.contains("fval")) return c["fval"].value("fval", "");
    if (c.contains("boolval")) return c["boolval"].value("boolval", false) ? "on" : "off";
  }
  if (node.contains("TypeCast")) return constant_text(node["TypeCast"]["arg"]);
  throw Error(SqlState::feature_not_supported, "this SET value form is not supported");
}

ResultSet command_result(std::string tag) {
  ResultSet r;
  r.tag = std::move(tag);
  r.returns_rows = false;
  return r;
}

ResultSet text_rows(const std::vector<std::string>& names,
                    const std::vector<std::vector<std::string>>& rows) {
  ResultSet r;
  r.tag = "SHOW";
  for (size_t c = 0; c < names.size(); ++c) {
    r.fields.push_back(describe_column(names[c], {TypeId::text}));
    Vector v({TypeId::text});
    for (const auto& row : rows) v.push(row[c]);
    r.columns.push_back(std::move(v));
  }
  r.rows = rows.size();
  return r;
}

}  // namespace tally::executor
