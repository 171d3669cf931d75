#pragma once
// Messages the server sends (protocol v3), as structs with encode and
// bounds-checked decode (decode serves tests and client-side tools).
// Hot paths (DataRow) also have direct encoders that avoid building structs.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/query_handler.hpp"

namespace tally::protocol::backend {

// Authentication request codes ('R').
enum class AuthCode : int32_t {
  ok = 0,
  cleartext_password = 3,
  md5_password = 5,
  sasl = 10,
  sasl_continue = 11,
  sasl_final = 12,
};

struct Authentication {
  AuthCode code = AuthCode::ok;
  std::string data;  // md5 salt (4 bytes), SASL mechanism list or SASL payload
  bool operator==(const Authentication&) const = default;
};
struct ParameterStatus {
  std::string name;
  std::string value;
  bool operator==(const ParameterStatus&) const = default;
};
struct BackendKeyData {
  int32_t process_id = 0;
  int32_t secret_key = 0;
  bool operator==(const BackendKeyData&) const = default;
};
struct ReadyForQuery {
  TransactionStatus status = TransactionStatus::idle;
  bool operator==(const ReadyForQuery&) const = default;
};
struct RowDescription {
  std::vector<FieldDescription> fields;
  bool operator==(const RowDescription& o) const;
};
struct DataRow {
  std::vector<std::optional<std::string>> values;
  bool operator==(const DataRow&) const = default;
};
struct CommandComplete {
  std::string tag;
  bool operator==(const CommandComplete&) const = default;
};
struct EmptyQueryResponse {
  bool operator==(const EmptyQueryResponse&) const = default;
};
// ErrorResponse ('E') and NoticeResponse ('N'): (field code, value) pairs.
struct ErrorResponse {
  std::vector<std::pair<char, std::string>> fields;
  bool operator==(const ErrorResponse&) const = default;
  // The value of one field, empty when absent.
  std::string field(char code) const;
};
struct NoticeResponse {
  std::vector<std::pair<char, std::string>> fields;
  bool operator==(const NoticeResponse&) const = default;
  std::string field(char code) const;
};
struct ParseComplete {
  bool operator==(const ParseComplete&) const = default;
};
struct BindComplete {
  bool operator==(const BindComplete&) const = default;
};
struct CloseComplete {
  bool operator==(const CloseComplete&) const = default;
};
struct NoData {
  bool operator==(const NoData&) const = default;
};
struct PortalSuspended {
  bool operator==(const PortalSuspended&) const = default;
};
struct ParameterDescription {
  std::vector<uint32_t> types;
  bool operator==(const ParameterDescription&) const = default;
};
struct CopyInResponse {
  Format format = Format::text;
  std::vector<Format> column_formats;
  bool operator==(const CopyInResponse&) const = default;
};
struct CopyOutResponse {
  Format format = Format::text;
  std::vector<Format> column_formats;
  bool operator==(const CopyOutResponse&) const = default;
};
struct CopyData {
  std::string data;
  bool operator==(const CopyData&) const = default;
};
struct CopyDone {
  bool operator==(const CopyDone&) const = default;
};
struct NegotiateProtocolVersion {
  int32_t newest_minor = 0;
  std::vector<std::string> unrecognized_options;
  bool operator==(const NegotiateProtocolVersion&) const = default;
};

using Message =
    std::variant<Authentication, ParameterStatus, BackendKeyData, ReadyForQuery, RowDescription,
                 DataRow, CommandComplete, EmptyQueryResponse, ErrorResponse, NoticeResponse,
                 ParseComplete, BindComplete, CloseComplete, NoData, PortalSuspended,
                 ParameterDescription, CopyInResponse, CopyOutResponse, CopyData, CopyDone,
                 NegotiateProtocolVersion>;

// Appends the framed message to out.
void encode(const Message& message, std::string& out);
std::string encode(const Message& message);
// Throws FATAL 08P01 for an unknown type or a malformed body.
Message decode(char type, std::string_view body);

// Direct encoders for the per-row path.
void encode_data_row(std::span<const std::optional<std::string_view>> values, std::string& out);
void encode_row_description(std::span<const FieldDescription> fields, std::string& out);

// Splits a byte string of framed backend messages (tests, tools). Throws
// FATAL 08P01 on a truncated frame.
std::vector<Message> decode_all(std::string_view bytes);

}  // namespace tally::protocol::backend
