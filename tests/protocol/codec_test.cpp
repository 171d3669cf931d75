// Round trip of every v3 message through encode/decode, and the decoder's
// refusal of truncated, padded and malformed bodies (FATAL 08P01).
#include <gtest/gtest.h>

#include <cctype>

#include "protocol/backend_messages.hpp"
#include "protocol/error_encoding.hpp"
#include "protocol/frontend_messages.hpp"
#include "protocol/message_buffer.hpp"

namespace tally::protocol {
namespace {

// Splits one framed message into (type, body), checking the length word.
std::pair<char, std::string> unframe(const std::string& framed) {
  MessageReader in(framed);
  char type = static_cast<char>(in.byte());
  int32_t length = in.int32();
  EXPECT_EQ(static_cast<size_t>(length), framed.size() - 1);
  return {type, std::string(in.rest())};
}

void expect_violation(const std::function<void()>& f) {
  try {
    f();
    FAIL() << "expected 08P01";
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::protocol_violation);
    EXPECT_EQ(e.severity(), Severity::fatal);
  }
}

class FrontendRoundTrip : public ::testing::TestWithParam<frontend::Message> {};

TEST_P(FrontendRoundTrip, EncodeDecode) {
  const frontend::Message& original = GetParam();
  std::string framed = frontend::encode(original);
  auto [type, body] = unframe(framed);
  EXPECT_EQ(frontend::decode(type, body), original);
}

TEST_P(FrontendRoundTrip, TruncatedOrPaddedBodyIsRejected) {
  std::string framed = frontend::encode(GetParam());
  auto [type, body] = unframe(framed);
  // Every message with a body must notice a missing last byte; every message
  // must notice a trailing one (except those whose body is "the rest").
  bool rest_body = type == 'd' || type == 'p' || type == 'F';
  if (!body.empty() && !rest_body) {
    expect_violation([&] { frontend::decode(type, body.substr(0, body.size() - 1)); });
  }
  if (!rest_body) expect_violation([&] { frontend::decode(type, body + "x"); });
}

// Test names: the message's position in the list and its type letter.
std::string message_name(size_t index, const std::string& framed) {
  char type = framed[0];
  std::string letter = std::isalnum(static_cast<unsigned char>(type))
                           ? std::string(1, type)
                           : std::to_string(static_cast<int>(type));
  return std::to_string(index) + "_type_" + letter;
}

INSTANTIATE_TEST_SUITE_P(
    AllMessages, FrontendRoundTrip,
    ::testing::Values(
        frontend::Message{frontend::Query{"SELECT 1; SELECT 2"}},
        frontend::Message{frontend::Query{""}},
        frontend::Message{frontend::Parse{"s1", "SELECT $1::int + $2", {23, 0}}},
        frontend::Message{frontend::Parse{"", "SELECT 1", {}}},
        frontend::Message{frontend::Bind{"p", "s1", {0, 1}, {std::string("42"), std::nullopt},
                                         {1}}},
        frontend::Message{frontend::Bind{"", "", {}, {std::string("")}, {}}},
        frontend::Message{frontend::Describe{'S', "s1"}},
        frontend::Message{frontend::Describe{'P', ""}},
        frontend::Message{frontend::Execute{"p", 100}},
        frontend::Message{frontend::Close{'P', "p"}}, frontend::Message{frontend::Sync{}},
        frontend::Message{frontend::Flush{}}, frontend::Message{frontend::Terminate{}},
        frontend::Message{frontend::CopyData{std::string("1\t2\n\0x", 6)}},
        frontend::Message{frontend::CopyDone{}},
        frontend::Message{frontend::CopyFail{"client gave up"}},
        frontend::Message{frontend::PasswordMessage{std::string("secret\0", 7)}},
        frontend::Message{frontend::FunctionCall{"abc"}}),
    [](const auto& info) { return message_name(info.index, frontend::encode(info.param)); });

TEST(StartupPacket, RoundTrip) {
  std::vector<frontend::StartupPacket> packets = {
      frontend::StartupMessage{frontend::kProtocolVersion3,
                               {{"user", "tally"}, {"database", "db"}, {"options", "-c x=1"}}},
      frontend::SslRequest{}, frontend::GssEncRequest{},
      frontend::CancelRequest{1234, -99}};
  for (const auto& packet : packets) {
    std::string bytes = frontend::encode_startup_packet(packet);
    MessageReader in(bytes);
    EXPECT_EQ(static_cast<size_t>(in.int32()), bytes.size());
    EXPECT_EQ(frontend::decode_startup_packet(in.rest()), packet);
  }
}

TEST(StartupPacket, MalformedIsRejected) {
  // Parameters without the terminating empty name.
  std::string body;
  MessageWriter::put_int32(body, frontend::kProtocolVersion3);
  body.append("user\0tally\0", 11);
  expect_violation([&] { frontend::decode_startup_packet(body); });
  // A CancelRequest with a trailing byte.
  std::string cancel = frontend::encode_startup_packet(frontend::CancelRequest{1, 2}).substr(4);
  expect_violation([&] { frontend::decode_startup_packet(cancel + "x"); });
  expect_violation([&] { frontend::decode_startup_packet(cancel.substr(0, 10)); });
  expect_violation([&] { frontend::decode_startup_packet("ab"); });
}

TEST(FrontendDecode, RejectsBadLengthsAndTypes) {
  expect_violation([] { frontend::decode('?', ""); });
  // A Bind parameter claiming more bytes than the message holds.
  std::string body("\0\0\0\0\0\1\0\0\0\x10" "ab\0\0", 14);
  expect_violation([&] { frontend::decode('B', body); });
  // A negative parameter length other than -1.
  std::string negative("\0\0\0\0\0\1\xff\xff\xff\xfe\0\0", 12);
  expect_violation([&] { frontend::decode('B', negative); });
  // An unterminated string.
  expect_violation([] { frontend::decode('Q', "SELECT 1"); });
}

TEST(SaslMessages, InitialResponseRoundTrip) {
  frontend::SaslInitialResponse with{"SCRAM-SHA-256", "n,,n=,r=abc"};
  EXPECT_EQ(frontend::decode_sasl_initial_response(frontend::encode_sasl_initial_response(with)),
            with);
  frontend::SaslInitialResponse without{"SCRAM-SHA-256", std::nullopt};
  EXPECT_EQ(
      frontend::decode_sasl_initial_response(frontend::encode_sasl_initial_response(without)),
      without);
  expect_violation([] { frontend::decode_sasl_initial_response(std::string("M\0\0\0\0\x09" "ab", 8)); });
}

class BackendRoundTrip : public ::testing::TestWithParam<backend::Message> {};

TEST_P(BackendRoundTrip, EncodeDecode) {
  std::string framed = backend::encode(GetParam());
  auto [type, body] = unframe(framed);
  EXPECT_EQ(backend::decode(type, body), GetParam());
  auto all = backend::decode_all(framed + framed);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1], GetParam());
  if (!body.empty()) {
    EXPECT_THROW(backend::decode_all(framed.substr(0, framed.size() - 1)), Error);
  }
}

FieldDescription field(std::string name, uint32_t oid, int16_t size, Format format) {
  FieldDescription f;
  f.name = std::move(name);
  f.type_oid = oid;
  f.type_size = size;
  f.format = format;
  f.table_oid = 16384;
  f.column_number = 2;
  return f;
}

INSTANTIATE_TEST_SUITE_P(
    AllMessages, BackendRoundTrip,
    ::testing::Values(
        backend::Message{backend::Authentication{backend::AuthCode::ok, ""}},
        backend::Message{backend::Authentication{backend::AuthCode::md5_password, "salt"}},
        backend::Message{backend::Authentication{backend::AuthCode::sasl,
                                                 std::string("SCRAM-SHA-256\0\0", 15)}},
        backend::Message{backend::ParameterStatus{"server_version", "15.0"}},
        backend::Message{backend::BackendKeyData{77, -5}},
        backend::Message{backend::ReadyForQuery{TransactionStatus::failed}},
        backend::Message{backend::RowDescription{
            {field("a", 23, 4, Format::text), field("b", 25, -1, Format::binary)}}},
        backend::Message{backend::RowDescription{}},
        backend::Message{backend::DataRow{{std::string("1"), std::nullopt, std::string("")}}},
        backend::Message{backend::CommandComplete{"SELECT 3"}},
        backend::Message{backend::EmptyQueryResponse{}},
        backend::Message{backend::ErrorResponse{{{'S', "ERROR"}, {'C', "42601"}, {'M', "x"}}}},
        backend::Message{backend::NoticeResponse{{{'S', "NOTICE"}, {'M', "y"}}}},
        backend::Message{backend::ParseComplete{}}, backend::Message{backend::BindComplete{}},
        backend::Message{backend::CloseComplete{}}, backend::Message{backend::NoData{}},
        backend::Message{backend::PortalSuspended{}},
        backend::Message{backend::ParameterDescription{{23, 25, 0}}},
        backend::Message{backend::CopyInResponse{Format::text, {Format::text, Format::text}}},
        backend::Message{backend::CopyOutResponse{Format::binary, {Format::binary}}},
        backend::Message{backend::CopyData{"a\tb\n"}}, backend::Message{backend::CopyDone{}},
        backend::Message{backend::NegotiateProtocolVersion{0, {"_pq_.x"}}}),
    [](const auto& info) { return message_name(info.index, backend::encode(info.param)); });

TEST(ErrorEncoding, FieldsInPostgresOrder) {
  Error e(SqlState::syntax_error, "syntax error at or near \"x\"");
  e.with_detail("d").with_hint("h").with_position(8);
  std::string out;
  encode_error(e, out);
  auto messages = backend::decode_all(out);
  ASSERT_EQ(messages.size(), 1u);
  auto* response = std::get_if<backend::ErrorResponse>(&messages[0]);
  ASSERT_NE(response, nullptr);
  std::string codes;
  for (const auto& [code, value] : response->fields) codes.push_back(code);
  EXPECT_EQ(codes, "SVCMDHP");
  EXPECT_EQ(response->field('C'), "42601");
  EXPECT_EQ(response->field('S'), "ERROR");
  EXPECT_EQ(response->field('P'), "8");

  Error notice(SqlState::warning, "careful", Severity::warning);
  out.clear();
  encode_error(notice, out);
  EXPECT_EQ(out[0], 'N');
}

TEST(MessageReader, ChecksEveryRead) {
  MessageReader in(std::string_view("\x01\x02", 2));
  EXPECT_EQ(in.int16(), 0x0102);
  EXPECT_NO_THROW(in.expect_end());
  expect_violation([&] { in.byte(); });
}

}  // namespace
}  // namespace tally::protocol
