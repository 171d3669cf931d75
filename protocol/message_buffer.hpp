#pragma once
// Bounds-checked reading and length-patching writing of v3 message bodies.
// Every read checks the bytes left; a short or malformed body is a FATAL
// 08P01 protocol_violation (the connection cannot be trusted to stay in sync).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace tally::protocol {

// The error every decoder throws for a malformed message.
Error protocol_violation(std::string message);

// Reads big-endian integers and strings from one message body.
class MessageReader {
 public:
  explicit MessageReader(std::string_view body) : data_(body) {}

  uint8_t byte();
  int16_t int16();
  int32_t int32();
  // A NUL-terminated string (the NUL is consumed, not returned).
  std::string_view cstring();
  std::string_view bytes(size_t count);
  std::string_view rest();
  // An Int32 length then that many bytes; length -1 is NULL (nullopt). Any
  // other negative length is FATAL 08P01 "invalid <what>".
  std::optional<std::string> nullable_bytes(std::string_view what);
  size_t remaining() const { return data_.size() - pos_; }
  // "Message fully consumed": trailing bytes are malformed input.
  void expect_end() const;

 private:
  void need(size_t count) const;
  std::string_view data_;
  size_t pos_ = 0;
};

// Appends messages to an output buffer: begin() writes the type byte and a
// length placeholder, end() patches the length once the body is written.
class MessageWriter {
 public:
  explicit MessageWriter(std::string& out) : out_(out) {}

  MessageWriter& begin(char type);
  MessageWriter& byte(uint8_t value);
  MessageWriter& int16(int16_t value);
  MessageWriter& int32(int32_t value);
  MessageWriter& cstring(std::string_view value);  // appends the terminating NUL
  MessageWriter& bytes(std::string_view value);
  void end();

  // Big-endian helpers, also used for untyped startup packets.
  static void put_int32(std::string& out, int32_t value);
  static void put_int16(std::string& out, int16_t value);

 private:
  std::string& out_;
  size_t start_ = 0;
  bool open_ = false;
};

}  // namespace tally::protocol
