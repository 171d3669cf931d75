#include "executor/database.hpp"

#include <algorithm>
#include <filesystem>

#include "common/error.hpp"
#include "executor/session.hpp"
#include "executor/table_provider.hpp"
#ifdef TALLY_HAVE_INTROSPECTION
#include "executor/introspection/catalog_session.hpp"
#endif
#ifdef TALLY_HAVE_STORAGE
#include "catalog/catalog.hpp"
#include "executor/storage_tables.hpp"
#include "storage/table_store.hpp"
#endif

namespace tally::executor {
namespace {

class DatabaseImpl;

class SessionFactory final : public protocol::QueryHandlerFactory {
 public:
  explicit SessionFactory(DatabaseImpl* database) : database_(database) {}
  std::unique_ptr<protocol::QueryHandler> create(const protocol::SessionInfo& session) override;

 private:
  DatabaseImpl* database_;
};

class DatabaseImpl final : public Database {
 public:
  explicit DatabaseImpl(const config::Config& config) : config_(config), factory_(this) {}
  protocol::QueryHandlerFactory& handler_factory() override { return factory_; }
  const config::Config& config() const override { return config_; }
  TableProvider& tables() override { return *tables_; }
  storage::TableStore* store() override {
#ifdef TALLY_HAVE_STORAGE
    return store_.get();
#else
    return nullptr;
#endif
  }

  config::Config config_;
  SessionFactory factory_;
#ifdef TALLY_HAVE_STORAGE
  std::unique_ptr<catalog::Catalog> catalog_;
  std::unique_ptr<storage::TableStore> store_;
#endif
  std::unique_ptr<TableProvider> tables_;
};

std::unique_ptr<protocol::QueryHandler> SessionFactory::create(const protocol::SessionInfo& session) {
  const auto& databases = database_->config().databases;
  if (!databases.empty() && std::find(databases.begin(), databases.end(), session.database) == databases.end()) {
    throw Error(SqlState::invalid_catalog_name, "database \"" + session.database + "\" does not exist", Severity::fatal);
  }
  auto handler = std::make_unique<Session>(database_, &database_->tables(), session);
#ifdef TALLY_HAVE_INTROSPECTION
  // SELECTs over pg_catalog / information_schema go to executor/introspection.
  return introspection::wrap_session(std::move(handler), database_, session);
#else
  return handler;
#endif
}

}  // namespace

std::unique_ptr<Database> Database::open(const config::Config& config) {
  auto db = std::make_unique<DatabaseImpl>(config);
#ifdef TALLY_HAVE_STORAGE
  std::error_code ec;
  std::filesystem::create_directories(config.data_dir, ec);
  if (ec) {
    throw Error(SqlState::io_error, "could not create data directory \"" + config.data_dir + "\": " + ec.message());
  }
  db->catalog_ = std::make_unique<catalog::Catalog>(config.data_dir);
  storage::StoreOptions options;
  options.chunk_rows = config.chunk_rows;
  db->store_ = std::make_unique<storage::TableStore>(*db->catalog_, options);
  db->store_->recover();
  db->tables_ = std::make_unique<StorageTableProvider>(*db->store_);
#else
  db->tables_ = std::make_unique<MemoryTableProvider>();
#endif
  return db;
}

std::unique_ptr<Database> Database::open_with_tables(const config::Config& config,
                                                     std::unique_ptr<TableProvider> tables) {
  auto db = std::make_unique<DatabaseImpl>(config);
  db->tables_ = std::move(tables);
  return db;
}

}  // namespace tally::executor
