#pragma once
// Adapts the storage layer (catalog snapshots + TableStore's decoded-chunk
// reader) to the executor's TableProvider interface.
#include <functional>
#include <memory>

#include "executor/table_provider.hpp"

namespace tally::storage {
class TableStore;
class WriteTransaction;
}

namespace tally::executor {

class StorageTableProvider final : public TableProvider {
 public:
  explicit StorageTableProvider(storage::TableStore& store) : store_(store) {}
  std::shared_ptr<const TableSnapshot> find_table(std::string_view schema, std::string_view name) override;

 private:
  storage::TableStore& store_;
};

// One session's view of the tables: a table its open transaction block
// created, dropped or wrote is seen as the block left it (uncommitted); any
// other table as `committed` serves it (read committed).
class TransactionTableProvider final : public TableProvider {
 public:
  // transaction: the session's open block, or null outside one.
  TransactionTableProvider(TableProvider& committed, storage::TableStore& store,
                           std::function<storage::WriteTransaction*()> transaction)
      : committed_(committed), store_(store), transaction_(std::move(transaction)) {}
  std::shared_ptr<const TableSnapshot> find_table(std::string_view schema, std::string_view name) override;

 private:
  TableProvider& committed_;
  storage::TableStore& store_;
  std::function<storage::WriteTransaction*()> transaction_;
};

}  // namespace tally::executor
