#pragma once
// Password hashes stored at rest, in PostgreSQL's own formats, so a verifier
// copied from pg_authid.rolpassword works in Tally's configuration and back.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tally::config {

// PostgreSQL's default iteration count (scram_iterations in PostgreSQL 16).
constexpr int scram_default_iterations = 4096;
// PostgreSQL's SCRAM_DEFAULT_SALT_LEN.
constexpr int scram_salt_bytes = 16;

// The parts of "SCRAM-SHA-256$<iterations>:<salt b64>$<StoredKey b64>:<ServerKey b64>".
struct ScramVerifier {
  int iterations = 0;
  std::string salt;        // raw bytes
  std::string stored_key;  // raw 32 bytes: SHA-256(HMAC(SaltedPassword, "Client Key"))
  std::string server_key;  // raw 32 bytes: HMAC(SaltedPassword, "Server Key")
};

// Builds PostgreSQL's SCRAM-SHA-256 verifier text for a password with a fresh
// random salt. The password is used as bytes (PostgreSQL additionally applies
// SASLprep to non-ASCII UTF-8 passwords; ASCII passwords hash identically).
std::string make_scram_verifier(std::string_view password,
                                int iterations = scram_default_iterations);
// Same, with a given raw salt: deterministic, for tests and re-verification.
std::string make_scram_verifier(std::string_view password, std::string_view salt,
                                int iterations);

// Parses and checks a verifier; nullopt when it is not well formed.
std::optional<ScramVerifier> parse_scram_verifier(std::string_view text);

// True when `password` matches the verifier (what cleartext "password"
// authentication checks against a SCRAM-only user, as PostgreSQL does).
bool scram_password_matches(const ScramVerifier& verifier, std::string_view password);

// "md5" + hex(md5(password + user)), PostgreSQL's md5 rolpassword.
std::string make_md5_hash(std::string_view password, std::string_view user);
// True for "md5" followed by 32 lowercase hex digits.
bool is_md5_hash(std::string_view text);

// RFC 4648 base64 (with padding), used by SCRAM messages too.
std::string base64_encode(std::string_view bytes);
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace tally::config
