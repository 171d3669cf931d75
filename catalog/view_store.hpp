#pragma once
// Views (CREATE VIEW), kept in the catalog database next to the tables. A
// view is its SELECT as libpg_query's parse tree (JSON), which the planner
// expands where the view is named, its output columns as they were when it
// was created, and the oids of the tables and views it reads (which DROP
// checks: PostgreSQL's pg_depend). Each change is one synchronous SQLite
// statement, so a view survives a crash once CREATE VIEW has answered.
// Thread-safe.
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/sql_type.hpp"

namespace tally::catalog {

class Catalog;

struct ViewColumn {
  std::string name;
  SqlType type;
};

struct ViewDef {
  uint32_t oid = 0;
  std::string schema = "public";
  std::string name;
  std::string query;       // the SelectStmt node's JSON
  std::string definition;  // the SELECT as written (pg_get_viewdef, pg_views.definition)
  std::vector<ViewColumn> columns;
  std::vector<uint32_t> depends;  // oids of the tables and views the query reads
};

class ViewStore {
 public:
  // Creates its table in the catalog database when absent and loads every view.
  explicit ViewStore(Catalog& catalog);

  std::optional<ViewDef> find(std::string_view name, std::string_view schema = "public") const;
  // Every view, ordered by name.
  std::vector<ViewDef> list() const;
  // The views that read the table or view `oid`, directly.
  std::vector<ViewDef> dependents(uint32_t oid) const;

  // Stores a view: a new one (def.oid 0: assigned from the catalog's oids)
  // or the replacement of view def.oid (CREATE OR REPLACE VIEW).
  ViewDef put(ViewDef def);
  void drop(uint32_t oid);

 private:
  Catalog& catalog_;
  mutable std::mutex mutex_;
  std::unordered_map<uint32_t, ViewDef> views_;
};

}  // namespace tally::catalog
