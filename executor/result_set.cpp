#include "executor/result_set.hpp"

#include <algorithm>
#include <cstring>

#include "common/error.hpp"
#include "executor/cancel_point.hpp"
#include "executor/cpu/worker_pool.hpp"
#include "executor/parallel_row_encoder.hpp"
#include "executor/row_encoder.hpp"

namespace tally::executor {

using row_encoding::ColumnCoder;
using row_encoding::coder_for;
using row_encoding::encode_rows;
using row_encoding::encode_rows_parallel;
using row_encoding::kParallelEncodeRows;

tally::FieldDescription describe_column(const std::string& name, SqlType type) {
  tally::FieldDescription field;
  field.name = name;
  field.type_oid = type_oid(type.id == TypeId::unknown ? TypeId::text : type.id);
  field.type_size = type_len(type.id == TypeId::unknown ? TypeId::text : type.id);
  // A record's typmod indexes Tally's table of record shapes: PostgreSQL sends -1.
  field.type_modifier = type.id == TypeId::record ? -1 : type.typmod;
  return field;
}

std::vector<tally::Format> expand_formats(std::span<const tally::Format> formats, size_t columns) {
  if (formats.empty()) return std::vector<tally::Format>(columns, tally::Format::text);
  if (formats.size() == 1) return std::vector<tally::Format>(columns, formats[0]);
  if (formats.size() != columns) {
    throw Error(SqlState::protocol_violation,
                "bind message has " + std::to_string(formats.size()) + " result formats but query has " +
                    std::to_string(columns) + " columns");
  }
  return {formats.begin(), formats.end()};
}

namespace {

// Splits one framed DataRow message into field views (writers without a buffer).
void decode_fields(std::string_view message, std::vector<std::optional<std::string_view>>& fields) {
  const char* p = message.data() + 7;
  for (auto& f : fields) {
    uint32_t len;
    std::memcpy(&len, p, 4);
    len = __builtin_bswap32(len);
    p += 4;
    if (len == UINT32_MAX) {
      f = std::nullopt;
    } else {
      f = std::string_view(p, len);
      p += len;
    }
  }
}

}  // namespace

size_t stream_rows(const ResultSet& result, const std::vector<tally::Format>& formats, size_t& position,
                   uint64_t max_rows, tally::ResultWriter& out) {
  const size_t ncols = result.columns.size();
  size_t end = result.rows;
  if (max_rows > 0 && position + max_rows < end) end = position + static_cast<size_t>(max_rows);
  const size_t start = position;
  if (start >= end) {
    position = std::max(position, end);
    return 0;
  }
  std::vector<ColumnCoder> columns;
  columns.reserve(ncols);
  for (size_t c = 0; c < ncols; ++c) columns.push_back({&result.columns[c], coder_for(result.columns[c], formats[c]), {}, false, {}});
  if (std::string* buffer = out.data_row_buffer()) {
    // Fast path: DataRow messages straight into the writer's output.
    if (end - start >= kParallelEncodeRows && cpu::WorkerPool::shared().workers() > 0) {
      encode_rows_parallel(columns, start, end, out);
    } else {
      encode_rows(columns, start, end, *buffer, [&] {
        out.data_rows_appended();
        check_cancel_point();
      });
    }
    out.data_rows_appended();
  } else {
    std::string message;
    std::vector<std::optional<std::string_view>> fields(ncols);
    for (size_t row = start; row < end; ++row) {
      message.clear();
      encode_rows(columns, row, row + 1, message, [] {});
      decode_fields(message, fields);
      out.data_row(fields);
    }
  }
  position = end;
  return end - start;
}

}  // namespace tally::executor
