#include "protocol/message_buffer.hpp"

#include <cassert>
#include <cstring>

namespace tally::protocol {

Error protocol_violation(std::string message) {
  return Error(SqlState::protocol_violation, std::move(message), Severity::fatal);
}

void MessageReader::need(size_t count) const {
  if (count > data_.size() - pos_) throw protocol_violation("insufficient data left in message");
}

uint8_t MessageReader::byte() {
  need(1);
  return static_cast<uint8_t>(data_[pos_++]);
}

int16_t MessageReader::int16() {
  need(2);
  auto p = reinterpret_cast<const unsigned char*>(data_.data() + pos_);
  pos_ += 2;
  return static_cast<int16_t>((p[0] << 8) | p[1]);
}

int32_t MessageReader::int32() {
  need(4);
  auto p = reinterpret_cast<const unsigned char*>(data_.data() + pos_);
  pos_ += 4;
  return static_cast<int32_t>((uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
                              (uint32_t{p[2]} << 8) | uint32_t{p[3]});
}

std::string_view MessageReader::cstring() {
  const void* nul = std::memchr(data_.data() + pos_, '\0', data_.size() - pos_);
  if (nul == nullptr) throw protocol_violation("invalid string in message");
  size_t length = static_cast<const char*>(nul) - (data_.data() + pos_);
  std::string_view value = data_.substr(pos_, length);
  pos_ += length + 1;
  return value;
}

std::string_view MessageReader::bytes(size_t count) {
  need(count);
  std::string_view value = data_.substr(pos_, count);
  pos_ += count;
  return value;
}

std::string_view MessageReader::rest() { return bytes(remaining()); }

std::optional<std::string> MessageReader::nullable_bytes(std::string_view what) {
  const int32_t length = int32();
  if (length == -1) return std::nullopt;
  if (length < 0) throw protocol_violation("invalid " + std::string(what));
  return std::string(bytes(static_cast<size_t>(length)));
}

void MessageReader::expect_end() const {
  if (pos_ != data_.size()) throw protocol_violation("invalid message format");
}

void MessageWriter::put_int32(std::string& out, int32_t value) {
  uint32_t v = static_cast<uint32_t>(value);
  char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
               static_cast<char>(v)};
  out.append(b, 4);
}

void MessageWriter::put_int16(std::string& out, int16_t value) {
  uint16_t v = static_cast<uint16_t>(value);
  char b[2] = {static_cast<char>(v >> 8), static_cast<char>(v)};
  out.append(b, 2);
}

MessageWriter& MessageWriter::begin(char type) {
  assert(!open_);
  out_.push_back(type);
  start_ = out_.size();
  out_.append(4, '\0');
  open_ = true;
  return *this;
}

MessageWriter& MessageWriter::byte(uint8_t value) {
  out_.push_back(static_cast<char>(value));
  return *this;
}

MessageWriter& MessageWriter::int16(int16_t value) {
  put_int16(out_, value);
  return *this;
}

MessageWriter& MessageWriter::int32(int32_t value) {
  put_int32(out_, value);
  return *this;
}

MessageWriter& MessageWriter::cstring(std::string_view value) {
  out_.append(value);
  out_.push_back('\0');
  return *this;
}

MessageWriter& MessageWriter::bytes(std::string_view value) {
  out_.append(value);
  return *this;
}

void MessageWriter::end() {
  assert(open_);
  uint32_t length = static_cast<uint32_t>(out_.size() - start_);
  out_[start_] = static_cast<char>(length >> 24);
  out_[start_ + 1] = static_cast<char>(length >> 16);
  out_[start_ + 2] = static_cast<char>(length >> 8);
  out_[start_ + 3] = static_cast<char>(length);
  open_ = false;
}

}  // namespace tally::protocol
