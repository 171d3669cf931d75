#pragma once
// acldefault(objtype, owner): the privileges an object of that kind has
// before any GRANT or REVOKE, as PostgreSQL 15's aclitem[] prints them
// ({owner=arwdDxt/owner} for a relation). pg_dump compares each object's
// ACL with it to decide which GRANTs to write.
#include <optional>
#include <string>
#include <vector>

namespace tally::executor::scalar {

// The aclitems (in their text form, "owner=arwdDxt/owner") for object kind
// `objtype` ('r' relation, 's' sequence, 'n' schema, 'f' function, ...)
// owned by the role named `owner`; nullopt for a letter PostgreSQL does not know.
std::optional<std::vector<std::string>> acl_default(char objtype, const std::string& owner);

}  // namespace tally::executor::scalar
