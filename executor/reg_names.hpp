#pragma once
// Input and output of the reg* types (regclass, regtype). Their values are OIDs, compared and sorted as OIDs;
// only their text form is a name, which PostgreSQL's input and output
// functions look up in the catalog. The executor's codecs (value_codec.hpp)
// and casts reach the catalog through this seam, which executor/introspection
// fills with the catalog relations' names (install_reg_names).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/sql_type.hpp"

namespace tally::executor {

// regclass, regtype, regnamespace, regproc, regprocedure, regoper, regoperator: OIDs that print as names.
inline bool is_reg_type(TypeId id) {
  return id == TypeId::regclass || id == TypeId::regtype || id == TypeId::regnamespace || id == TypeId::regproc ||
         id == TypeId::regoper || id == TypeId::regprocedure || id == TypeId::regoperator;
}

class RegNames {
 public:
  virtual ~RegNames() = default;
  // The name an OID of this reg* type prints as; nullopt: no such object
  // (it prints as its number then, as in PostgreSQL).
  virtual std::optional<std::string> name_of(TypeId type, int64_t oid) const = 0;
  // The OID a name (already folded and unquoted, schema removed) reads as;
  // nullopt: no such object.
  virtual std::optional<int64_t> oid_of(TypeId type, std::string_view name) const = 0;
};

// Replaces the names every session reads (null: numbers only).
void install_reg_names(std::shared_ptr<const RegNames> names);

// The text form of a reg* value: "-" for OID 0 (regoper, regoperator: "0"), the name, or the number.
std::string reg_output(TypeId type, int64_t oid);
// A reg* value from its text form: a number, "-", or a (qualified, possibly
// quoted) name; when nothing has that name, PostgreSQL's SQLSTATE: 42P01
// (regclass), 42704 (regtype), 3F000 (regnamespace), 42883 (regproc, regoper, regoperator).
int64_t reg_input(TypeId type, std::string_view text);

}  // namespace tally::executor
