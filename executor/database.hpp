#pragma once
// The SQL side of one tallyd: opened once at start-up from the Config, it owns
// the tables (catalog and storage), the engines and the settings defaults, and
// hands protocol/ a QueryHandlerFactory that creates one Session per connection.
#include <memory>

#include "config/config.hpp"
#include "protocol/query_handler.hpp"

namespace tally::executor {

class TableProvider;

class Database {
 public:
  // Opens the data directory of config (catalog, storage) and the engines.
  // Throws Error when the data directory cannot be used.
  static std::unique_ptr<Database> open(const config::Config& config);
  virtual ~Database() = default;

  // Creates the per-connection QueryHandler (executor::Session).
  virtual protocol::QueryHandlerFactory& handler_factory() = 0;
  virtual const config::Config& config() const = 0;
  // The tables queries read (the storage layer's, or in-memory ones).
  virtual TableProvider& tables() = 0;
};

}  // namespace tally::executor
