#include "config/password_hash.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <charconv>
#include <stdexcept>

#include "common/base64_digits.hpp"

namespace tally::config {
namespace {

constexpr int sha256_bytes = 32;

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
            reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len)) {
    throw std::runtime_error("HMAC-SHA-256 failed");
  }
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string sha256(std::string_view data) {
  unsigned char out[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), out);
  return std::string(reinterpret_cast<char*>(out), sizeof out);
}

std::string salted_password(std::string_view password, std::string_view salt, int iterations) {
  unsigned char out[sha256_bytes];
  if (!PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                         reinterpret_cast<const unsigned char*>(salt.data()),
                         static_cast<int>(salt.size()), iterations, EVP_sha256(), sizeof out, out)) {
    throw std::runtime_error("PBKDF2-HMAC-SHA-256 failed");
  }
  return std::string(reinterpret_cast<char*>(out), sizeof out);
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  const char* alphabet = kBase64Digits;
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    out += alphabet[v >> 18];
    out += alphabet[(v >> 12) & 63];
    out += alphabet[(v >> 6) & 63];
    out += alphabet[v & 63];
  }
  if (size_t rest = bytes.size() - i; rest > 0) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    if (rest == 2) v |= uint8_t(bytes[i + 1]) << 8;
    out += alphabet[v >> 18];
    out += alphabet[(v >> 12) & 63];
    out += rest == 2 ? alphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int pad = 0;
    uint32_t v = 0;
    for (size_t j = 0; j < 4; ++j) {
      char c = text[i + j];
      if (c == '=') {
        // Padding only at the very end, in the last two positions.
        if (i + 4 != text.size() || j < 2) return std::nullopt;
        ++pad;
        v <<= 6;
        continue;
      }
      if (pad > 0) return std::nullopt;
      int d = base64_digit_value(c);
      if (d < 0) return std::nullopt;
      v = (v << 6) | uint32_t(d);
    }
    out += char(v >> 16);
    if (pad < 2) out += char((v >> 8) & 0xff);
    if (pad < 1) out += char(v & 0xff);
  }
  return out;
}

std::string make_scram_verifier(std::string_view password, std::string_view salt,
                                int iterations) {
  std::string salted = salted_password(password, salt, iterations);
  std::string stored_key = sha256(hmac_sha256(salted, "Client Key"));
  std::string server_key = hmac_sha256(salted, "Server Key");
  return "SCRAM-SHA-256$" + std::to_string(iterations) + ":" + base64_encode(salt) + "$" +
         base64_encode(stored_key) + ":" + base64_encode(server_key);
}

std::string make_scram_verifier(std::string_view password, int iterations) {
  unsigned char salt[scram_salt_bytes];
  if (RAND_bytes(salt, sizeof salt) != 1) throw std::runtime_error("no random bytes for a salt");
  return make_scram_verifier(password, std::string_view(reinterpret_cast<char*>(salt), sizeof salt),
                             iterations);
}

std::optional<ScramVerifier> parse_scram_verifier(std::string_view text) {
  constexpr std::string_view prefix = "SCRAM-SHA-256$";
  if (!text.starts_with(prefix)) return std::nullopt;
  text.remove_prefix(prefix.size());
  size_t colon1 = text.find(':');
  size_t dollar = text.find('$');
  if (colon1 == std::string_view::npos || dollar == std::string_view::npos || dollar < colon1)
    return std::nullopt;
  size_t colon2 = text.find(':', dollar);
  if (colon2 == std::string_view::npos) return std::nullopt;
  ScramVerifier v;
  std::string_view iter = text.substr(0, colon1);
  auto [ptr, ec] = std::from_chars(iter.data(), iter.data() + iter.size(), v.iterations);
  if (ec != std::errc() || ptr != iter.data() + iter.size() || v.iterations <= 0) return std::nullopt;
  auto salt = base64_decode(text.substr(colon1 + 1, dollar - colon1 - 1));
  auto stored = base64_decode(text.substr(dollar + 1, colon2 - dollar - 1));
  auto server = base64_decode(text.substr(colon2 + 1));
  if (!salt || salt->empty() || !stored || !server) return std::nullopt;
  if (stored->size() != sha256_bytes || server->size() != sha256_bytes) return std::nullopt;
  v.salt = std::move(*salt);
  v.stored_key = std::move(*stored);
  v.server_key = std::move(*server);
  return v;
}

bool scram_password_matches(const ScramVerifier& verifier, std::string_view password) {
  std::string salted = salted_password(password, verifier.salt, verifier.iterations);
  std::string stored_key = sha256(hmac_sha256(salted, "Client Key"));
  return stored_key.size() == verifier.stored_key.size() &&
         CRYPTO_memcmp(stored_key.data(), verifier.stored_key.data(), stored_key.size()) == 0;
}

std::string make_md5_hash(std::string_view password, std::string_view user) {
  std::string input(password);
  input += user;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!EVP_Digest(input.data(), input.size(), digest, &len, EVP_md5(), nullptr))
    throw std::runtime_error("MD5 failed");
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "md5";
  for (unsigned i = 0; i < len; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

bool is_md5_hash(std::string_view text) {
  if (text.size() != 35 || !text.starts_with("md5")) return false;
  for (char c : text.substr(3))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace tally::config
