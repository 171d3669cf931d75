#include "protocol/scram.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/md5.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <cctype>
#include <stdexcept>
#include <vector>

#include "protocol/message_buffer.hpp"
#include "common/saslprep.hpp"

namespace tally::protocol {

namespace {

// Length of the server's part of the nonce, in random bytes (PostgreSQL: 18).
constexpr size_t kNonceBytes = 18;

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &length);
  return std::string(reinterpret_cast<char*>(out), length);
}

std::string sha256(std::string_view data) {
  unsigned char out[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), out);
  return std::string(reinterpret_cast<char*>(out), sizeof out);
}

std::string salted_password(std::string_view password, std::string_view salt, int iterations) {
  unsigned char out[SHA256_DIGEST_LENGTH];
  PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                    reinterpret_cast<const unsigned char*>(salt.data()),
                    static_cast<int>(salt.size()), iterations, EVP_sha256(), sizeof out, out);
  return std::string(reinterpret_cast<char*>(out), sizeof out);
}

std::string hex(const unsigned char* data, size_t size) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < size; ++i) {
    out.push_back(digits[data[i] >> 4]);
    out.push_back(digits[data[i] & 15]);
  }
  return out;
}

std::string md5_hex(std::string_view data) {
  unsigned char out[MD5_DIGEST_LENGTH];
  EVP_Digest(data.data(), data.size(), out, nullptr, EVP_md5(), nullptr);
  return hex(out, sizeof out);
}

bool equal_constant_time(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

Error malformed(std::string detail) {
  return protocol_violation("malformed SCRAM message").with_detail(std::move(detail));
}

// Splits "a=x,b=y" into attributes, checking each is "<letter>=".
std::vector<std::pair<char, std::string_view>> attributes(std::string_view text) {
  std::vector<std::pair<char, std::string_view>> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view part = text.substr(pos, comma - pos);
    if (part.size() < 2 || part[1] != '=' || !std::isalpha(static_cast<unsigned char>(part[0]))) {
      throw malformed("Attribute expected, but found invalid character.");
    }
    out.emplace_back(part[0], part.substr(2));
    pos = comma + 1;
  }
  return out;
}

bool printable_nonce(std::string_view nonce) {
  if (nonce.empty()) return false;
  for (char c : nonce) {
    if (c < 0x21 || c > 0x7E || c == ',') return false;
  }
  return true;
}

}  // namespace

ScramVerifier mock_scram_verifier(std::string_view user) {
  static const std::string secret = random_bytes(32);
  constexpr size_t kSaltBytes = 16;  // PostgreSQL's SCRAM_DEFAULT_SALT_LEN
  ScramVerifier verifier;
  verifier.iterations = kScramIterations;
  verifier.salt = sha256(std::string(user) + secret).substr(0, kSaltBytes);
  verifier.stored_key = random_bytes(SHA256_DIGEST_LENGTH);
  verifier.server_key = random_bytes(SHA256_DIGEST_LENGTH);
  return verifier;
}

std::string base64_encode(std::string_view bytes) { return config::base64_encode(bytes); }

std::optional<std::string> base64_decode(std::string_view text) {
  return config::base64_decode(text);
}

std::string random_bytes(size_t count) {
  std::string out(count, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(count)) != 1) {
    throw Error(SqlState::internal_error, "could not generate random bytes");
  }
  return out;
}

std::optional<ScramVerifier> parse_scram_verifier(std::string_view text) {
  return config::parse_scram_verifier(text);
}

std::string make_scram_verifier(std::string_view password, int iterations,
                                std::string_view salt) {
  const std::string prepared = saslprep_password(password);
  return salt.empty() ? config::make_scram_verifier(prepared, iterations)
                      : config::make_scram_verifier(prepared, salt, iterations);
}

bool scram_verifier_matches(const ScramVerifier& verifier, std::string_view password) {
  return config::scram_password_matches(verifier, saslprep_password(password));
}

std::string md5_password_hash(std::string_view password, std::string_view user) {
  return config::make_md5_hash(password, user);
}

std::string md5_salted_response(std::string_view stored_hash, std::string_view salt) {
  std::string_view hex_part = stored_hash.substr(stored_hash.size() >= 3 ? 3 : 0);
  return "md5" + md5_hex(std::string(hex_part) + std::string(salt));
}

std::string ScramServer::client_first(std::string_view message) {
  if (step_ != Step::expect_client_first) throw malformed("Unexpected SCRAM message.");
  // gs2-header: cbind-flag "," [authzid] ","
  if (message.empty()) throw malformed("The message is empty.");
  char flag = message[0];
  if (flag == 'p') {
    // We never advertise SCRAM-SHA-256-PLUS, so a client asking for channel
    // binding did not follow the mechanism negotiation.
    throw malformed("The client selected SCRAM-SHA-256 without channel binding, but the "
                    "SCRAM message includes channel binding data.");
  }
  if ((flag != 'n' && flag != 'y') || message.size() < 2 || message[1] != ',') {
    throw malformed("Unexpected channel-binding flag.");
  }
  size_t second_comma = message.find(',', 2);
  if (second_comma == std::string_view::npos) throw malformed("Comma expected.");
  std::string_view authzid = message.substr(2, second_comma - 2);
  if (!authzid.empty()) {
    throw Error(SqlState::feature_not_supported, "client uses authorization identity, but it is "
                "not supported", Severity::fatal);
  }
  gs2_header_ = std::string(message.substr(0, second_comma + 1));
  client_first_bare_ = std::string(message.substr(second_comma + 1));
  auto attrs = attributes(client_first_bare_);
  // Mandatory extensions ("m=") are not supported; "n=" (user) is ignored
  // because PostgreSQL takes the user from the startup packet.
  if (attrs.size() < 2 || attrs[0].first != 'n' || attrs[1].first != 'r') {
    throw malformed("Expected attributes n and r.");
  }
  std::string_view client_nonce = attrs[1].second;
  if (!printable_nonce(client_nonce)) throw malformed("Invalid client nonce.");
  nonce_ = std::string(client_nonce) + base64_encode(random_bytes(kNonceBytes));
  server_first_ = "r=" + nonce_ + ",s=" + base64_encode(verifier_.salt) +
                  ",i=" + std::to_string(verifier_.iterations);
  step_ = Step::expect_client_final;
  return server_first_;
}

std::optional<std::string> ScramServer::client_final(std::string_view message) {
  if (step_ != Step::expect_client_final) throw malformed("Unexpected SCRAM message.");
  step_ = Step::done;
  size_t proof_pos = message.rfind(",p=");
  if (proof_pos == std::string_view::npos) throw malformed("Proof expected.");
  std::string_view without_proof = message.substr(0, proof_pos);
  auto attrs = attributes(message);
  if (attrs.size() < 3 || attrs[0].first != 'c' || attrs[1].first != 'r' ||
      attrs.back().first != 'p') {
    throw malformed("Expected attributes c, r and p.");
  }
  auto binding = base64_decode(attrs[0].second);
  if (!binding || *binding != gs2_header_) {
    throw malformed("Unexpected SCRAM channel-binding attribute in client-final-message.");
  }
  if (attrs[1].second != nonce_) throw malformed("Nonce does not match.");
  auto proof = base64_decode(attrs.back().second);
  if (!proof || proof->size() != SHA256_DIGEST_LENGTH) throw malformed("Malformed proof.");

  std::string auth_message =
      client_first_bare_ + "," + server_first_ + "," + std::string(without_proof);
  std::string client_signature = hmac_sha256(verifier_.stored_key, auth_message);
  std::string client_key(SHA256_DIGEST_LENGTH, '\0');
  for (size_t i = 0; i < client_key.size(); ++i) client_key[i] = (*proof)[i] ^ client_signature[i];
  if (!equal_constant_time(sha256(client_key), verifier_.stored_key)) return std::nullopt;
  return "v=" + base64_encode(hmac_sha256(verifier_.server_key, auth_message));
}

ScramClient::ScramClient(std::string password, std::string nonce)
    : password_(saslprep_password(password)),
      nonce_(nonce.empty() ? base64_encode(random_bytes(kNonceBytes)) : std::move(nonce)) {}

std::string ScramClient::client_first() {
  client_first_bare_ = "n=,r=" + nonce_;
  return "n,," + client_first_bare_;
}

std::string ScramClient::client_final(std::string_view server_first) {
  std::string_view rest = server_first;
  auto field = [&](std::string_view name) {
    if (rest.substr(0, name.size()) != name) throw std::runtime_error("bad server-first-message");
    rest.remove_prefix(name.size());
    size_t comma = rest.find(',');
    std::string_view value = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    return std::string(value);
  };
  std::string nonce = field("r=");
  auto salt = base64_decode(field("s="));
  int iterations = std::stoi(field("i="));
  if (!salt || nonce.substr(0, nonce_.size()) != nonce_) {
    throw std::runtime_error("bad server-first-message");
  }
  std::string salted = salted_password(password_, *salt, iterations);
  std::string client_key = hmac_sha256(salted, "Client Key");
  std::string stored_key = sha256(client_key);
  std::string without_proof = "c=biws,r=" + nonce;
  std::string auth_message =
      client_first_bare_ + "," + std::string(server_first) + "," + without_proof;
  std::string signature = hmac_sha256(stored_key, auth_message);
  std::string proof(client_key.size(), '\0');
  for (size_t i = 0; i < proof.size(); ++i) proof[i] = client_key[i] ^ signature[i];
  server_signature_ = hmac_sha256(hmac_sha256(salted, "Server Key"), auth_message);
  return without_proof + ",p=" + base64_encode(proof);
}

bool ScramClient::verify_server_final(std::string_view server_final) const {
  return server_final == "v=" + base64_encode(server_signature_);
}

}  // namespace tally::protocol
