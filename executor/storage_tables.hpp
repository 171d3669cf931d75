#pragma once
// Adapts the storage layer (catalog snapshots + TableStore's decoded-chunk
// reader) to the executor's TableProvider interface.
#include <memory>

#include "executor/table_provider.hpp"

namespace tally::storage {
class TableStore;
}

namespace tally::executor {

class StorageTableProvider final : public TableProvider {
 public:
  explicit StorageTableProvider(storage::TableStore& store) : store_(store) {}
  std::shared_ptr<const TableSnapshot> find_table(std::string_view schema, std::string_view name) override;

 private:
  storage::TableStore& store_;
};

}  // namespace tally::executor
