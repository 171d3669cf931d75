#pragma once
// The SQL side of one tallyd: opened once at start-up from the Config, it owns
// the tables (catalog and storage), the engines and the settings defaults, and
// hands protocol/ a QueryHandlerFactory that creates one SqlSession per connection.
#include <memory>
#include <optional>

#include "config/config.hpp"
#include "executor/table_provider.hpp"
#include "common/query_handler.hpp"

namespace tally::catalog {
class SequenceStore;
class ViewStore;
}

namespace tally::storage {
class TableStore;
}

namespace tally {
class AggregateEngine;
class MemoryTracker;
}

namespace tally::executor {

class Settings;
struct ExecContext;

// The table snapshots a Database serves implement this too: what the
// aggregation step (engine_aggregator.cpp, by dynamic_cast) learns beyond
// TableSnapshot. Chunk ids name stored bytes for the life of the process
// (storage never reuses a chunk id within a table, nor a table oid), which is
// what lets the GPU engine keep device copies of chunk columns between queries.
class EngineTableSnapshot : public TableSnapshot {
 public:
  // The storage chunk id of chunk `chunk` of this snapshot, when known.
  virtual std::optional<uint64_t> chunk_id(size_t chunk) const = 0;
  // The database's GPU engine (nullptr: none), for planners whose
  // ExecContext does not carry it.
  virtual AggregateEngine* gpu_engine() const = 0;
};

class Database {
 public:
  // Opens (creating if needed) the catalog and table store in config.data_dir,
  // runs storage recovery, and prepares the engines: the GPU engine is
  // created once here (gpu::make_gpu_engine(config.gpu_device); none without
  // CUDA or a device, or when gpu_device == -2). Throws Error when the data
  // directory cannot be used.
  static std::unique_ptr<Database> open(const config::Config& config);
  // A database whose tables live in the given provider only (tests, benchmarks).
  static std::unique_ptr<Database> open_with_tables(const config::Config& config,
                                                    std::unique_ptr<TableProvider> tables);
  virtual ~Database() = default;

  // Creates the per-connection QueryHandler (executor::SqlSession).
  virtual tally::QueryHandlerFactory& handler_factory() = 0;
  // The configuration, its automatic memory sizes made numbers.
  virtual const config::Config& config() const = 0;
  // What all statements together hold (server_memory_budget): each
  // statement's tracker counts against it too.
  virtual std::shared_ptr<MemoryTracker> server_memory() const = 0;
  // The tables queries read.
  virtual TableProvider& tables() = 0;
  // The storage layer's table store; null for open_with_tables databases.
  virtual storage::TableStore* store() = 0;
  // The sequences (CREATE SEQUENCE, serial); null without storage.
  virtual catalog::SequenceStore* sequences() { return nullptr; }
  // The views (CREATE VIEW); null without storage.
  virtual catalog::ViewStore* views() { return nullptr; }
  // The GPU aggregation engine; null without a usable GPU.
  virtual AggregateEngine* gpu_engine() { return nullptr; }
  // Fills the engine fields of a query's ExecContext: the GPU engine, and the
  // forced GPU variant and launch configuration (tally.variant,
  // tally.launch_config) from the session's settings.
  virtual void prepare(ExecContext& context, const Settings& settings);
};

}  // namespace tally::executor
