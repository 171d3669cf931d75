#include "executor/ddl/statement_context.hpp"

namespace tally::executor {

int StatementContext::position(int location) const {
  if (location < 0 || static_cast<size_t>(location) > query_text.size()) return 0;
  int chars = 0;
  for (int i = 0; i < location; ++i) chars += (static_cast<uint8_t>(query_text[static_cast<size_t>(i)]) & 0xC0) != 0x80;
  return chars + 1;
}

std::string relation_name(const nlohmann::json& range_var) { return range_var.value("relname", std::string()); }

int64_t const_int(const nlohmann::json& ival) {
  if (ival.is_object()) {
    auto it = ival.find("ival");
    if (it != ival.end() && it->is_number_integer()) return it->get<int64_t>();
    return 0;
  }
  return ival.is_number_integer() ? ival.get<int64_t>() : 0;
}

std::shared_ptr<const catalog::TableSnapshot> resolve_relation(const StatementContext& ctx,
                                                               const nlohmann::json& range_var, bool with_position) {
  const std::string name = relation_name(range_var);
  const std::string schema = range_var.value("schemaname", std::string("public"));
  const int location = with_position ? range_var.value("location", -1) : -1;
  if (range_var.contains("catalogname")) {
    throw std::move(Error(SqlState::feature_not_supported, "cross-database references are not implemented: " +
                                                               range_var["catalogname"].get<std::string>() + "." +
                                                               schema + "." + name)
                        .with_position(ctx.position(location)));
  }
  if (schema != "public") {
    if (schema == "pg_catalog" || schema == "information_schema")
      throw std::move(Error(SqlState::feature_not_supported, "system catalogs cannot be modified")
                          .with_position(ctx.position(location)));
    throw std::move(Error(SqlState::invalid_schema_name, "schema \"" + schema + "\" does not exist")
                        .with_position(ctx.position(location)));
  }
  auto snap = ctx.store.catalog().find_table(name, schema);
  if (!snap)
    throw std::move(Error(SqlState::undefined_table, "relation \"" + name + "\" does not exist")
                        .with_position(ctx.position(location)));
  return snap;
}

}  // namespace tally::executor
