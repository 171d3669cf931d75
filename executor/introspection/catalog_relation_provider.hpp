#pragma once
// The catalog relations of catalog_relations.hpp as the planner sees them
// (executor/system_relation_provider.hpp): each relation a statement names is
// built once from the statement's CatalogSource and materialized as one chunk
// of column vectors.
#include <map>
#include <memory>
#include <string>

#include "executor/introspection/catalog_relations.hpp"
#include "executor/system_relation_provider.hpp"

namespace tally::catalog {
class SequenceStore;
}

namespace tally::executor::introspection {

class CatalogRelationProvider final : public SystemRelationProvider {
 public:
  // The catalog as the next statement sees it (its tables, settings, user);
  // forgets the relations built for the one before.
  void set_source(CatalogSource source);
  // The database's sequences, which read as relations too (null: none).
  void set_sequences(const catalog::SequenceStore* sequences) { sequences_ = sequences; }
  std::shared_ptr<const MaterializedRelation> find(std::string_view schema, std::string_view name) override;

 private:
  const catalog::SequenceStore* sequences_ = nullptr;
  CatalogSource source_;
  bool has_source_ = false;
  std::map<std::string, std::shared_ptr<const MaterializedRelation>, std::less<>> built_;
};

// The rows of `relation` as one chunk of column vectors; its last
// `system_columns` are reached by name only (MaterializedRelation).
std::shared_ptr<const MaterializedRelation> materialize(std::string name, const Relation& relation,
                                                        size_t system_columns = 0);

}  // namespace tally::executor::introspection
