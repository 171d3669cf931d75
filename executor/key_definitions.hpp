#pragma once
// pg_get_indexdef's and pg_get_constraintdef's view of the catalog: the SQL
// functions (executor/scalar) reach the database's indexes and key
// constraints through this seam, which executor/introspection fills when a
// session starts (as the reg* names are: reg_names.hpp).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace tally::executor {

class KeyDefinitions {
 public:
  virtual ~KeyDefinitions() = default;
  // Index `index_oid` as pg_get_indexdef prints it: column 0, the whole
  // CREATE INDEX statement (the table schema-qualified when `qualify`);
  // column n, the n-th key column alone ("" when there is none). nullopt
  // when no index has that oid.
  virtual std::optional<std::string> index_definition(uint32_t index_oid, int column,
                                                      bool qualify) const = 0;
  // Key constraint `constraint_oid` as pg_get_constraintdef prints it
  // (PRIMARY KEY (a, b), UNIQUE (c)); nullopt when no constraint has that oid.
  virtual std::optional<std::string> constraint_definition(uint32_t constraint_oid) const = 0;
};

// Replaces what every session reads (null: no indexes or constraints).
void install_key_definitions(std::shared_ptr<const KeyDefinitions> definitions);
std::shared_ptr<const KeyDefinitions> key_definitions();

}  // namespace tally::executor
