#include "protocol/message_channel.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "common/statement_timeline.hpp"
#include "protocol/frontend_messages.hpp"
#include "protocol/message_buffer.hpp"

namespace tally::protocol {

namespace {
// Read granularity and early-flush threshold (PostgreSQL's PQ_SEND_BUFFER_SIZE is 8 KiB;
// a larger batch costs nothing and saves syscalls on wide results).
constexpr size_t kReadChunk = 16 * 1024;
constexpr size_t kFlushThreshold = 64 * 1024;

int32_t be32(std::string_view b) {
  auto p = reinterpret_cast<const unsigned char*>(b.data());
  return static_cast<int32_t>((uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
                              (uint32_t{p[2]} << 8) | uint32_t{p[3]});
}
}  // namespace

bool MessageChannel::fill(size_t count) {
  if (in_pos_ == in_end_) in_pos_ = in_end_ = 0;
  while (in_end_ - in_pos_ < count) {
    // About to block: whatever the client should see must be on the wire first.
    if (!out_.empty()) flush();
    if (in_pos_ > 0) {
      std::memmove(in_.get(), in_.get() + in_pos_, in_end_ - in_pos_);
      in_end_ -= in_pos_;
      in_pos_ = 0;
    }
    const size_t want = std::max(kReadChunk, count - in_end_);
    if (in_end_ + want > in_capacity_) {
      // Grows for a large message and keeps the size, as the session will
      // likely send more like it. Never zero-filled (a std::string resize
      // wrote 16 KiB of zeros before every read).
      const size_t capacity = std::max(in_end_ + want, 2 * in_capacity_);
      auto grown = std::make_unique_for_overwrite<char[]>(capacity);
      if (in_end_ > 0) std::memcpy(grown.get(), in_.get(), in_end_);
      in_ = std::move(grown);
      in_capacity_ = capacity;
    }
    const size_t got = stream_.read_some(std::span<char>(in_.get() + in_end_, want));
    if (got == 0) return false;
    in_end_ += got;
  }
  return true;
}

std::string_view MessageChannel::take(size_t count) {
  std::string_view view(in_.get() + in_pos_, count);
  in_pos_ += count;
  return view;
}

std::optional<std::string> MessageChannel::read_startup_packet() {
  if (!fill(4)) {
    if (in_end_ == in_pos_) return std::nullopt;
    throw ConnectionLost("incomplete startup packet");
  }
  int32_t length = be32(take(4));
  if (length < 8 || length > frontend::kMaxStartupPacketLength) {
    throw protocol_violation("invalid length of startup packet");
  }
  if (!fill(static_cast<size_t>(length) - 4)) throw ConnectionLost("incomplete startup packet");
  return std::string(take(static_cast<size_t>(length) - 4));
}

bool MessageChannel::read_message(char& type, std::string& body, uint32_t max_body_bytes) {
  if (!fill(1)) return false;
  type = take(1)[0];
  if (!fill(4)) throw ConnectionLost("unexpected EOF within message length word");
  int32_t length = be32(take(4));
  if (length < 4 || static_cast<uint64_t>(length) - 4 > std::min(max_body_bytes, max_message_bytes_)) {
    throw protocol_violation("invalid message length");
  }
  size_t body_length = static_cast<size_t>(length) - 4;
  if (!fill(body_length)) throw ConnectionLost("incomplete message from client");
  body.assign(take(body_length));
  return true;
}

void MessageChannel::flush() {
  if (out_.empty()) return;
  std::string pending;
  pending.swap(out_);
  stream_.write_all(pending);
  statement_timeline().flushed();
  // Keep the capacity for the next batch.
  pending.clear();
  out_.swap(pending);
}

void MessageChannel::flush_if_large() {
  if (out_.size() >= kFlushThreshold) flush();
}

}  // namespace tally::protocol
