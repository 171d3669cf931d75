#include "executor/introspection/index_definitions.hpp"

#include <functional>

#include "catalog/catalog.hpp"
#include "executor/database.hpp"
#include "executor/scalar/catalog_functions.hpp"
#include "storage/table_store.hpp"

namespace tally::executor::introspection {
namespace {

std::string key_columns(const catalog::TableDef& table, const catalog::KeyConstraint& key) {
  std::string out;
  for (const int c : key.columns) {
    if (!out.empty()) out += ", ";
    out += scalar::quote_ident(table.columns[static_cast<size_t>(c)].name);
  }
  return out;
}

using KeyVisitor = std::function<bool(const catalog::TableDef&, const catalog::KeyConstraint&)>;

class CatalogKeyDefinitions final : public KeyDefinitions {
 public:
  explicit CatalogKeyDefinitions(Database* database) : database_(database) {}

  std::optional<std::string> index_definition(uint32_t index_oid, int column,
                                              bool qualify) const override {
    std::optional<std::string> found;
    visit([&](const catalog::TableDef& table, const catalog::KeyConstraint& key) {
      if (key.index_oid != index_oid) return false;
      found = introspection::index_definition(table, key, column, qualify);
      return true;
    });
    return found;
  }

  std::optional<std::string> constraint_definition(uint32_t constraint_oid) const override {
    std::optional<std::string> found;
    visit([&](const catalog::TableDef& table, const catalog::KeyConstraint& key) {
      // A bare CREATE INDEX has no pg_constraint row, whatever its oid field holds.
      if (!key.constraint || key.oid != constraint_oid) return false;
      found = introspection::constraint_definition(table, key);
      return true;
    });
    return found;
  }

 private:
  // Calls `fn` for each key until it answers true.
  void visit(const KeyVisitor& fn) const {
    if (database_ == nullptr || database_->store() == nullptr) return;
    for (const auto& table : database_->store()->catalog().tables()) {
      for (const auto& key : table->def.keys) {
        if (fn(table->def, key)) return;
      }
    }
  }

  Database* database_;
};

}  // namespace

std::string index_definition(const catalog::TableDef& table, const catalog::KeyConstraint& key,
                             int column, bool qualify) {
  if (column != 0) {
    if (column < 0 || static_cast<size_t>(column) > key.columns.size()) return "";
    return scalar::quote_ident(
        table.columns[static_cast<size_t>(key.columns[static_cast<size_t>(column - 1)])].name);
  }
  // Primary keys and unique constraints are unique indexes too.
  const bool unique = key.unique || key.primary;
  const std::string relation = (qualify ? scalar::quote_ident(table.schema) + "." : std::string()) +
                               scalar::quote_ident(table.name);
  return std::string("CREATE ") + (unique ? "UNIQUE " : "") + "INDEX " +
         scalar::quote_ident(key.name) + " ON " + relation + " USING btree (" +
         key_columns(table, key) + ")";
}

std::string constraint_definition(const catalog::TableDef& table,
                                  const catalog::KeyConstraint& key) {
  return std::string(key.primary ? "PRIMARY KEY" : "UNIQUE") + " (" + key_columns(table, key) + ")";
}

std::shared_ptr<const KeyDefinitions> catalog_key_definitions(Database* database) {
  return std::make_shared<CatalogKeyDefinitions>(database);
}

}  // namespace tally::executor::introspection
