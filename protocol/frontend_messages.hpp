#pragma once
// Messages a PostgreSQL client sends (protocol v3), as structs with
// bounds-checked decode and encode. decode() takes the body after the type
// byte and length word and checks that the body is fully consumed; encode()
// produces the framed bytes (clients' side: tests, the fuzzer, benchmarks).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace tally::protocol::frontend {

// Codes of the untyped packets that open a connection.
constexpr int32_t kProtocolVersion3 = 3 << 16;  // 196608
constexpr int32_t kCancelRequestCode = (1234 << 16) | 5678;
constexpr int32_t kSslRequestCode = (1234 << 16) | 5679;
constexpr int32_t kGssEncRequestCode = (1234 << 16) | 5680;
// PostgreSQL's MAX_STARTUP_PACKET_LENGTH: a longer startup packet is hostile.
constexpr int32_t kMaxStartupPacketLength = 10000;
// PostgreSQL's PG_MAX_AUTH_TOKEN_LENGTH: the largest password or SASL message
// read before authentication.
constexpr uint32_t kMaxAuthTokenLength = 65535;

struct StartupMessage {
  int32_t version = kProtocolVersion3;
  std::vector<std::pair<std::string, std::string>> parameters;
  bool operator==(const StartupMessage&) const = default;
};
struct SslRequest {
  bool operator==(const SslRequest&) const = default;
};
struct GssEncRequest {
  bool operator==(const GssEncRequest&) const = default;
};
struct CancelRequest {
  int32_t process_id = 0;
  int32_t secret_key = 0;
  bool operator==(const CancelRequest&) const = default;
};
using StartupPacket = std::variant<StartupMessage, SslRequest, GssEncRequest, CancelRequest>;

// body: the packet after its length word.
StartupPacket decode_startup_packet(std::string_view body);
std::string encode_startup_packet(const StartupPacket& packet);

struct Query {
  std::string sql;
  bool operator==(const Query&) const = default;
};
struct Parse {
  std::string name;
  std::string query;
  std::vector<uint32_t> param_types;
  bool operator==(const Parse&) const = default;
};
struct Bind {
  std::string portal;
  std::string statement;
  std::vector<int16_t> param_formats;  // raw codes; the session validates them
  std::vector<std::optional<std::string>> params;
  std::vector<int16_t> result_formats;
  bool operator==(const Bind&) const = default;
};
struct Describe {
  char kind = 'S';  // 'S' statement or 'P' portal (validated by the session)
  std::string name;
  bool operator==(const Describe&) const = default;
};
struct Execute {
  std::string portal;
  int32_t max_rows = 0;
  bool operator==(const Execute&) const = default;
};
struct Close {
  char kind = 'S';
  std::string name;
  bool operator==(const Close&) const = default;
};
struct Sync {
  bool operator==(const Sync&) const = default;
};
struct Flush {
  bool operator==(const Flush&) const = default;
};
struct Terminate {
  bool operator==(const Terminate&) const = default;
};
struct CopyData {
  std::string data;
  bool operator==(const CopyData&) const = default;
};
struct CopyDone {
  bool operator==(const CopyDone&) const = default;
};
struct CopyFail {
  std::string message;
  bool operator==(const CopyFail&) const = default;
};
// 'p': a password, SASLInitialResponse or SASLResponse; which one depends on
// the authentication exchange, so the body stays raw here (see below).
struct PasswordMessage {
  std::string data;
  bool operator==(const PasswordMessage&) const = default;
};
// 'F': accepted by the framing, answered 0A000 by the session.
struct FunctionCall {
  std::string body;
  bool operator==(const FunctionCall&) const = default;
};

using Message = std::variant<Query, Parse, Bind, Describe, Execute, Close, Sync, Flush, Terminate,
                             CopyData, CopyDone, CopyFail, PasswordMessage, FunctionCall>;

// Throws FATAL 08P01 for an unknown type or a malformed body.
Message decode(char type, std::string_view body);
std::string encode(const Message& message);

// The three readings of a 'p' body.
std::string decode_password(std::string_view body);
struct SaslInitialResponse {
  std::string mechanism;
  std::optional<std::string> data;  // length -1 = absent
  bool operator==(const SaslInitialResponse&) const = default;
};
SaslInitialResponse decode_sasl_initial_response(std::string_view body);
std::string encode_sasl_initial_response(const SaslInitialResponse& message);  // body only

}  // namespace tally::protocol::frontend
