#pragma once
// pg_get_viewdef's view of the catalog: the SQL function (executor/scalar)
// reaches the database's views through this seam, which the Database fills
// when a session starts (as the reg* names are: reg_names.hpp).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tally::executor {

class ViewDefinitions {
 public:
  virtual ~ViewDefinitions() = default;
  // The definition of view `oid` as pg_get_viewdef prints it (pretty: its
  // second argument; qualify: the table schema-qualified, for a search path
  // without its schema); nullopt when no view has that oid.
  virtual std::optional<std::string> definition(uint32_t oid, bool pretty, bool qualify) const = 0;
  // The oid of the view named `name` (public schema, already folded).
  virtual std::optional<uint32_t> oid_of(std::string_view name) const = 0;
};

// Replaces what every session reads (null: no views).
void install_view_definitions(std::shared_ptr<const ViewDefinitions> definitions);
std::shared_ptr<const ViewDefinitions> view_definitions();

}  // namespace tally::executor
