#pragma once
// pg_describe_object's view of the catalog: the SQL function (executor/scalar)
// reaches the database's relations, columns, keys and the built-in objects
// through this seam, which executor/introspection fills when a session starts
// (as it does key_definitions.hpp).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace tally::executor {

class ObjectDescriptions {
 public:
  virtual ~ObjectDescriptions() = default;
  // Object `objid` (column `subid` of it when not 0) of catalog `classid`
  // (pg_class 1259, pg_proc 1255, ...) as pg_describe_object names it
  // ("table t", "column a of table t", "function lower(text)"); nullopt when
  // there is no such object.
  virtual std::optional<std::string> describe(int64_t classid, int64_t objid, int64_t subid) const = 0;
};

// Replaces what every session reads (null: no object has a description).
void install_object_descriptions(std::shared_ptr<const ObjectDescriptions> descriptions);
std::shared_ptr<const ObjectDescriptions> object_descriptions();

}  // namespace tally::executor
