#pragma once
// Framing over a ByteStream: buffered input split into startup packets and
// typed messages (with length checks), and an output buffer that is written
// when a read would block, so pipelined clients get few large writes.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "protocol/byte_stream.hpp"

namespace tally::protocol {

class MessageChannel {
 public:
  MessageChannel(ByteStream& stream, uint32_t max_message_bytes)
      : stream_(stream), max_message_bytes_(max_message_bytes) {}

  // The body of a startup packet (after its length word); nullopt when the
  // peer closed before sending anything. FATAL 08P01 on an invalid length.
  std::optional<std::string> read_startup_packet();
  // A typed message; false when the peer closed at a message boundary.
  // FATAL 08P01 for a length below 4 or above max_message_bytes;
  // ConnectionLost when the stream ends inside a message.
  bool read_message(char& type, std::string& body) {
    return read_message(type, body, max_message_bytes_);
  }
  // The same with a smaller bound, checked at the length word before any
  // buffer grows: before authentication a client may not make the server
  // allocate more than PostgreSQL's PG_MAX_AUTH_TOKEN_LENGTH.
  bool read_message(char& type, std::string& body, uint32_t max_body_bytes);

  // Backend messages are appended here and written by flush().
  std::string& out() { return out_; }
  void flush();
  // Writes early when a large result accumulates.
  void flush_if_large();
  // Bytes received but not yet consumed (unencrypted data after SSLRequest).
  bool has_buffered_input() const { return in_pos_ < in_end_; }
  ByteStream& stream() { return stream_; }

 private:
  // Ensures count bytes are buffered; false at EOF (before any of them when
  // at_boundary, which is the only clean EOF).
  bool fill(size_t count);
  std::string_view take(size_t count);

  ByteStream& stream_;
  uint32_t max_message_bytes_;
  // Received bytes: [in_pos_, in_end_) are not consumed yet.
  std::unique_ptr<char[]> in_;
  size_t in_capacity_ = 0;
  size_t in_end_ = 0;
  size_t in_pos_ = 0;
  std::string out_;
};

}  // namespace tally::protocol
