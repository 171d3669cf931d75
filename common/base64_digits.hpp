#pragma once
// RFC 4648's base64 alphabet, shared by SCRAM's messages (config/) and
// encode/decode(bytea, 'base64') (executor/), whose line and padding rules differ.

namespace tally {

inline constexpr char kBase64Digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The value of base64 digit `c`, or -1 for any other character.
inline int base64_digit_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace tally
