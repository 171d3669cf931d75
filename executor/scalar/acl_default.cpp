#include "executor/scalar/acl_default.hpp"

#include <cctype>

namespace tally::executor::scalar {
namespace {

// A role name as aclitem output writes it: quoted unless only letters,
// digits and underscores.
std::string acl_role(const std::string& role) {
  bool plain = !role.empty();
  for (unsigned char c : role) plain = plain && (std::isalnum(c) || c == '_');
  if (plain) return role;
  std::string out = "\"";
  for (char c : role) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// The owner's rights and PUBLIC's (empty: none) for each object kind, from
// PostgreSQL 15's acldefault().
struct DefaultRights {
  char objtype;
  const char* public_rights;
  const char* owner_rights;
};

constexpr DefaultRights kDefaults[] = {
    {'c', "", ""},   {'r', "", "arwdDxt"}, {'s', "", "rwU"}, {'d', "Tc", "CTc"}, {'f', "X", "X"},
    {'l', "U", "U"}, {'L', "", "rw"},      {'n', "", "UC"},  {'t', "", "C"},     {'F', "", "U"},
    {'S', "", "U"},  {'T', "U", "U"},      {'p', "", "sA"},
};

}  // namespace

std::optional<std::vector<std::string>> acl_default(char objtype, const std::string& owner) {
  for (const auto& d : kDefaults) {
    if (d.objtype != objtype) continue;
    std::vector<std::string> items;
    if (*d.owner_rights == '\0') return items;
    const std::string role = acl_role(owner);
    if (*d.public_rights != '\0') items.push_back("=" + std::string(d.public_rights) + "/" + role);
    items.push_back(role + "=" + d.owner_rights + "/" + role);
    return items;
  }
  return std::nullopt;
}

}  // namespace tally::executor::scalar
