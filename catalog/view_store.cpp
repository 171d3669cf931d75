#include "catalog/view_store.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <sstream>

#include "catalog/catalog.hpp"
#include "catalog/sqlite_run.hpp"

namespace tally::catalog {
namespace {

constexpr const char* kWhat = "catalog views";

std::string text_column(sqlite3_stmt* s, int column) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s, column));
  return text ? text : "";
}

// Columns as lines of "type_oid typmod name" (the name is the rest of the
// line, spaces included; a name with a newline is refused by CREATE VIEW).
std::string encode_columns(const std::vector<ViewColumn>& columns) {
  std::string out;
  for (const auto& c : columns)
    out += std::to_string(type_oid(c.type.id)) + " " + std::to_string(c.type.typmod) + " " + c.name + "\n";
  return out;
}

std::vector<ViewColumn> decode_columns(const std::string& text) {
  std::vector<ViewColumn> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    uint32_t oid = 0;
    int32_t typmod = -1;
    fields >> oid >> typmod;
    fields.get();  // the space before the name
    ViewColumn c;
    std::getline(fields, c.name);
    c.type = {type_from_oid(oid).value_or(TypeId::text), typmod};
    out.push_back(std::move(c));
  }
  return out;
}

std::string encode_oids(const std::vector<uint32_t>& oids) {
  std::string out;
  for (const uint32_t oid : oids) out += (out.empty() ? "" : " ") + std::to_string(oid);
  return out;
}

std::vector<uint32_t> decode_oids(const std::string& text) {
  std::vector<uint32_t> out;
  std::istringstream in(text);
  for (uint32_t oid = 0; in >> oid;) out.push_back(oid);
  return out;
}

}  // namespace

ViewStore::ViewStore(Catalog& catalog) : catalog_(catalog) {
  std::lock_guard lock(catalog_.mutex());
  sqlite3* db = catalog_.handle();
  sqlite_run(db, kWhat, R"sql(CREATE TABLE IF NOT EXISTS tally_views(
        oid INTEGER PRIMARY KEY, schema_name TEXT NOT NULL, name TEXT NOT NULL, query TEXT NOT NULL,
        definition TEXT NOT NULL, columns TEXT NOT NULL, depends TEXT NOT NULL))sql",
             {});
  sqlite_run(db, kWhat, "SELECT oid, schema_name, name, query, definition, columns, depends FROM tally_views", {},
             [&](sqlite3_stmt* s) {
               ViewDef v;
               v.oid = static_cast<uint32_t>(sqlite3_column_int64(s, 0));
               v.schema = text_column(s, 1);
               v.name = text_column(s, 2);
               v.query = text_column(s, 3);
               v.definition = text_column(s, 4);
               v.columns = decode_columns(text_column(s, 5));
               v.depends = decode_oids(text_column(s, 6));
               views_[v.oid] = std::move(v);
             });
}

std::optional<ViewDef> ViewStore::find(std::string_view name, std::string_view schema) const {
  std::lock_guard lock(mutex_);
  for (const auto& [oid, v] : views_)
    if (v.name == name && v.schema == schema) return v;
  return std::nullopt;
}

std::vector<ViewDef> ViewStore::list() const {
  std::vector<ViewDef> out;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [oid, v] : views_) out.push_back(v);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

std::vector<ViewDef> ViewStore::dependents(uint32_t oid) const {
  std::vector<ViewDef> out;
  for (auto& v : list())
    if (std::find(v.depends.begin(), v.depends.end(), oid) != v.depends.end()) out.push_back(std::move(v));
  return out;
}

ViewDef ViewStore::put(ViewDef def) {
  const bool created = def.oid == 0;
  if (created) def.oid = catalog_.reserve_oid();
  std::lock_guard lock(mutex_);
  {
    std::lock_guard catalog_lock(catalog_.mutex());
    // The oid first: a crash between the two statements skips an oid, never reuses one.
    if (created) sqlite_keep_oid(catalog_.handle(), kWhat, def.oid + 1);
    sqlite_run(catalog_.handle(), kWhat,
               "INSERT OR REPLACE INTO tally_views(oid, schema_name, name, query, definition, columns, depends) "
               "VALUES (?, ?, ?, ?, ?, ?, ?)",
               {int64_t{def.oid}, def.schema, def.name, def.query, def.definition, encode_columns(def.columns),
                encode_oids(def.depends)});
  }
  views_[def.oid] = def;
  return def;
}

void ViewStore::drop(uint32_t oid) {
  std::lock_guard lock(mutex_);
  {
    std::lock_guard catalog_lock(catalog_.mutex());
    sqlite_run(catalog_.handle(), kWhat, "DELETE FROM tally_views WHERE oid = ?", {int64_t{oid}});
  }
  views_.erase(oid);
}

}  // namespace tally::catalog
