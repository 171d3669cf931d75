#pragma once
// The comments initdb writes on the built-in objects Tally lists too (types,
// access methods, languages, schemas, the plpgsql extension), as PostgreSQL
// 15's pg_description holds them: pg_description's rows and obj_description
// read this one list (pg_proc's functions carry theirs in function_catalog).
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace tally::executor::scalar {

struct BuiltinComment {
  int64_t classoid;  // the catalog holding the object: pg_type 1247, pg_am 2601, ...
  int64_t objoid;
  const char* description;
};

std::span<const BuiltinComment> builtin_comments();

// The catalog's OID for obj_description's second argument ('pg_type' ...); nullopt for another name.
std::optional<int64_t> comment_catalog_oid(std::string_view catalog);

// The comment on object `objoid` of catalog `classoid`; nullopt when it has none.
std::optional<std::string_view> builtin_comment(int64_t classoid, int64_t objoid);

}  // namespace tally::executor::scalar
