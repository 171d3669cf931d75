#include "protocol/frontend_messages.hpp"

#include "protocol/message_buffer.hpp"

namespace tally::protocol::frontend {

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};

// Counts on the wire are unsigned 16-bit (PostgreSQL reads them with pq_getmsgint(2)).
size_t count16(MessageReader& in) { return static_cast<uint16_t>(in.int16()); }

void put_count16(MessageWriter& out, size_t count) {
  if (count > 0xFFFF) throw protocol_violation("too many items for one message");
  out.int16(static_cast<int16_t>(static_cast<uint16_t>(count)));
}

}  // namespace

StartupPacket decode_startup_packet(std::string_view body) {
  MessageReader in(body);
  int32_t code = in.int32();
  switch (code) {
    case kSslRequestCode:
      in.expect_end();
      return SslRequest{};
    case kGssEncRequestCode:
      in.expect_end();
      return GssEncRequest{};
    case kCancelRequestCode: {
      CancelRequest cancel;
      cancel.process_id = in.int32();
      cancel.secret_key = in.int32();
      in.expect_end();
      return cancel;
    }
    default:
      break;
  }
  StartupMessage startup;
  startup.version = code;
  // Name/value pairs ending with an empty name. Only the 3.x layout is known;
  // the session rejects other versions with the version in the message.
  if ((code >> 16) != 3) return startup;
  while (true) {
    std::string_view name = in.cstring();
    if (name.empty()) break;
    std::string_view value = in.cstring();
    startup.parameters.emplace_back(name, value);
  }
  in.expect_end();
  return startup;
}

std::string encode_startup_packet(const StartupPacket& packet) {
  std::string body;
  std::visit(Overloaded{
                 [&](const StartupMessage& m) {
                   MessageWriter::put_int32(body, m.version);
                   for (const auto& [name, value] : m.parameters) {
                     body.append(name).push_back('\0');
                     body.append(value).push_back('\0');
                   }
                   body.push_back('\0');
                 },
                 [&](const SslRequest&) { MessageWriter::put_int32(body, kSslRequestCode); },
                 [&](const GssEncRequest&) { MessageWriter::put_int32(body, kGssEncRequestCode); },
                 [&](const CancelRequest& m) {
                   MessageWriter::put_int32(body, kCancelRequestCode);
                   MessageWriter::put_int32(body, m.process_id);
                   MessageWriter::put_int32(body, m.secret_key);
                 },
             },
             packet);
  std::string out;
  MessageWriter::put_int32(out, static_cast<int32_t>(body.size() + 4));
  return out + body;
}

Message decode(char type, std::string_view body) {
  MessageReader in(body);
  Message message;
  switch (type) {
    case 'Q':
      message = Query{std::string(in.cstring())};
      break;
    case 'P': {
      Parse m;
      m.name = in.cstring();
      m.query = in.cstring();
      size_t n = count16(in);
      m.param_types.reserve(n);
      for (size_t i = 0; i < n; ++i) m.param_types.push_back(static_cast<uint32_t>(in.int32()));
      message = std::move(m);
      break;
    }
    case 'B': {
      Bind m;
      m.portal = in.cstring();
      m.statement = in.cstring();
      size_t n = count16(in);
      for (size_t i = 0; i < n; ++i) m.param_formats.push_back(in.int16());
      n = count16(in);
      m.params.reserve(n);
      for (size_t i = 0; i < n; ++i) m.params.push_back(in.nullable_bytes("parameter length in Bind message"));
      n = count16(in);
      for (size_t i = 0; i < n; ++i) m.result_formats.push_back(in.int16());
      message = std::move(m);
      break;
    }
    // Designated initializers are evaluated in order: fields read as they come.
    case 'D':
      message = Describe{.kind = static_cast<char>(in.byte()), .name = std::string(in.cstring())};
      break;
    case 'E':
      message = Execute{.portal = std::string(in.cstring()), .max_rows = in.int32()};
      break;
    case 'C':
      message = Close{.kind = static_cast<char>(in.byte()), .name = std::string(in.cstring())};
      break;
    case 'S':
      message = Sync{};
      break;
    case 'H':
      message = Flush{};
      break;
    case 'X':
      message = Terminate{};
      break;
    case 'd':
      message = CopyData{std::string(in.rest())};
      break;
    case 'c':
      message = CopyDone{};
      break;
    case 'f':
      message = CopyFail{std::string(in.cstring())};
      break;
    case 'p':
      message = PasswordMessage{std::string(in.rest())};
      break;
    case 'F':
      message = FunctionCall{std::string(in.rest())};
      break;
    default:
      throw protocol_violation("invalid frontend message type " +
                               std::to_string(static_cast<unsigned char>(type)));
  }
  in.expect_end();
  return message;
}

std::string encode(const Message& message) {
  std::string out;
  MessageWriter w(out);
  std::visit(Overloaded{
                 [&](const Query& m) { w.begin('Q').cstring(m.sql); },
                 [&](const Parse& m) {
                   w.begin('P').cstring(m.name).cstring(m.query);
                   put_count16(w, m.param_types.size());
                   for (uint32_t t : m.param_types) w.int32(static_cast<int32_t>(t));
                 },
                 [&](const Bind& m) {
                   w.begin('B').cstring(m.portal).cstring(m.statement);
                   put_count16(w, m.param_formats.size());
                   for (int16_t f : m.param_formats) w.int16(f);
                   put_count16(w, m.params.size());
                   for (const auto& p : m.params) {
                     if (!p) {
                       w.int32(-1);
                     } else {
                       w.int32(static_cast<int32_t>(p->size())).bytes(*p);
                     }
                   }
                   put_count16(w, m.result_formats.size());
                   for (int16_t f : m.result_formats) w.int16(f);
                 },
                 [&](const Describe& m) {
                   w.begin('D').byte(static_cast<uint8_t>(m.kind)).cstring(m.name);
                 },
                 [&](const Execute& m) { w.begin('E').cstring(m.portal).int32(m.max_rows); },
                 [&](const Close& m) {
                   w.begin('C').byte(static_cast<uint8_t>(m.kind)).cstring(m.name);
                 },
                 [&](const Sync&) { w.begin('S'); },
                 [&](const Flush&) { w.begin('H'); },
                 [&](const Terminate&) { w.begin('X'); },
                 [&](const CopyData& m) { w.begin('d').bytes(m.data); },
                 [&](const CopyDone&) { w.begin('c'); },
                 [&](const CopyFail& m) { w.begin('f').cstring(m.message); },
                 [&](const PasswordMessage& m) { w.begin('p').bytes(m.data); },
                 [&](const FunctionCall& m) { w.begin('F').bytes(m.body); },
             },
             message);
  w.end();
  return out;
}

std::string decode_password(std::string_view body) {
  MessageReader in(body);
  std::string password(in.cstring());
  in.expect_end();
  return password;
}

SaslInitialResponse decode_sasl_initial_response(std::string_view body) {
  MessageReader in(body);
  SaslInitialResponse m;
  m.mechanism = in.cstring();
  int32_t length = in.int32();
  if (length == -1) {
    m.data = std::nullopt;
  } else if (length < 0) {
    throw protocol_violation("invalid SASL response length");
  } else {
    m.data = std::string(in.bytes(static_cast<size_t>(length)));
  }
  in.expect_end();
  return m;
}

std::string encode_sasl_initial_response(const SaslInitialResponse& message) {
  std::string body = message.mechanism;
  body.push_back('\0');
  MessageWriter::put_int32(body, message.data ? static_cast<int32_t>(message.data->size()) : -1);
  if (message.data) body += *message.data;
  return body;
}

}  // namespace tally::protocol::frontend
