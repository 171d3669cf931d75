#include "protocol/backend_messages.hpp"

#include "protocol/message_buffer.hpp"

namespace tally::protocol::backend {

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};

void put_count16(MessageWriter& out, size_t count) {
  if (count > 0x7FFF) throw Error(SqlState::too_many_columns, "too many columns in one message");
  out.int16(static_cast<int16_t>(count));
}

size_t count16(MessageReader& in) {
  int16_t n = in.int16();
  if (n < 0) throw protocol_violation("negative count in message");
  return static_cast<size_t>(n);
}

std::vector<std::pair<char, std::string>> decode_fields(MessageReader& in) {
  std::vector<std::pair<char, std::string>> fields;
  while (true) {
    char code = static_cast<char>(in.byte());
    if (code == '\0') break;
    fields.emplace_back(code, std::string(in.cstring()));
  }
  return fields;
}

void encode_fields(MessageWriter& w, const std::vector<std::pair<char, std::string>>& fields) {
  for (const auto& [code, value] : fields) w.byte(static_cast<uint8_t>(code)).cstring(value);
  w.byte(0);
}

Format format_of(int16_t code) {
  if (code != 0 && code != 1) throw protocol_violation("invalid format code in message");
  return static_cast<Format>(code);
}

template <class CopyResponse>
CopyResponse decode_copy_response(MessageReader& in) {
  CopyResponse m;
  uint8_t overall = in.byte();
  m.format = format_of(overall);
  size_t n = count16(in);
  for (size_t i = 0; i < n; ++i) m.column_formats.push_back(format_of(in.int16()));
  return m;
}

template <class CopyResponse>
void encode_copy_response(MessageWriter& w, char type, const CopyResponse& m) {
  w.begin(type).byte(static_cast<uint8_t>(m.format));
  put_count16(w, m.column_formats.size());
  for (Format f : m.column_formats) w.int16(static_cast<int16_t>(f));
}

std::string field_value(const std::vector<std::pair<char, std::string>>& fields, char code) {
  for (const auto& [c, value] : fields) {
    if (c == code) return value;
  }
  return {};
}

}  // namespace

bool RowDescription::operator==(const RowDescription& o) const {
  if (fields.size() != o.fields.size()) return false;
  for (size_t i = 0; i < fields.size(); ++i) {
    const auto& a = fields[i];
    const auto& b = o.fields[i];
    if (a.name != b.name || a.table_oid != b.table_oid || a.column_number != b.column_number ||
        a.type_oid != b.type_oid || a.type_size != b.type_size ||
        a.type_modifier != b.type_modifier || a.format != b.format) {
      return false;
    }
  }
  return true;
}

std::string ErrorResponse::field(char code) const { return field_value(fields, code); }
std::string NoticeResponse::field(char code) const { return field_value(fields, code); }

void encode_data_row(std::span<const std::optional<std::string_view>> values, std::string& out) {
  MessageWriter w(out);
  w.begin('D');
  put_count16(w, values.size());
  for (const auto& v : values) {
    if (!v) {
      w.int32(-1);
    } else {
      w.int32(static_cast<int32_t>(v->size())).bytes(*v);
    }
  }
  w.end();
}

void encode_row_description(std::span<const FieldDescription> fields, std::string& out) {
  MessageWriter w(out);
  w.begin('T');
  put_count16(w, fields.size());
  for (const auto& f : fields) {
    w.cstring(f.name)
        .int32(static_cast<int32_t>(f.table_oid))
        .int16(f.column_number)
        .int32(static_cast<int32_t>(f.type_oid))
        .int16(f.type_size)
        .int32(f.type_modifier)
        .int16(static_cast<int16_t>(f.format));
  }
  w.end();
}

void encode(const Message& message, std::string& out) {
  if (const auto* row = std::get_if<DataRow>(&message)) {
    std::vector<std::optional<std::string_view>> views(row->values.begin(), row->values.end());
    encode_data_row(views, out);
    return;
  }
  if (const auto* desc = std::get_if<RowDescription>(&message)) {
    encode_row_description(desc->fields, out);
    return;
  }
  MessageWriter w(out);
  std::visit(
      Overloaded{
          [&](const Authentication& m) {
            w.begin('R').int32(static_cast<int32_t>(m.code)).bytes(m.data);
          },
          [&](const ParameterStatus& m) { w.begin('S').cstring(m.name).cstring(m.value); },
          [&](const BackendKeyData& m) { w.begin('K').int32(m.process_id).int32(m.secret_key); },
          [&](const ReadyForQuery& m) { w.begin('Z').byte(static_cast<uint8_t>(m.status)); },
          [&](const RowDescription&) {},
          [&](const DataRow&) {},
          [&](const CommandComplete& m) { w.begin('C').cstring(m.tag); },
          [&](const EmptyQueryResponse&) { w.begin('I'); },
          [&](const ErrorResponse& m) { encode_fields(w.begin('E'), m.fields); },
          [&](const NoticeResponse& m) { encode_fields(w.begin('N'), m.fields); },
          [&](const ParseComplete&) { w.begin('1'); },
          [&](const BindComplete&) { w.begin('2'); },
          [&](const CloseComplete&) { w.begin('3'); },
          [&](const NoData&) { w.begin('n'); },
          [&](const PortalSuspended&) { w.begin('s'); },
          [&](const ParameterDescription& m) {
            w.begin('t');
            put_count16(w, m.types.size());
            for (uint32_t t : m.types) w.int32(static_cast<int32_t>(t));
          },
          [&](const CopyInResponse& m) { encode_copy_response(w, 'G', m); },
          [&](const CopyOutResponse& m) { encode_copy_response(w, 'H', m); },
          [&](const CopyData& m) { w.begin('d').bytes(m.data); },
          [&](const CopyDone&) { w.begin('c'); },
          [&](const NegotiateProtocolVersion& m) {
            w.begin('v').int32(m.newest_minor).int32(
                static_cast<int32_t>(m.unrecognized_options.size()));
            for (const auto& o : m.unrecognized_options) w.cstring(o);
          },
      },
      message);
  w.end();
}

std::string encode(const Message& message) {
  std::string out;
  encode(message, out);
  return out;
}

Message decode(char type, std::string_view body) {
  MessageReader in(body);
  Message message;
  switch (type) {
    // Designated initializers are evaluated in order: fields read as they come.
    case 'R':
      message = Authentication{.code = static_cast<AuthCode>(in.int32()), .data = std::string(in.rest())};
      break;
    case 'S':
      message = ParameterStatus{.name = std::string(in.cstring()), .value = std::string(in.cstring())};
      break;
    case 'K':
      message = BackendKeyData{.process_id = in.int32(), .secret_key = in.int32()};
      break;
    case 'Z': {
      char status = static_cast<char>(in.byte());
      if (status != 'I' && status != 'T' && status != 'E') {
        throw protocol_violation("invalid transaction status in ReadyForQuery");
      }
      message = ReadyForQuery{static_cast<TransactionStatus>(status)};
      break;
    }
    case 'T': {
      RowDescription m;
      size_t n = count16(in);
      for (size_t i = 0; i < n; ++i) {
        FieldDescription f;
        f.name = in.cstring();
        f.table_oid = static_cast<uint32_t>(in.int32());
        f.column_number = in.int16();
        f.type_oid = static_cast<uint32_t>(in.int32());
        f.type_size = in.int16();
        f.type_modifier = in.int32();
        f.format = format_of(in.int16());
        m.fields.push_back(std::move(f));
      }
      message = std::move(m);
      break;
    }
    case 'D': {
      DataRow m;
      size_t n = count16(in);
      m.values.reserve(n);
      for (size_t i = 0; i < n; ++i) m.values.push_back(in.nullable_bytes("field length in DataRow"));
      message = std::move(m);
      break;
    }
    case 'C':
      message = CommandComplete{std::string(in.cstring())};
      break;
    case 'I':
      message = EmptyQueryResponse{};
      break;
    case 'E':
      message = ErrorResponse{decode_fields(in)};
      break;
    case 'N':
      message = NoticeResponse{decode_fields(in)};
      break;
    case '1':
      message = ParseComplete{};
      break;
    case '2':
      message = BindComplete{};
      break;
    case '3':
      message = CloseComplete{};
      break;
    case 'n':
      message = NoData{};
      break;
    case 's':
      message = PortalSuspended{};
      break;
    case 't': {
      ParameterDescription m;
      size_t n = count16(in);
      for (size_t i = 0; i < n; ++i) m.types.push_back(static_cast<uint32_t>(in.int32()));
      message = std::move(m);
      break;
    }
    case 'G':
      message = decode_copy_response<CopyInResponse>(in);
      break;
    case 'H':
      message = decode_copy_response<CopyOutResponse>(in);
      break;
    case 'd':
      message = CopyData{std::string(in.rest())};
      break;
    case 'c':
      message = CopyDone{};
      break;
    case 'v': {
      NegotiateProtocolVersion m;
      m.newest_minor = in.int32();
      int32_t n = in.int32();
      if (n < 0) throw protocol_violation("negative count in NegotiateProtocolVersion");
      for (int32_t i = 0; i < n; ++i) m.unrecognized_options.emplace_back(in.cstring());
      message = std::move(m);
      break;
    }
    default:
      throw protocol_violation("invalid backend message type " +
                               std::to_string(static_cast<unsigned char>(type)));
  }
  in.expect_end();
  return message;
}

std::vector<Message> decode_all(std::string_view bytes) {
  std::vector<Message> messages;
  MessageReader in(bytes);
  while (in.remaining() > 0) {
    char type = static_cast<char>(in.byte());
    int32_t length = in.int32();
    if (length < 4) throw protocol_violation("invalid message length");
    messages.push_back(decode(type, in.bytes(static_cast<size_t>(length) - 4)));
  }
  return messages;
}

}  // namespace tally::protocol::backend
