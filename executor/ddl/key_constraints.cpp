#include "executor/ddl/key_constraints.hpp"

#include <algorithm>

namespace tally::executor::ddl {

bool relation_name_taken(const StatementContext& ctx, const std::string& name, const catalog::TableDef* also) {
  auto keys_have = [&](const catalog::TableDef& def) {
    return std::any_of(def.keys.begin(), def.keys.end(), [&](const auto& k) { return k.name == name; });
  };
  if (also && (also->name == name || keys_have(*also))) return true;
  if (ctx.find_table(name) || ctx.view_exists(name)) return true;
  for (const auto& snap : ctx.store.catalog().tables())
    if (keys_have(snap->def)) return true;
  return false;
}

std::string choose_key_name(const catalog::TableDef& def, const std::vector<int>& columns, const std::string& suffix,
                            const StatementContext& ctx) {
  std::string base = def.name;
  for (const int c : columns) base += "_" + def.columns[static_cast<size_t>(c)].name;
  // NAMEDATALEN - 1 bytes: PostgreSQL shortens the parts; here the joined name.
  constexpr size_t max_bytes = 63;
  std::string name = base.substr(0, max_bytes - suffix.size() - 1) + "_" + suffix;
  for (int n = 1; relation_name_taken(ctx, name, &def); ++n) {
    const std::string tail = suffix + std::to_string(n);
    name = base.substr(0, max_bytes - tail.size() - 1) + "_" + tail;
  }
  return name;
}

size_t add_key_constraint(catalog::TableDef& def, const nlohmann::json& constraint, int column,
                          const StatementContext& ctx) {
  const bool primary = constraint.value("contype", std::string()) == "CONSTR_PRIMARY";
  const int location = constraint.value("location", -1);
  if (constraint.contains("including"))
    throw std::move(Error(SqlState::feature_not_supported, "INCLUDE in a key is not supported by Tally")
                        .with_position(ctx.position(location)));
  if (constraint.value("nulls_not_distinct", false))
    throw std::move(Error(SqlState::feature_not_supported, "UNIQUE NULLS NOT DISTINCT is not supported by Tally")
                        .with_position(ctx.position(location)));
  catalog::KeyConstraint key;
  key.primary = primary;
  if (column >= 0) {
    key.columns.push_back(column);
  } else {
    for (const auto& k : constraint.value("keys", nlohmann::json::array())) {
      const std::string name = k.at("String").value("sval", std::string());
      const int index = def.find_column(name);
      if (index < 0)
        throw std::move(Error(SqlState::undefined_column, "column \"" + name + "\" named in key does not exist")
                            .with_position(ctx.position(location)));
      if (std::find(key.columns.begin(), key.columns.end(), index) == key.columns.end()) key.columns.push_back(index);
    }
  }
  if (primary && std::any_of(def.keys.begin(), def.keys.end(), [](const auto& k) { return k.primary; }))
    throw std::move(Error(SqlState::invalid_table_definition,
                          "multiple primary keys for table \"" + def.name + "\" are not allowed")
                        .with_position(ctx.position(location)));
  if (primary)
    for (const int c : key.columns) def.columns[static_cast<size_t>(c)].not_null = true;
  const std::string given = constraint.value("conname", std::string());
  if (!given.empty() && relation_name_taken(ctx, given, &def))
    throw Error(SqlState::duplicate_table, "relation \"" + given + "\" already exists");
  key.name = given.empty() ? choose_key_name(def, primary ? std::vector<int>{} : key.columns, primary ? "pkey" : "key", ctx)
                           : given;
  def.keys.push_back(std::move(key));
  return def.keys.size() - 1;
}

}  // namespace tally::executor::ddl
