#include "executor/scalar/builtin_comments.hpp"

#include <array>

namespace tally::executor::scalar {
namespace {

constexpr int64_t kPgType = 1247, kPgAm = 2601, kPgLanguage = 2612, kPgNamespace = 2615, kPgExtension = 3079;

// SELECT classoid, objoid, description FROM pg_description on a PostgreSQL 15
// after initdb, for the objects pg_type, pg_am, pg_language, pg_namespace
// and pg_extension list here (array types have none).
constexpr std::array<BuiltinComment, 49> kComments{{
    {kPgType, 16, "boolean, 'true'/'false'"},
    {kPgType, 17, "variable-length string, binary values escaped"},
    {kPgType, 18, "single character"},
    {kPgType, 19, "63-byte type for storing system identifiers"},
    {kPgType, 20, "~18 digit integer, 8-byte storage"},
    {kPgType, 21, "-32 thousand to 32 thousand, 2-byte storage"},
    {kPgType, 22, "array of int2, used in system tables"},
    {kPgType, 23, "-2 billion to 2 billion integer, 4-byte storage"},
    {kPgType, 24, "registered procedure"},
    {kPgType, 25, "variable-length string, no limit specified"},
    {kPgType, 26, "object identifier(oid), maximum 4 billion"},
    {kPgType, 30, "array of oids, used in system tables"},
    {kPgType, 700, "single-precision floating point number, 4-byte storage"},
    {kPgType, 701, "double-precision floating point number, 8-byte storage"},
    {kPgType, 705, "pseudo-type representing an undetermined type"},
    {kPgType, 1042, "char(length), blank-padded string, fixed storage length"},
    {kPgType, 1043, "varchar(length), non-blank-padded string, variable storage length"},
    {kPgType, 1082, "date"},
    {kPgType, 1083, "time of day"},
    {kPgType, 1114, "date and time"},
    {kPgType, 1184, "date and time with time zone"},
    {kPgType, 1186, "@ <number> <units>, time interval"},
    {kPgType, 1700, "numeric(precision, decimal), arbitrary precision number"},
    {kPgType, 2202, "registered procedure (with args)"},
    {kPgType, 2203, "registered operator"},
    {kPgType, 2205, "registered class"},
    {kPgType, 2206, "registered type"},
    {kPgType, 2249, "pseudo-type representing any composite type"},
    {kPgType, 2276, "pseudo-type representing any type"},
    {kPgType, 2277, "pseudo-type representing a polymorphic array type"},
    {kPgType, 2278, "pseudo-type for the result of a function with no real result"},
    {kPgType, 2279, "pseudo-type for the result of a trigger function"},
    {kPgType, 2281, "pseudo-type representing an internal data structure"},
    {kPgType, 2283, "pseudo-type representing a polymorphic base type"},
    {kPgType, 2776, "pseudo-type representing a polymorphic base type that is not an array"},
    {kPgType, 4089, "registered namespace"},
    {kPgType, 5077, "pseudo-type representing a polymorphic common type"},
    {kPgType, 5078, "pseudo-type representing an array of polymorphic common type elements"},
    {kPgType, 5079, "pseudo-type representing a polymorphic common type that is not an array"},
    {kPgAm, 2, "heap table access method"},
    {kPgAm, 403, "b-tree index access method"},
    {kPgLanguage, 12, "built-in functions"},
    {kPgLanguage, 13, "dynamically-loaded C functions"},
    {kPgLanguage, 14, "SQL-language functions"},
    {kPgLanguage, 13563, "PL/pgSQL procedural language"},
    {kPgNamespace, 11, "system catalog schema"},
    {kPgNamespace, 99, "reserved schema for TOAST tables"},
    {kPgNamespace, 2200, "standard public schema"},
    {kPgExtension, 13559, "PL/pgSQL procedural language"},
}};

}  // namespace

std::span<const BuiltinComment> builtin_comments() { return kComments; }

std::optional<int64_t> comment_catalog_oid(std::string_view catalog) {
  if (catalog == "pg_type") return kPgType;
  if (catalog == "pg_am") return kPgAm;
  if (catalog == "pg_language") return kPgLanguage;
  if (catalog == "pg_namespace") return kPgNamespace;
  if (catalog == "pg_extension") return kPgExtension;
  return std::nullopt;
}

std::optional<std::string_view> builtin_comment(int64_t classoid, int64_t objoid) {
  for (const auto& c : kComments) {
    if (c.classoid == classoid && c.objoid == objoid) return c.description;
  }
  return std::nullopt;
}

}  // namespace tally::executor::scalar
