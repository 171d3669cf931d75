#pragma once
// SASLprep (RFC 4013) of SCRAM passwords, with PostgreSQL's pg_saslprep rules:
// an ASCII password is used as it is; a non-ASCII one is mapped (non-ASCII
// spaces to U+0020, "commonly mapped to nothing" characters removed), NFKC
// normalized and checked (prohibited output, bidirectional rules, code points
// unassigned in Unicode 3.2). A password that is not valid UTF-8 or fails a
// check is used unnormalized, as PostgreSQL does (its SCRAM verifiers and
// libpq's client proofs follow the same rule, so both sides agree).
//
// A library of its own (tally_saslprep, over libidn's stringprep) so that whatever
// hashes passwords, config/ included, can use it without the protocol layer.
#include <string>
#include <string_view>

namespace tally {

enum class SaslprepResult { normalized, unchanged_ascii, invalid_utf8, prohibited };

struct Saslprepped {
  std::string password;  // what SCRAM hashes
  SaslprepResult result;
};

// The password SCRAM must hash, and why.
Saslprepped saslprep(std::string_view password);

// Just the password to hash (PostgreSQL's callers ignore the reason).
inline std::string saslprep_password(std::string_view password) { return saslprep(password).password; }

}  // namespace tally
