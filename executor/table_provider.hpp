#pragma once
// How the executor sees tables: a consistent snapshot of one table's
// definition and chunks, read chunk by chunk as storage::ChunkBatch. The
// storage layer's catalog/reader is adapted to this interface (see
// database.cpp); tests and benchmarks can also use MemoryTableProvider.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/sql_type.hpp"
#include "storage/column_vector.hpp"

namespace tally::executor {

struct TableColumn {
  std::string name;
  SqlType type;
  bool not_null = false;
};

// Per-chunk column statistics when storage has them (integer-like columns).
struct ChunkColumnStats {
  bool known = false;
  int64_t min = 0;
  int64_t max = 0;
  uint64_t null_count = 0;
  // float4/float8 columns: the non-NaN values' range (`known` stays false).
  bool float_known = false;
  double min_float = 0;
  double max_float = 0;
  // The chunk's HyperLogLog sketch of the column in executor/estimate's
  // serialized form (empty when storage has none); valid while the snapshot is.
  std::span<const uint8_t> hll;
};

class TableSnapshot {
 public:
  virtual ~TableSnapshot() = default;
  virtual const std::string& name() const = 0;
  virtual uint32_t oid() const = 0;
  virtual const std::vector<TableColumn>& columns() const = 0;
  virtual size_t chunk_count() const = 0;
  virtual size_t chunk_rows(size_t chunk) const = 0;
  // The chunk's columns, in the order of `column_indexes` (table column numbers).
  virtual std::shared_ptr<const storage::ChunkBatch> read_chunk(size_t chunk,
                                                                const std::vector<int>& column_indexes) const = 0;
  virtual ChunkColumnStats stats(size_t /*chunk*/, int /*column*/) const { return {}; }
  // The dictionary every chunk's codes of text column `column` index, without
  // reading a chunk; null when the table keeps none (then a chunk read brings it).
  virtual std::shared_ptr<const storage::StringDictionary> dictionary(int /*column*/) const { return nullptr; }
  // The identity of what this snapshot shows (definition, chunks and their
  // statistics): two snapshots of a table with the same non-null version
  // show the same thing. Null when unknown (a table that changes in place):
  // then no plan over it outlives its statement (the shared analyses' reuse).
  virtual std::shared_ptr<const void> version() const { return nullptr; }
  // The column sets no two rows share values of (PRIMARY KEY, UNIQUE, a
  // unique index: enforced on every write; rows with a NULL in one excepted).
  virtual std::vector<std::vector<int>> unique_keys() const { return {}; }
  uint64_t row_count() const {
    uint64_t n = 0;
    for (size_t i = 0; i < chunk_count(); ++i) n += chunk_rows(i);
    return n;
  }
};

class TableProvider {
 public:
  virtual ~TableProvider() = default;
  // nullptr when the table does not exist. schema is "public" or empty.
  virtual std::shared_ptr<const TableSnapshot> find_table(std::string_view schema, std::string_view name) = 0;
};

// Tables held in memory: used by unit tests, benchmarks and CREATE TABLE AS
// until storage is wired in.
class MemoryTable final : public TableSnapshot {
 public:
  MemoryTable(std::string name, std::vector<TableColumn> columns, uint32_t oid = 16384)
      : name_(std::move(name)), columns_(std::move(columns)), oid_(oid) {}
  const std::string& name() const override { return name_; }
  uint32_t oid() const override { return oid_; }
  const std::vector<TableColumn>& columns() const override { return columns_; }
  size_t chunk_count() const override { return chunks_.size(); }
  size_t chunk_rows(size_t chunk) const override { return chunks_[chunk]->rows; }
  std::shared_ptr<const storage::ChunkBatch> read_chunk(size_t chunk,
                                                        const std::vector<int>& column_indexes) const override;
  ChunkColumnStats stats(size_t chunk, int column) const override;
  // Appends a chunk holding every column of the table.
  void append(std::shared_ptr<const storage::ChunkBatch> chunk);

 private:
  std::string name_;
  std::vector<TableColumn> columns_;
  uint32_t oid_;
  std::vector<std::shared_ptr<const storage::ChunkBatch>> chunks_;
  std::vector<std::vector<ChunkColumnStats>> stats_;
};

class MemoryTableProvider final : public TableProvider {
 public:
  std::shared_ptr<const TableSnapshot> find_table(std::string_view schema, std::string_view name) override;
  void put(std::shared_ptr<MemoryTable> table);

 private:
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<MemoryTable>, std::less<>> tables_;
};

}  // namespace tally::executor
