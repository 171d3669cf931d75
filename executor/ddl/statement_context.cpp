#include "executor/ddl/statement_context.hpp"

#include <ctime>

#include "catalog/view_store.hpp"

namespace tally::executor {

int StatementContext::position(int location) const {
  if (location < 0 || static_cast<size_t>(location) > query_text.size()) return 0;
  int chars = 0;
  for (int i = 0; i < location; ++i) chars += (static_cast<uint8_t>(query_text[static_cast<size_t>(i)]) & 0xC0) != 0x80;
  return chars + 1;
}

bool StatementContext::view_exists(std::string_view name) const { return views && views->find(name).has_value(); }

std::shared_ptr<const catalog::TableSnapshot> StatementContext::find_table(std::string_view name) const {
  return transaction ? transaction->find_table(name) : store.catalog().find_table(name, "public");
}

std::shared_ptr<const catalog::TableSnapshot> StatementContext::create_table(catalog::TableDef def,
                                                                             bool if_not_exists) const {
  return transaction ? transaction->create_table(std::move(def), if_not_exists)
                     : store.create_table(std::move(def), if_not_exists);
}

void StatementContext::drop_table(uint32_t oid) const {
  if (transaction) {
    transaction->drop_table(oid);
  } else {
    store.drop_table(oid, cancel);
  }
}

void StatementContext::truncate_table(uint32_t oid) const {
  if (transaction) {
    transaction->truncate_table(oid);
  } else {
    store.truncate_table(oid, cancel);
  }
}

std::shared_ptr<const catalog::TableSnapshot> StatementContext::alter_table(
    uint32_t oid, const std::function<catalog::TableDef(const catalog::TableSnapshot&)>& change) const {
  return transaction ? transaction->alter_table(oid, change) : store.alter_table(oid, change, cancel);
}

std::unique_ptr<storage::TableAppender> StatementContext::begin_append(uint32_t oid) const {
  return transaction ? transaction->begin_append(oid) : store.begin_append(oid, cancel);
}

void StatementContext::append_small(uint32_t oid, const std::function<void(storage::TableAppender&)>& fill) const {
  if (!transaction) {
    store.append_grouped(oid, fill, cancel);
    return;
  }
  auto appender = transaction->begin_append(oid);
  fill(*appender);
  appender->commit();
}

int64_t StatementContext::statement_time() const {
  if (!now_micros) {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    constexpr int64_t unix_to_2000 = 946684800;
    now_micros = (static_cast<int64_t>(ts.tv_sec) - unix_to_2000) * 1'000'000 + ts.tv_nsec / 1000;
  }
  return *now_micros;
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
  auto snap = ctx.find_table(name);
  // PostgreSQL writes through simple views; Tally's views are read-only.
  if (!snap && ctx.view_exists(name))
    throw std::move(Error(SqlState::feature_not_supported, "\"" + name + "\" is a view, which Tally cannot change")
                        .with_position(ctx.position(location)));
  if (!snap)
    throw std::move(Error(SqlState::undefined_table, "relation \"" + name + "\" does not exist")
                        .with_position(ctx.position(location)));
  return snap;
}

}  // namespace tally::executor
