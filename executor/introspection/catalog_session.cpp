#include "executor/introspection/catalog_session.hpp"

#include "catalog/sequence_store.hpp"
#include "catalog/view_store.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "executor/database.hpp"
#include "executor/relation_references.hpp"
#include "executor/introspection/catalog_relation_provider.hpp"
#include "executor/introspection/reg_name_catalog.hpp"
#include "executor/introspection/index_definitions.hpp"
#include "executor/introspection/object_description_catalog.hpp"
#include "executor/parser.hpp"
#include "executor/result_set.hpp"
#include "executor/server_settings.hpp"
#include "executor/settings.hpp"
#include "executor/sql_session.hpp"
#include "executor/value_codec.hpp"
#include "catalog/catalog.hpp"
#include "storage/table_store.hpp"

namespace tally::executor::introspection {
namespace {

using json = nlohmann::json;

// The database's tables (with their keys), sequences and views, as the
// catalog relations list them.
CatalogSource database_objects(Database* database) {
  CatalogSource source;
  if (database != nullptr && database->store() != nullptr) {
    for (const auto& snapshot : database->store()->catalog().tables()) {
      UserTable t;
      t.oid = snapshot->def.oid;
      t.schema = snapshot->def.schema;
      t.name = snapshot->def.name;
      for (const auto& c : snapshot->def.columns)
        t.columns.push_back({c.name, c.type, c.not_null, c.default_expr, c.identity});
      t.rows = snapshot->row_count();
      for (const auto& k : snapshot->def.keys)
        t.keys.push_back({k.name, k.primary, k.constraint, k.unique, k.columns, k.oid, k.index_oid});
      source.tables.push_back(std::move(t));
    }
  }
  if (database != nullptr && database->sequences() != nullptr) {
    for (const auto& d : database->sequences()->list()) {
      const auto value = database->sequences()->value(d.oid);
      source.sequences.push_back({d.oid, d.schema, d.name, SqlType{d.type}, d.start, d.increment, d.min, d.max,
                                  d.cache, d.cycle,
                                  value.is_called ? std::optional<int64_t>(value.last_value) : std::nullopt,
                                  d.owner_table, d.owner_column});
    }
  }
  if (database != nullptr && database->views() != nullptr) {
    for (const auto& v : database->views()->list()) {
      UserView view{v.oid, v.schema, v.name, {}, v.definition, v.depends};
      for (const auto& c : v.columns) view.columns.push_back({c.name, c.type});
      source.views.push_back(std::move(view));
    }
  }
  return source;
}

// Whether the parse tree names a catalog relation anywhere (an unqualified
// name a user table shadows too: the planner resolves it, this only decides
// whether the statement needs the catalog listed).
bool names_catalog_relation(const json& node) {
  return names_relation_where(node, [](const json& rv) {
    return is_catalog_relation(rv.value("schemaname", ""), rv.value("relname", ""));
  });
}

// Collects the rows of a SHOW ALL run on the wrapped session (its settings
// are private to it; SHOW ALL is the interface PostgreSQL clients have too).
class ShowAllWriter final : public tally::ResultWriter {
 public:
  std::vector<std::vector<std::string>> rows;
  void row_description(std::span<const tally::FieldDescription>) override {}
  void data_row(std::span<const std::optional<std::string_view>> fields) override {
    std::vector<std::string> row;
    for (const auto& f : fields) row.emplace_back(f ? std::string(*f) : std::string());
    rows.push_back(std::move(row));
  }
  void command_complete(std::string_view) override {}
  void empty_query() override {}
  void notice(const Error&) override {}
  void parameter_status(std::string_view, std::string_view) override {}
  tally::CopyInReader& copy_in(tally::Format, int) override {
    throw Error(SqlState::internal_error, "SHOW ALL does not copy");
  }
  void copy_out_begin(tally::Format, int) override {}
  void copy_out_data(std::string_view) override {}
  void copy_out_end() override {}
};

// A catalog SELECT the engine prepared; its Bind lists the catalog again.
class CatalogPrepared final : public tally::PreparedStatement {
 public:
  CatalogPrepared(std::unique_ptr<tally::PreparedStatement> engine, bool with_settings)
      : engine(std::move(engine)), with_settings(with_settings) {}
  std::vector<uint32_t> parameter_types() const override { return engine->parameter_types(); }
  std::optional<std::vector<tally::FieldDescription>> result_fields() const override {
    return engine->result_fields();
  }

  std::unique_ptr<tally::PreparedStatement> engine;
  bool with_settings;
};

class CatalogSession final : public tally::QueryHandler {
 public:
  CatalogSession(std::unique_ptr<tally::QueryHandler> inner, Database* database, tally::SessionInfo info)
      : inner_(std::move(inner)), database_(database), info_(std::move(info)) {
    // The engine plans catalog SELECTs over relations_, which set_source
    // fills before each one.
    if (auto* session = dynamic_cast<SqlSession*>(inner_.get()); session != nullptr) {
      session->set_system_relations(&relations_);
    }
    if (database_ != nullptr) relations_.set_sequences(database_->sequences());
  }

  std::vector<std::pair<std::string, std::string>> initial_parameter_status() override {
    return inner_->initial_parameter_status();
  }

  void simple_query(std::string_view sql, tally::ResultWriter& out) override {
    const auto cached = find_parsed(sql);
    std::vector<ParsedStatement> statements;
    try {
      statements = cached ? *cached : parse_sql(sql);
    } catch (const Error&) {
      inner_->simple_query(sql, out);  // the session reports the syntax error as it always does
      return;
    }
    // Most statements name no catalog relation: those skip listing the tables.
    const bool mentions = std::any_of(statements.begin(), statements.end(),
                                      [&](const ParsedStatement& s) { return names_catalog_relation(s.body()); });
    if (!mentions) {
      inner_->simple_query(sql, out);
      return;
    }
    // Each statement on its own, in order: one that reads the catalog lists
    // it as the statements before it left it.
    for (const auto& s : statements) {
      const size_t begin = static_cast<size_t>(s.location);
      const size_t length = s.length > 0 ? static_cast<size_t>(s.length) : sql.size() - begin;
      if (names_catalog_relation(s.body())) relations_.set_source(catalog_source(s.body()));
      inner_->simple_query(sql.substr(begin, length), out);
    }
  }

  std::unique_ptr<tally::PreparedStatement> prepare(std::string_view sql,
                                                       std::span<const uint32_t> param_types) override {
    std::vector<ParsedStatement> statements;
    try {
      statements = parse_sql(sql);
    } catch (const Error&) {
      return inner_->prepare(sql, param_types);
    }
    if (statements.size() != 1 || !names_catalog_relation(statements[0].body())) {
      return inner_->prepare(sql, param_types);
    }
    const bool with_settings = names_relation(statements[0].body(), "pg_settings");
    relations_.set_source(catalog_source(with_settings));
    return std::make_unique<CatalogPrepared>(inner_->prepare(sql, param_types), with_settings);
  }

  std::unique_ptr<tally::Portal> bind(tally::PreparedStatement& statement,
                                         std::span<const tally::ParameterValue> parameters,
                                         std::span<const tally::Format> result_formats) override {
    auto* prepared = dynamic_cast<CatalogPrepared*>(&statement);
    if (prepared == nullptr) return inner_->bind(statement, parameters, result_formats);
    relations_.set_source(catalog_source(prepared->with_settings));
    return inner_->bind(*prepared->engine, parameters, result_formats);
  }

  tally::TransactionStatus transaction_status() const override { return inner_->transaction_status(); }
  void on_error() override { inner_->on_error(); }
  void sync() override { inner_->sync(); }
  std::optional<uint64_t> statement_timeout_ms() const override { return inner_->statement_timeout_ms(); }

 private:

  // The catalog as a SELECT that names (or not) pg_settings reads it.
  CatalogSource catalog_source(const json& select) const {
    return catalog_source(names_relation(select, "pg_settings"));
  }

  CatalogSource catalog_source(bool with_settings) const {
    CatalogSource source = database_objects(database_);
    source.database = info_.database;
    source.user = info_.user;
    if (with_settings) source.settings = session_settings();
    return source;
  }

  // The wrapped session's settings (SHOW ALL) with their defaults.
  std::vector<SettingValue> session_settings() const {
    ShowAllWriter writer;
    try {
      inner_->simple_query("SHOW ALL", writer);
    } catch (const Error&) {
      return {};  // only in a failed transaction, which the catalog query reports itself
    }
    // What RESET returns to: the registry's value or this server's configured one.
    Settings defaults;
    if (database_) apply_server_settings(defaults, database_->config());
    std::vector<SettingValue> out;
    for (const auto& row : writer.rows) {
      if (row.size() < 3) continue;
      out.push_back({row[0], row[1], defaults.get(row[0]).value_or(row[1]), row[2]});
    }
    return out;
  }

  CatalogRelationProvider relations_;
  std::unique_ptr<tally::QueryHandler> inner_;
  Database* database_;
  tally::SessionInfo info_;
};

}  // namespace

std::unique_ptr<tally::QueryHandler> wrap_session(std::unique_ptr<tally::QueryHandler> session,
                                                     Database* database, const tally::SessionInfo& info) {
  // The reg* types print and read the names this database holds.
  install_reg_names(catalog_reg_names(database));
  // pg_get_indexdef and pg_get_constraintdef print its indexes and keys.
  install_key_definitions(catalog_key_definitions(database));
  // pg_describe_object names its relations, columns, keys and the built-in objects.
  install_object_descriptions(catalog_object_descriptions([database] { return database_objects(database); }));
  return std::make_unique<CatalogSession>(std::move(session), database, info);
}

}  // namespace tally::executor::introspection
