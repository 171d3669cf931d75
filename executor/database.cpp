#include "executor/database.hpp"

#include "common/error.hpp"
#include "executor/session.hpp"
#include "executor/table_provider.hpp"

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
  TableProvider& tables() override { return tables_; }

 private:
  config::Config config_;
  SessionFactory factory_;
  MemoryTableProvider tables_;
};

std::unique_ptr<protocol::QueryHandler> SessionFactory::create(const protocol::SessionInfo& session) {
  const auto& databases = database_->config().databases;
  if (!databases.empty() && std::find(databases.begin(), databases.end(), session.database) == databases.end()) {
    throw Error(SqlState::invalid_catalog_name, "database \"" + session.database + "\" does not exist", Severity::fatal);
  }
  return std::make_unique<Session>(database_, &database_->tables(), session);
}

}  // namespace

std::unique_ptr<Database> Database::open(const config::Config& config) {
  return std::make_unique<DatabaseImpl>(config);
}

}  // namespace tally::executor
