#include "executor/database.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <mutex>
#include <thread>

#include <unistd.h>

#include "common/error.hpp"
#include "common/aggregate_engine.hpp"
#include "common/host_memory.hpp"
#include "common/memory_tracker.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/select_plan.hpp"
#include "executor/sql_session.hpp"
#include "executor/settings.hpp"
#include "executor/table_provider.hpp"
#include "gpu/engine/gpu_engine.hpp"
#include "gpu/engine/multi_device_engine.hpp"
#include "executor/introspection/catalog_session.hpp"
#include "catalog/catalog.hpp"
#include "catalog/sequence_store.hpp"
#include "catalog/view_store.hpp"
#include "executor/storage_tables.hpp"
#include "storage/table_store.hpp"
#include "executor/dml/unique_keys.hpp"
#include "executor/tuning_store_catalog.hpp"
#include "executor/view_definitions.hpp"
#include "executor/ddl/view_deparse.hpp"

namespace tally::catalog {
class Catalog;
}

namespace tally::executor {
namespace {

class DatabaseImpl;

class SessionFactory final : public tally::QueryHandlerFactory {
 public:
  explicit SessionFactory(DatabaseImpl* database) : database_(database) {}
  std::unique_ptr<tally::QueryHandler> create(const tally::SessionInfo& session) override;

 private:
  DatabaseImpl* database_;
};

// A table snapshot that knows its storage chunk ids and the database's GPU
// engine (EngineTableSnapshot), wrapping the provider's own snapshot.
class EngineTable final : public EngineTableSnapshot {
 public:
  EngineTable(std::shared_ptr<const TableSnapshot> inner, std::vector<uint64_t> chunk_ids, AggregateEngine* gpu)
      : inner_(std::move(inner)), chunk_ids_(std::move(chunk_ids)), gpu_(gpu) {}
  const std::string& name() const override { return inner_->name(); }
  uint32_t oid() const override { return inner_->oid(); }
  const std::vector<TableColumn>& columns() const override { return inner_->columns(); }
  size_t chunk_count() const override { return inner_->chunk_count(); }
  size_t chunk_rows(size_t chunk) const override { return inner_->chunk_rows(chunk); }
  ChunkColumnStats stats(size_t chunk, int column) const override { return inner_->stats(chunk, column); }
  std::shared_ptr<const storage::StringDictionary> dictionary(int column) const override {
    return inner_->dictionary(column);
  }
  std::shared_ptr<const storage::ChunkBatch> read_chunk(size_t chunk, const std::vector<int>& columns) const override {
    return inner_->read_chunk(chunk, columns);
  }
  std::optional<uint64_t> chunk_id(size_t chunk) const override {
    if (chunk < chunk_ids_.size()) return chunk_ids_[chunk];
    return std::nullopt;
  }
  AggregateEngine* gpu_engine() const override { return gpu_; }
  std::vector<std::vector<int>> unique_keys() const override { return inner_->unique_keys(); }
  // Without chunk ids (the catalog changed while this was made) the GPU's
  // column cache cannot name this snapshot's chunks: not worth keeping.
  std::shared_ptr<const void> version() const override {
    return chunk_ids_.empty() && inner_->chunk_count() > 0 ? nullptr : inner_->version();
  }

 private:
  std::shared_ptr<const TableSnapshot> inner_;
  std::vector<uint64_t> chunk_ids_;  // empty: unknown
  AggregateEngine* gpu_;
};

// Wraps the tables of a database that has a GPU engine so that snapshots are
// EngineTables. Chunk ids come from the catalog: its snapshot is read before
// and after the provider's, and used only when both are the same object —
// catalog snapshots are immutable and replaced on every change, and chunk ids
// are never reused, so the provider's snapshot then has exactly those chunks.
// The engines name a stored column by (table, chunk id, column index); that
// names the same bytes for the life of the process only while each column's
// index is its file slot, which a DROP COLUMN of any column but the last
// ends (the columns after it move down, their files stay). Such a table's
// snapshots give no chunk ids: the GPU reads them without its column cache.
bool columns_at_their_slots(const catalog::TableDef& def) {
  for (size_t c = 0; c < def.columns.size(); ++c)
    if (def.slot(c) != static_cast<int32_t>(c)) return false;
  return true;
}

class EngineTableProvider final : public TableProvider {
 public:
  EngineTableProvider(std::unique_ptr<TableProvider> inner, AggregateEngine* gpu, catalog::Catalog* catalog)
      : inner_(std::move(inner)), gpu_(gpu), catalog_(catalog) {}
  std::shared_ptr<const TableSnapshot> find_table(std::string_view schema, std::string_view name) override {
    std::vector<uint64_t> ids;
    auto before = catalog_ ? catalog_->find_table(name, "public") : nullptr;
    auto table = inner_->find_table(schema, name);
    auto after = catalog_ ? catalog_->find_table(name, "public") : nullptr;
    if (table && before && before == after && before->def.oid == table->oid() &&
        before->chunks.size() == table->chunk_count() && columns_at_their_slots(before->def)) {
      for (const auto& c : before->chunks) ids.push_back(c.chunk_id);
    }
    if (!table) return nullptr;
    return std::make_shared<EngineTable>(std::move(table), std::move(ids), gpu_);
  }

 private:
  std::unique_ptr<TableProvider> inner_;
  AggregateEngine* gpu_;
  catalog::Catalog* catalog_;  // null without storage
};

// The configuration with its automatic memory sizes (0) made numbers: the
// chunk cache a third of the host's memory, all statements together three
// quarters of the rest, one statement as much as all. Without a server
// budget, statements that each fit their own could together outgrow the
// host, and the kernel would kill the server for them.
config::Config with_memory_sizes(config::Config config) {
  const uint64_t host = host_memory_bytes();
  if (config.chunk_cache_bytes == 0) config.chunk_cache_bytes = host / 3;
  if (config.server_memory_budget == 0) {
    config.server_memory_budget = std::max<uint64_t>(host > config.chunk_cache_bytes ? host - config.chunk_cache_bytes : 0,
                                                     uint64_t{1} << 30) / 4 * 3;
  }
  if (config.cpu_memory_budget == 0) config.cpu_memory_budget = config.server_memory_budget;
  return config;
}

class DatabaseImpl final : public Database {
 public:
  explicit DatabaseImpl(const config::Config& config)
      : config_(with_memory_sizes(config)),
        server_memory_(std::make_shared<MemoryTracker>(config_.server_memory_budget, nullptr, "server_memory_budget")),
        factory_(this) {}
  std::shared_ptr<MemoryTracker> server_memory() const override { return server_memory_; }
  tally::QueryHandlerFactory& handler_factory() override { return factory_; }
  const config::Config& config() const override { return config_; }
  TableProvider& tables() override { return *tables_; }
  storage::TableStore* store() override {
    return store_.get();
  }
  AggregateEngine* gpu_engine() override { return gpu_.get(); }
  catalog::SequenceStore* sequences() override { return sequences_.get(); }
  catalog::ViewStore* views() override { return views_.get(); }

  // The ordinals gpu_devices names (the setting checked its form): empty for "all".
  static std::vector<int> device_list(const std::string& text) {
    std::vector<int> ordinals;
    if (text == "all") return ordinals;
    for (size_t at = 0; at <= text.size();) {
      const size_t comma = std::min(text.find(',', at), text.size());
      ordinals.push_back(std::atoi(text.substr(at, comma - at).c_str()));
      at = comma + 1;
    }
    return ordinals;
  }
  // The GPU engine for this configuration, or none (logged, never fatal:
  // tallyd runs unchanged without a GPU).
  void open_gpu() {
    if (config_.gpu_device == -2) return;
    try {
      gpu::GpuEngineOptions options;
      options.memory_budget = config_.gpu_memory_budget;
      options.column_cache_bytes = config_.column_cache_bytes;
      options.tuning = config_.tuning;
      // Several devices' runs are finalized, and their partial states merged,
      // on the CPU engine's pool.
      options.host_tasks = [](int threads, size_t tasks, const std::function<void(size_t)>& run) {
        const int used = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        cpu::parallel_tasks(used, tasks, [&](int, size_t task) { run(task); });
      };
      if (config_.gpu_devices.empty()) gpu_ = gpu::make_gpu_engine(config_.gpu_device, options);
      else gpu_ = gpu::make_multi_device_engine(device_list(config_.gpu_devices), options);
    } catch (const Error& e) {
      std::cerr << "tally: GPU engine unavailable, using the CPU engine: " << e.what() << "\n";
      gpu_.reset();
    }
  }
  // Puts the provider behind EngineTableProvider when there is a GPU engine.
  void wrap_tables(catalog::Catalog* catalog) {
    if (gpu_) tables_ = std::make_unique<EngineTableProvider>(std::move(tables_), gpu_.get(), catalog);
  }

  config::Config config_;
  std::shared_ptr<MemoryTracker> server_memory_;
  SessionFactory factory_;
  std::unique_ptr<gpu::GpuEngine> gpu_;
  std::unique_ptr<catalog::Catalog> catalog_;
  std::unique_ptr<storage::TableStore> store_;
  std::unique_ptr<catalog::SequenceStore> sequences_;
  std::unique_ptr<catalog::ViewStore> views_;
  std::unique_ptr<TableProvider> tables_;
};

// The views of a database with storage, for pg_get_viewdef: the simple
// ones printed as PostgreSQL deparses them (pretty or not), the others as
// CREATE VIEW stored them.
class StoredViewDefinitions final : public ViewDefinitions {
 public:
  StoredViewDefinitions(const catalog::ViewStore& views, const catalog::Catalog& catalog)
      : views_(views), catalog_(catalog) {}
  std::optional<std::string> definition(uint32_t oid, bool pretty, bool qualify) const override {
    for (const auto& v : views_.list()) {
      if (v.oid != oid) continue;
      if (v.depends.size() == 1) {
        if (const auto table = catalog_.find_table(v.depends.front())) {
          if (auto printed =
                  ddl::deparse_view(nlohmann::json::parse(v.query), table->def, v.columns, pretty, qualify))
            return printed;
        }
      }
      return v.definition;
    }
    return std::nullopt;
  }
  std::optional<uint32_t> oid_of(std::string_view name) const override {
    if (const auto v = views_.find(name)) return v->oid;
    return std::nullopt;
  }

 private:
  const catalog::ViewStore& views_;
  const catalog::Catalog& catalog_;
};

std::unique_ptr<tally::QueryHandler> SessionFactory::create(const tally::SessionInfo& session) {
  const auto& databases = database_->config().databases;
  if (!databases.empty() && std::find(databases.begin(), databases.end(), session.database) == databases.end()) {
    throw Error(SqlState::invalid_catalog_name, "database \"" + session.database + "\" does not exist", Severity::fatal);
  }
  if (database_->views() != nullptr && database_->store() != nullptr)
    install_view_definitions(
        std::make_shared<StoredViewDefinitions>(*database_->views(), database_->store()->catalog()));
  auto handler = std::make_unique<SqlSession>(database_, &database_->tables(), session);
  // SELECTs over pg_catalog / information_schema go to executor/introspection.
  return introspection::wrap_session(std::move(handler), database_, session);
}

}  // namespace

void Database::prepare(ExecContext& context, const Settings& settings) {
  context.gpu_engine = gpu_engine();
  context.variant = settings.get("tally.variant").value_or("");
  context.lookup_joins = settings.get("tally.lookup_joins").value_or("auto");
  context.launch_config = settings.get("tally.launch_config").value_or("");
  context.jit = settings.get("jit").value_or("on") == "on";
}

std::unique_ptr<Database> Database::open(const config::Config& config) {
  auto db = std::make_unique<DatabaseImpl>(config);
  std::error_code ec;
  std::filesystem::create_directories(config.data_dir, ec);
  if (ec) {
    throw Error(SqlState::io_error, "could not create data directory \"" + config.data_dir + "\": " + ec.message());
  }
  db->catalog_ = std::make_unique<catalog::Catalog>(config.data_dir);
  storage::StoreOptions options;
  options.chunk_rows = config.chunk_rows;
  // Every statement's projection of a chunk is cached apart (TPC-H's
  // queries read lineitem through a dozen projections): a budget below
  // the working set makes LRU miss on every read of a repeated workload.
  options.cache_bytes = db->config().chunk_cache_bytes;
  db->store_ = std::make_unique<storage::TableStore>(*db->catalog_, options);
  db->store_->recover();
  dml::install_unique_key_checks(*db->store_);
  db->sequences_ = std::make_unique<catalog::SequenceStore>(*db->catalog_);
  db->views_ = std::make_unique<catalog::ViewStore>(*db->catalog_);
  db->tables_ = std::make_unique<StorageTableProvider>(*db->store_);
  db->open_gpu();
  db->wrap_tables(db->catalog_.get());
  // The GPU engine's tuning cache lives in the catalog file; queries find it
  // through process_tuning_store() (common/aggregate_engine.hpp).
  if (db->gpu_) {
    try {
      db->gpu_->preload_tuning(install_process_tuning_store(db->catalog_->database_path()), config.chunk_rows);
    } catch (const Error& e) {
      std::cerr << "tally: GPU tuning cache unavailable, tuning from rules only: " << e.what() << "\n";
    }
  }
  return db;
}

std::unique_ptr<Database> Database::open_with_tables(const config::Config& config,
                                                     std::unique_ptr<TableProvider> tables) {
  auto db = std::make_unique<DatabaseImpl>(config);
  db->tables_ = std::move(tables);
  db->open_gpu();
  db->wrap_tables(nullptr);
  return db;
}

}  // namespace tally::executor
