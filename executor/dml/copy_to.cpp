#include "executor/dml/copy_to.hpp"

#include "executor/types/type_io.hpp"

namespace tally::executor::dml {
namespace {

// Output is handed to the client in blocks of about this size.
constexpr size_t flush_bytes = 1 << 16;

// CopyAttributeOutText.
void append_text_field(std::string& out, std::string_view v, char delim) {
  for (const char c : v) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\v': out += "\\v"; break;
      default:
        if (c == delim) out += '\\';
        out += c;
    }
  }
}

// CopyAttributeOutCSV.
void append_csv_field(std::string& out, std::string_view v, const CopyOptions& o, bool force_quote, bool single_column) {
  bool quote = force_quote || v == o.null_string;
  if (!quote) {
    if (single_column && v == "\\.") quote = true;
    for (const char c : v) {
      if (c == o.delimiter || c == o.quote || c == '\n' || c == '\r') {
        quote = true;
        break;
      }
    }
  }
  if (!quote) {
    out += v;
    return;
  }
  out += o.quote;
  for (const char c : v) {
    if (c == o.quote || c == o.escape) out += o.escape;
    out += c;
  }
  out += o.quote;
}

}  // namespace

uint64_t copy_to(StatementContext& ctx, const catalog::TableSnapshot& snapshot, const std::vector<int>& targets,
                 const CopyOptions& o, const std::function<void(std::string_view)>& sink) {
  std::string out;
  out.reserve(flush_bytes * 2);
  std::string value;
  const bool single = targets.size() == 1;
  auto emit = [&](std::string_view v, size_t i) {
    if (i) out += o.delimiter;
    if (o.csv) append_csv_field(out, v, o, o.force_quote[i], single);
    else append_text_field(out, v, o.delimiter);
  };
  if (o.header) {
    for (size_t i = 0; i < targets.size(); ++i) emit(snapshot.def.columns[static_cast<size_t>(targets[i])].name, i);
    out += '\n';
  }
  uint64_t rows = 0;
  for (size_t chunk = 0; chunk < snapshot.chunks.size(); ++chunk) {
    ctx.check_cancel();
    const auto batch = ctx.store.read_chunk(snapshot, chunk, targets);
    for (size_t r = 0; r < batch->rows; ++r) {
      for (size_t i = 0; i < targets.size(); ++i) {
        const auto& col = batch->columns[i];
        if (col.is_null(r)) {
          if (i) out += o.delimiter;
          out += o.null_string;
          continue;
        }
        if (is_text_kind(col.type.id)) {
          emit(col.dictionary->at(col.values<int32_t>()[r]), i);
        } else {
          value.clear();
          types::append_text_value(value, col.type, col.data.data() + r * static_cast<size_t>(storage_width(col.type.id)));
          if (o.csv) {
            // Numbers and dates never need quoting unless forced or equal to NULL.
            emit(value, i);
          } else {
            if (i) out += o.delimiter;
            out += value;
          }
        }
      }
      out += '\n';
      ++rows;
      if (out.size() >= flush_bytes) {
        sink(out);
        out.clear();
      }
    }
  }
  if (!out.empty()) sink(out);
  return rows;
}

}  // namespace tally::executor::dml
