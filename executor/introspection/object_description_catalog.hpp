#pragma once
// pg_describe_object over the catalog relations (catalog_relations.hpp): the
// words PostgreSQL 15's getObjectDescription writes for the kinds of object
// Tally lists, and the ObjectDescriptions seam (executor/object_descriptions.hpp)
// that answers from a database.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "executor/introspection/catalog_relations.hpp"
#include "executor/object_descriptions.hpp"

namespace tally::executor::introspection {

// "table t", "column a of table t", "index t_b", "view v", "sequence s",
// "constraint keyed_pkey on table keyed", "default value for column id of
// table t", "rule _RETURN on view v", "function lower(text)", "type integer",
// "schema public", "language plpgsql", "access method btree", "extension
// plpgsql"; nullopt for an object the catalogs do not hold.
std::optional<std::string> describe_object(const CatalogSource& source, int64_t classid, int64_t objid,
                                           int64_t subid);

// Answers from the CatalogSource `source` builds at each call.
std::shared_ptr<const ObjectDescriptions> catalog_object_descriptions(std::function<CatalogSource()> source);

}  // namespace tally::executor::introspection
