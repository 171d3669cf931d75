#include "executor/result_set.hpp"

#include "common/error.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor {

protocol::FieldDescription describe_column(const std::string& name, SqlType type) {
  protocol::FieldDescription field;
  field.name = name;
  field.type_oid = type_oid(type.id == TypeId::unknown ? TypeId::text : type.id);
  field.type_size = type_len(type.id == TypeId::unknown ? TypeId::text : type.id);
  field.type_modifier = type.typmod;
  return field;
}

std::vector<protocol::Format> expand_formats(std::span<const protocol::Format> formats, size_t columns) {
  if (formats.empty()) return std::vector<protocol::Format>(columns, protocol::Format::text);
  if (formats.size() == 1) return std::vector<protocol::Format>(columns, formats[0]);
  if (formats.size() != columns) {
    throw Error(SqlState::protocol_violation,
                "bind message has " + std::to_string(formats.size()) + " result formats but query has " +
                    std::to_string(columns) + " columns");
  }
  return {formats.begin(), formats.end()};
}

size_t stream_rows(const ResultSet& result, const std::vector<protocol::Format>& formats, size_t& position,
                   uint64_t max_rows, protocol::ResultWriter& out) {
  const size_t ncols = result.columns.size();
  size_t end = result.rows;
  if (max_rows > 0 && position + max_rows < end) end = position + static_cast<size_t>(max_rows);
  std::string buffer;
  buffer.reserve(256);
  std::vector<size_t> offsets(ncols + 1);
  std::vector<uint8_t> null_flags(ncols);
  std::vector<std::optional<std::string_view>> fields(ncols);
  const size_t start = position;
  for (size_t row = position; row < end; ++row) {
    buffer.clear();
    for (size_t c = 0; c < ncols; ++c) {
      offsets[c] = buffer.size();
      const Vector& column = result.columns[c];
      null_flags[c] = column.null_at(row);
      if (null_flags[c]) continue;
      if (formats[c] == protocol::Format::binary) append_binary(buffer, column, row);
      else append_text(buffer, column, row);
    }
    offsets[ncols] = buffer.size();
    for (size_t c = 0; c < ncols; ++c) {
      if (null_flags[c]) fields[c] = std::nullopt;
      else fields[c] = std::string_view(buffer.data() + offsets[c], offsets[c + 1] - offsets[c]);
    }
    out.data_row(fields);
  }
  position = end;
  return end - start;
}

}  // namespace tally::executor
