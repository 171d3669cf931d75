#pragma once
// SCRAM-SHA-256 (RFC 5802/7677) exchanges as PostgreSQL runs them, and the
// MD5 challenge, on OpenSSL. The stored forms (PostgreSQL's verifier
// "SCRAM-SHA-256$<iterations>:<salt b64>$<StoredKey b64>:<ServerKey b64>" and
// "md5..." hashes) belong to config/password_hash.hpp; the helpers below
// forward to it so that one implementation reads and writes them.
// Passwords are SASLprep-normalized (common/saslprep.hpp) wherever they
// are hashed here, as PostgreSQL and libpq do.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/password_hash.hpp"

namespace tally::protocol {

std::string base64_encode(std::string_view bytes);
// nullopt for text that is not canonical base64.
std::optional<std::string> base64_decode(std::string_view text);
std::string random_bytes(size_t count);

using ScramVerifier = config::ScramVerifier;

// PostgreSQL's default iteration count (scram_iterations).
constexpr int kScramIterations = config::scram_default_iterations;

std::optional<ScramVerifier> parse_scram_verifier(std::string_view text);
// The stored form for a password (SASLprep-normalized first, as PostgreSQL's
// scram_build_secret does); salt empty = 16 random bytes.
std::string make_scram_verifier(std::string_view password, int iterations = kScramIterations,
                                std::string_view salt = {});
// For cleartext password authentication against a SCRAM verifier: the
// password is SASLprep-normalized first (scram_verify_plain_password).
bool scram_verifier_matches(const ScramVerifier& verifier, std::string_view password);

// For a user that does not exist: a verifier no password matches, with a
// salt derived from the name and a secret chosen once per process, so that
// repeated attempts see the same salt, as for a real user (PostgreSQL's
// scram_mock_salt).
ScramVerifier mock_scram_verifier(std::string_view user);

// "md5" + hex(md5(password + user)): PostgreSQL's stored MD5 form.
std::string md5_password_hash(std::string_view password, std::string_view user);
// What a client answers to an MD5 challenge: "md5" + hex(md5(hex_part + salt)),
// where stored_hash is md5_password_hash's result.
std::string md5_salted_response(std::string_view stored_hash, std::string_view salt);

// The server side of one SCRAM exchange.
class ScramServer {
 public:
  enum class Step { expect_client_first, expect_client_final, done };

  explicit ScramServer(ScramVerifier verifier) : verifier_(std::move(verifier)) {}
  // client-first-message -> server-first-message. Throws Error 08P01 when malformed.
  std::string client_first(std::string_view message);
  // client-final-message -> server-final-message, or nullopt when the proof
  // is wrong (28P01). Throws Error 08P01 when malformed.
  std::optional<std::string> client_final(std::string_view message);

 private:
  ScramVerifier verifier_;
  Step step_ = Step::expect_client_first;
  std::string gs2_header_;
  std::string client_first_bare_;
  std::string server_first_;
  std::string nonce_;
};

// The client side (tests, the fuzzer's recorded streams, the benchmark).
class ScramClient {
 public:
  // The password is SASLprep-normalized, as libpq does.
  ScramClient(std::string password, std::string nonce = {});
  std::string client_first();
  // server-first -> client-final. Throws std::runtime_error when malformed.
  std::string client_final(std::string_view server_first);
  // True when the server proved it knows the verifier.
  bool verify_server_final(std::string_view server_final) const;

 private:
  std::string password_;
  std::string nonce_;
  std::string client_first_bare_;
  std::string server_signature_;
};

}  // namespace tally::protocol
