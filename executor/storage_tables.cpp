#include "executor/storage_tables.hpp"


#include "catalog/catalog.hpp"
#include "common/engine_counters.hpp"
#include "executor/cancel_point.hpp"
#include "storage/table_store.hpp"
#include "storage/write_transaction.hpp"

namespace tally::executor {
namespace {

class StorageTable final : public TableSnapshot {
 public:
  StorageTable(storage::TableStore& store, std::shared_ptr<const catalog::TableSnapshot> snapshot)
      : store_(store), snapshot_(std::move(snapshot)) {
    for (const auto& c : snapshot_->def.columns) columns_.push_back({c.name, c.type, c.not_null});
  }
  const std::string& name() const override { return snapshot_->def.name; }
  uint32_t oid() const override { return snapshot_->def.oid; }
  const std::vector<TableColumn>& columns() const override { return columns_; }
  size_t chunk_count() const override { return snapshot_->chunks.size(); }
  size_t chunk_rows(size_t chunk) const override { return snapshot_->chunks[chunk].rows; }
  std::shared_ptr<const storage::ChunkBatch> read_chunk(size_t chunk,
                                                        const std::vector<int>& column_indexes) const override {
    auto batch = store_.read_chunk(*snapshot_, chunk, column_indexes, current_cancel_token());
    // Counted here, where every query's chunk reads pass, for
    // /metrics and the statement's log line: rows, and the decoded bytes of
    // the columns asked for (values and validity).
    uint64_t bytes = 0;
    for (const auto& column : batch->columns) bytes += column.data.size() + column.validity.size();
    count_scan(batch->rows, bytes);
    return batch;
  }
  ChunkColumnStats stats(size_t chunk, int column) const override {
    ChunkColumnStats s;
    const auto& info = snapshot_->chunks[chunk];
    if (static_cast<size_t>(column) >= info.stats.size()) return s;
    const auto& cs = info.stats[static_cast<size_t>(column)];
    const TypeId id = columns_[static_cast<size_t>(column)].type.id;
    s.null_count = cs.null_count;
    s.hll = cs.hll;
    if (cs.has_min_max && is_float(id)) {
      s.float_known = true;
      s.min_float = cs.min_float;
      s.max_float = cs.max_float;
    }
    if (cs.has_min_max && !is_float(id)) {
      s.known = true;
      s.min = cs.min_int;
      s.max = cs.max_int;
    } else if (cs.null_count == info.rows) {
      s.known = true;  // all NULL: no range
      s.min = 0;
      s.max = -1;
    }
    return s;
  }
  std::shared_ptr<const storage::StringDictionary> dictionary(int column) const override {
    return store_.dictionary(*snapshot_, column, current_cancel_token());
  }
  std::vector<std::vector<int>> unique_keys() const override {
    std::vector<std::vector<int>> keys;
    for (const catalog::KeyConstraint& k : snapshot_->def.keys) {
      if (k.unique) keys.push_back(k.columns);
    }
    return keys;
  }
  // Catalog snapshots are immutable and replaced on every change.
  std::shared_ptr<const void> version() const override { return snapshot_; }

 private:
  storage::TableStore& store_;
  std::shared_ptr<const catalog::TableSnapshot> snapshot_;
  std::vector<TableColumn> columns_;
};

}  // namespace

std::shared_ptr<const TableSnapshot> StorageTableProvider::find_table(std::string_view schema, std::string_view name) {
  if (!schema.empty() && schema != "public") return nullptr;
  auto snapshot = store_.catalog().find_table(name, "public");
  if (!snapshot) return nullptr;
  return std::make_shared<StorageTable>(store_, std::move(snapshot));
}

std::shared_ptr<const TableSnapshot> TransactionTableProvider::find_table(std::string_view schema,
                                                                         std::string_view name) {
  storage::WriteTransaction* transaction = transaction_();
  if (transaction && (schema.empty() || schema == "public") && transaction->changed(name)) {
    auto snapshot = transaction->find_table(name);
    if (!snapshot) return nullptr;
    return std::make_shared<StorageTable>(store_, std::move(snapshot));
  }
  return committed_.find_table(schema, name);
}

}  // namespace tally::executor
