#include "executor/introspection/catalog_session.hpp"

#include "catalog/sequence_store.hpp"
#include "catalog/view_store.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "executor/database.hpp"
#include "executor/relation_references.hpp"
#include "executor/introspection/catalog_query.hpp"
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

int max_parameter(const json& node) {
  int n = 0;
  if (node.is_object()) {
    if (node.contains("ParamRef")) return node["ParamRef"].value("number", 0);
    for (const auto& [key, value] : node.items()) n = std::max(n, max_parameter(value));
  } else if (node.is_array()) {
    for (const auto& v : node) n = std::max(n, max_parameter(v));
  }
  return n;
}

// True when the parse tree names the relation (a RangeVar with that relname).
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

// Holds what the engine answers for a catalog SELECT until it has answered
// all of it: when the engine cannot (an error), the catalog evaluator answers
// instead and the client sees only that answer.
class BufferedWriter final : public tally::ResultWriter {
 public:
  void row_description(std::span<const tally::FieldDescription> fields) override {
    fields_.assign(fields.begin(), fields.end());
    described_ = true;
  }
  void data_row(std::span<const std::optional<std::string_view>> fields) override {
    std::vector<std::optional<std::string>> row;
    row.reserve(fields.size());
    for (const auto& f : fields) row.emplace_back(f ? std::optional<std::string>(std::string(*f)) : std::nullopt);
    rows_.push_back(std::move(row));
  }
  void command_complete(std::string_view tag) override { tag_ = std::string(tag); }
  void empty_query() override { empty_ = true; }
  void notice(const Error& notice) override { notices_.push_back(notice); }
  void parameter_status(std::string_view name, std::string_view value) override {
    statuses_.emplace_back(std::string(name), std::string(value));
  }
  tally::CopyInReader& copy_in(tally::Format, int) override {
    throw Error(SqlState::feature_not_supported, "COPY in a catalog query is not supported");
  }
  void copy_out_begin(tally::Format, int) override {
    throw Error(SqlState::feature_not_supported, "COPY in a catalog query is not supported");
  }
  void copy_out_data(std::string_view) override {}
  void copy_out_end() override {}

  void replay(tally::ResultWriter& out) const {
    for (const auto& n : notices_) out.notice(n);
    for (const auto& [name, value] : statuses_) out.parameter_status(name, value);
    if (empty_) out.empty_query();
    if (described_) out.row_description(fields_);
    std::vector<std::optional<std::string_view>> fields;
    for (const auto& row : rows_) {
      fields.clear();
      for (const auto& f : row) fields.emplace_back(f ? std::optional<std::string_view>(*f) : std::nullopt);
      out.data_row(fields);
    }
    if (tag_) out.command_complete(*tag_);
  }

 private:
  std::vector<tally::FieldDescription> fields_;
  bool described_ = false;
  bool empty_ = false;
  std::vector<std::vector<std::optional<std::string>>> rows_;
  std::optional<std::string> tag_;
  std::vector<Error> notices_;
  std::vector<std::pair<std::string, std::string>> statuses_;
};

// An error after which the catalog evaluator is not asked: the statement was
// cancelled or the session cannot run statements; anything else the engine
// rejects, the evaluator may still answer.
bool ends_statement(const Error& e) {
  return e.state() == SqlState::query_canceled || e.state() == SqlState::admin_shutdown ||
         e.state() == SqlState::in_failed_sql_transaction;
}

class CatalogPrepared final : public tally::PreparedStatement {
 public:
  CatalogPrepared(json select, std::vector<uint32_t> types, std::vector<tally::FieldDescription> fields)
      : select(std::move(select)), types(std::move(types)), fields(std::move(fields)) {}
  std::vector<uint32_t> parameter_types() const override { return types; }
  std::optional<std::vector<tally::FieldDescription>> result_fields() const override { return fields; }

  json select;
  std::vector<uint32_t> types;
  std::vector<tally::FieldDescription> fields;
};

// A catalog SELECT the engine prepared; `fallback` (null when the catalog
// evaluator cannot prepare it either) answers when the engine fails at Bind.
class EnginePrepared final : public tally::PreparedStatement {
 public:
  EnginePrepared(std::unique_ptr<tally::PreparedStatement> engine, std::unique_ptr<CatalogPrepared> fallback,
                 bool with_settings)
      : engine(std::move(engine)), fallback(std::move(fallback)), with_settings(with_settings) {}
  std::vector<uint32_t> parameter_types() const override { return engine->parameter_types(); }
  std::optional<std::vector<tally::FieldDescription>> result_fields() const override {
    return engine->result_fields();
  }

  std::unique_ptr<tally::PreparedStatement> engine;
  std::unique_ptr<CatalogPrepared> fallback;
  bool with_settings;
};

class CatalogPortal final : public tally::Portal {
 public:
  CatalogPortal(ResultSet result, std::vector<tally::Format> formats, std::shared_ptr<const types::TimeZone> zone)
      : result_(std::move(result)), formats_(std::move(formats)), zone_(std::move(zone)) {}
  std::optional<std::vector<tally::FieldDescription>> result_fields() const override {
    auto fields = result_.fields;
    for (size_t i = 0; i < fields.size(); ++i) fields[i].format = formats_[i];
    return fields;
  }
  bool execute(uint64_t max_rows, tally::ResultWriter& out) override {
    const types::TimeZoneScope zone_scope(zone_);  // timestamptz values print in the session's zone
    out.row_description(*result_fields());
    const size_t sent = stream_rows(result_, formats_, position_, max_rows, out);
    if (position_ < result_.rows) return false;
    out.command_complete("SELECT " + std::to_string(sent));
    return true;
  }

 private:
  ResultSet result_;
  std::vector<tally::Format> formats_;
  std::shared_ptr<const types::TimeZone> zone_;
  size_t position_ = 0;
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
                                      [&](const ParsedStatement& s) { return is_catalog_select(s, CatalogSource{}); });
    const bool settings = mentions && std::any_of(statements.begin(), statements.end(), [](const ParsedStatement& s) {
                            return names_relation(s.body(), "pg_settings");
                          });
    const CatalogSource source = mentions ? catalog_source(settings) : CatalogSource{};
    const bool any = mentions && std::any_of(statements.begin(), statements.end(),
                                             [&](const ParsedStatement& s) { return is_catalog_select(s, source); });
    if (!any) {
      inner_->simple_query(sql, out);
      return;
    }
    // Mixed with other statements: each runs on its own, in order.
    for (const auto& s : statements) {
      const size_t begin = static_cast<size_t>(s.location);
      const size_t length = s.length > 0 ? static_cast<size_t>(s.length) : sql.size() - begin;
      if (is_catalog_select(s, source)) {
        check_not_failed();
        const auto engine_error = run_on_engine(sql.substr(begin, length), source, out);
        if (!engine_error) continue;
        ResultSet result;
        const types::TimeZoneScope zone_scope(time_zone());
        try {
          result = run_catalog_query(s.body(), source, {});
        } catch (const Error&) {
          throw *engine_error;  // the engine's reason: the evaluator is only its fallback
        }
        out.row_description(result.fields);
        size_t position = 0;
        const size_t sent = stream_rows(result, std::vector<tally::Format>(result.fields.size(), tally::Format::text),
                                        position, 0, out);
        out.command_complete("SELECT " + std::to_string(sent));
      } else {
        inner_->simple_query(sql.substr(begin, length), out);
      }
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
    if (statements.size() != 1 || !is_catalog_select(statements[0], CatalogSource{})) {
      return inner_->prepare(sql, param_types);
    }
    const CatalogSource source = catalog_source(names_relation(statements[0].body(), "pg_settings"));
    if (!is_catalog_select(statements[0], source)) return inner_->prepare(sql, param_types);
    check_not_failed();
    const bool with_settings = names_relation(statements[0].body(), "pg_settings");
    relations_.set_source(source);
    std::unique_ptr<tally::PreparedStatement> engine;
    try {
      engine = inner_->prepare(sql, param_types);
    } catch (const Error& e) {
      if (ends_statement(e)) throw;
      const Error engine_error = e;
      try {
        return evaluator_prepare(statements[0].body(), source, param_types);
      } catch (const Error&) {
        throw engine_error;
      }
    }
    std::unique_ptr<CatalogPrepared> fallback;
    try {
      fallback = evaluator_prepare(statements[0].body(), source, param_types);
    } catch (const Error&) {
      // Only the engine answers this statement.
    }
    return std::make_unique<EnginePrepared>(std::move(engine), std::move(fallback), with_settings);
  }

  std::unique_ptr<CatalogPrepared> evaluator_prepare(const json& body, const CatalogSource& source,
                                                     std::span<const uint32_t> param_types) {
    const int count = std::max<int>(max_parameter(body), static_cast<int>(param_types.size()));
    std::vector<uint32_t> types(static_cast<size_t>(count), oid::text);
    std::vector<SqlType> sql_types;
    for (int i = 0; i < count; ++i) {
      const uint32_t given = static_cast<size_t>(i) < param_types.size() ? param_types[static_cast<size_t>(i)] : 0;
      auto id = given == 0 ? std::nullopt : type_from_oid(given);
      if (given != 0 && !id) {
        throw Error(SqlState::feature_not_supported, "parameter type " + std::to_string(given) + " in a catalog query");
      }
      // Unspecified parameters behave as untyped literals do.
      sql_types.push_back(id ? SqlType{*id} : SqlType{TypeId::unknown});
      if (id) types[static_cast<size_t>(i)] = given;
    }
    auto fields = catalog_query_fields(body, source, sql_types);
    return std::make_unique<CatalogPrepared>(body, std::move(types), std::move(fields));
  }

  std::unique_ptr<tally::Portal> bind(tally::PreparedStatement& statement,
                                         std::span<const tally::ParameterValue> parameters,
                                         std::span<const tally::Format> result_formats) override {
    if (auto* engine = dynamic_cast<EnginePrepared*>(&statement); engine != nullptr) {
      check_not_failed();
      relations_.set_source(catalog_source(engine->with_settings));
      try {
        return inner_->bind(*engine->engine, parameters, result_formats);
      } catch (const Error& e) {
        if (ends_statement(e) || engine->fallback == nullptr) throw;
      }
      return bind_evaluator(*engine->fallback, parameters, result_formats);
    }
    auto* prepared = dynamic_cast<CatalogPrepared*>(&statement);
    if (prepared == nullptr) return inner_->bind(statement, parameters, result_formats);
    return bind_evaluator(*prepared, parameters, result_formats);
  }

  std::unique_ptr<tally::Portal> bind_evaluator(CatalogPrepared& statement_ref,
                                                std::span<const tally::ParameterValue> parameters,
                                                std::span<const tally::Format> result_formats) {
    CatalogPrepared* prepared = &statement_ref;
    check_not_failed();
    const types::TimeZoneScope zone_scope(time_zone());
    if (parameters.size() != prepared->types.size()) {
      throw Error(SqlState::protocol_violation,
                  "bind message supplies " + std::to_string(parameters.size()) + " parameters, but prepared statement \"\" requires " +
                      std::to_string(prepared->types.size()));
    }
    std::vector<std::pair<SqlType, Value>> values;
    for (size_t i = 0; i < parameters.size(); ++i) {
      const auto id = type_from_oid(prepared->types[i]);
      const SqlType type{id.value_or(TypeId::text)};
      const auto& p = parameters[i];
      if (!p.bytes) {
        values.emplace_back(type, Null{});
      } else if (p.format == tally::Format::binary) {
        values.emplace_back(type, parse_binary(type, *p.bytes));
      } else if (type.id == TypeId::text) {
        values.emplace_back(SqlType{TypeId::unknown}, Value{*p.bytes});  // coerced where it is used
      } else {
        values.emplace_back(type, parse_text(type, *p.bytes));
      }
    }
    ResultSet result =
        run_catalog_query(prepared->select, catalog_source(names_relation(prepared->select, "pg_settings")), values);
    auto formats = expand_formats(result_formats, result.fields.size());
    return std::make_unique<CatalogPortal>(std::move(result), std::move(formats), time_zone());
  }

  tally::TransactionStatus transaction_status() const override { return inner_->transaction_status(); }
  void on_error() override { inner_->on_error(); }
  void sync() override { inner_->sync(); }
  std::optional<uint64_t> statement_timeout_ms() const override { return inner_->statement_timeout_ms(); }

 private:
  // The wrapped session's TimeZone, for what the evaluator reads and prints.
  std::shared_ptr<const types::TimeZone> time_zone() const {
    if (auto* session = dynamic_cast<SqlSession*>(inner_.get()); session != nullptr) return session->time_zone();
    return types::TimeZone::utc();
  }

  // Runs a catalog SELECT on the query engine over the catalog relations;
  // the engine's error (nothing written) when it rejects it.
  std::optional<Error> run_on_engine(std::string_view sql, const CatalogSource& source, tally::ResultWriter& out) {
    relations_.set_source(source);
    BufferedWriter buffer;
    try {
      inner_->simple_query(sql, buffer);
    } catch (const Error& e) {
      if (ends_statement(e)) throw;
      return e;
    }
    buffer.replay(out);
    return std::nullopt;
  }

  bool is_catalog_select(const ParsedStatement& s, const CatalogSource& source) const {
    return s.type() == "SelectStmt" && reads_catalog(s.body(), source);
  }

  void check_not_failed() const {
    if (inner_->transaction_status() == tally::TransactionStatus::failed) {
      throw Error(SqlState::in_failed_sql_transaction,
                  "current transaction is aborted, commands ignored until end of transaction block");
    }
  }

  CatalogSource catalog_source(bool with_settings = false) const {
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
