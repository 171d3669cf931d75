#pragma once
// The SQL side of one tallyd: opened once at start-up from the Config, it owns
// the tables (catalog and storage), the engines and the settings defaults, and
// hands protocol/ a QueryHandlerFactory that creates one Session per connection.
#include <memory>

#include "config/config.hpp"
#include "protocol/query_handler.hpp"

namespace tally::storage {
class TableStore;
}

namespace tally::executor {

class TableProvider;

class Database {
 public:
  // Opens (creating if needed) the catalog and table store in config.data_dir,
  // runs storage recovery, and prepares the engines. Throws Error when the
  // data directory cannot be used.
  static std::unique_ptr<Database> open(const config::Config& config);
  // A database whose tables live in the given provider only (tests, benchmarks).
  static std::unique_ptr<Database> open_with_tables(const config::Config& config,
                                                    std::unique_ptr<TableProvider> tables);
  virtual ~Database() = default;

  // Creates the per-connection QueryHandler (executor::Session).
  virtual protocol::QueryHandlerFactory& handler_factory() = 0;
  virtual const config::Config& config() const = 0;
  // The tables queries read.
  virtual TableProvider& tables() = 0;
  // The storage layer's table store; null for open_with_tables databases.
  virtual storage::TableStore* store() = 0;
};

}  // namespace tally::executor
