#include "common/saslprep.hpp"

#include <stringprep.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>

namespace tally {

namespace {

bool is_ascii(std::string_view text) {
  for (unsigned char c : text) {
    if (c >= 0x80) return false;
  }
  return true;
}

}  // namespace

Saslprepped saslprep(std::string_view password) {
  // pg_saslprep returns ASCII input untouched, without the prohibited-output
  // check (an ASCII control character stays in the password).
  if (is_ascii(password)) return {std::string(password), SaslprepResult::unchanged_ascii};
  // stringprep reads a NUL-terminated string: a password with an embedded NUL
  // cannot be normalized (PostgreSQL's would end there; it never gets one, the
  // wire strings are NUL-terminated).
  if (password.find('\0') != std::string_view::npos) return {std::string(password), SaslprepResult::invalid_utf8};
  const std::string input(password);
  // libidn's decoder rejects malformed UTF-8 (as pg_utf8_islegal does).
  std::unique_ptr<uint32_t, void (*)(void*)> ucs4(
      stringprep_utf8_to_ucs4(input.c_str(), static_cast<ssize_t>(input.size()), nullptr), std::free);
  if (!ucs4) return {input, SaslprepResult::invalid_utf8};
  char* output = nullptr;
  // STRINGPREP_NO_UNASSIGNED: a stored string must not hold code points that
  // Unicode 3.2 left unassigned (RFC 4013 section 2.5; pg_saslprep step 5).
  const int rc = stringprep_profile(input.c_str(), &output, "SASLprep", STRINGPREP_NO_UNASSIGNED);
  std::unique_ptr<char, void (*)(void*)> owned(output, std::free);
  if (rc == STRINGPREP_MALLOC_ERROR) throw std::bad_alloc();
  if (rc != STRINGPREP_OK || output == nullptr) {
    // Invalid UTF-8 shows up here too when the decoder above accepted a form
    // (overlong, surrogate) that stringprep rejects.
    return {input, rc == STRINGPREP_ICONV_ERROR ? SaslprepResult::invalid_utf8 : SaslprepResult::prohibited};
  }
  return {std::string(output), SaslprepResult::normalized};
}

}  // namespace tally
