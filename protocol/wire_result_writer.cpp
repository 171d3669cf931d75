#include "protocol/wire_result_writer.hpp"

#include <cstdio>

#include "protocol/backend_messages.hpp"
#include "protocol/error_encoding.hpp"
#include "protocol/message_buffer.hpp"

namespace tally::protocol {

std::optional<std::string_view> WireCopyInReader::next() {
  if (finished_) return std::nullopt;
  char type = 0;
  while (true) {
    if (!channel_.read_message(type, body_)) {
      finished_ = true;
      throw ConnectionLost("unexpected EOF on client connection during COPY");
    }
    switch (type) {
      case 'd':
        return std::string_view(body_);
      case 'c':
        if (!body_.empty()) throw protocol_violation("invalid message format");
        finished_ = true;
        return std::nullopt;
      case 'f': {
        finished_ = true;
        std::string_view message(body_);
        // The message is NUL-terminated on the wire.
        if (!message.empty() && message.back() == '\0') message.remove_suffix(1);
        throw Error(SqlState::query_canceled,
                    "COPY from stdin failed: " + std::string(message));
      }
      case 'H':
      case 'S':
        // libpq may send Flush/Sync without noticing that the command was COPY;
        // PostgreSQL ignores them here, and so do we.
        continue;
      default: {
        finished_ = true;
        char text[80];
        std::snprintf(text, sizeof text, "unexpected message type 0x%02X during COPY from stdin",
                      static_cast<unsigned char>(type));
        throw Error(SqlState::protocol_violation, text);
      }
    }
  }
}

void WireResultWriter::row_description(std::span<const FieldDescription> fields) {
  if (!in_execute_) backend::encode_row_description(fields, channel_.out());
}

void WireResultWriter::data_row(std::span<const std::optional<std::string_view>> fields) {
  backend::encode_data_row(fields, channel_.out());
  statement_timeline().row_buffered();
  channel_.flush_if_large();
}

void WireResultWriter::command_complete(std::string_view tag) {
  backend::encode(backend::CommandComplete{std::string(tag)}, channel_.out());
}

void WireResultWriter::empty_query() {
  backend::encode(backend::EmptyQueryResponse{}, channel_.out());
}

void WireResultWriter::notice(const Error& notice) { encode_error(notice, channel_.out()); }

void WireResultWriter::parameter_status(std::string_view name, std::string_view value) {
  backend::encode(backend::ParameterStatus{std::string(name), std::string(value)},
                  channel_.out());
}

CopyInReader& WireResultWriter::copy_in(Format format, int column_count) {
  backend::CopyInResponse response{format, std::vector<Format>(column_count, format)};
  backend::encode(response, channel_.out());
  channel_.flush();
  copy_in_.start();
  return copy_in_;
}

void WireResultWriter::copy_out_begin(Format format, int column_count) {
  backend::encode(backend::CopyOutResponse{format, std::vector<Format>(column_count, format)},
                  channel_.out());
}

void WireResultWriter::copy_out_data(std::string_view bytes) {
  backend::encode(backend::CopyData{std::string(bytes)}, channel_.out());
  channel_.flush_if_large();
}

void WireResultWriter::copy_out_end() { backend::encode(backend::CopyDone{}, channel_.out()); }

}  // namespace tally::protocol
