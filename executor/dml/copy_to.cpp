#include "executor/dml/copy_to.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "executor/types/type_io.hpp"
#include "storage/column_layout.hpp"

namespace tally::executor::dml {
namespace {

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

void append_copy_field(std::string& out, std::string_view value, const CopyOptions& o, size_t index, size_t columns) {
  if (index) out += o.delimiter;
  // Every value goes through the escaper, numbers and dates too: PostgreSQL
  // escapes a delimiter such as '-' inside "-5" (text) or quotes "1.5" under
  // DELIMITER '.' (CSV).
  if (o.csv) append_csv_field(out, value, o, o.force_quote[index], columns == 1);
  else append_text_field(out, value, o.delimiter);
}

void append_copy_null(std::string& out, const CopyOptions& o, size_t index) {
  if (index) out += o.delimiter;
  out += o.null_string;
}

void append_copy_header(std::string& out, const std::vector<std::string>& names, const CopyOptions& o) {
  // PostgreSQL quotes header names in CSV by content only, never by FORCE_QUOTE.
  CopyOptions plain = o;
  plain.force_quote.assign(names.size(), false);
  for (size_t i = 0; i < names.size(); ++i) append_copy_field(out, names[i], plain, i, names.size());
  out += '\n';
}

uint64_t copy_to(StatementContext& ctx, const catalog::TableSnapshot& snapshot, const std::vector<int>& targets,
                 const CopyOptions& o, const CopySink& sink) {
  std::string out;
  out.reserve(copy_flush_bytes * 2);
  std::string value;
  if (o.header) {
    std::vector<std::string> names;
    for (const int t : targets) names.push_back(snapshot.def.columns[static_cast<size_t>(t)].name);
    append_copy_header(out, names, o);
  }
  uint64_t rows = 0;
  for (size_t chunk = 0; chunk < snapshot.chunks.size(); ++chunk) {
    ctx.check_cancel();
    const auto batch = ctx.store.read_chunk(snapshot, chunk, targets);
    for (size_t r = 0; r < batch->rows; ++r) {
      for (size_t i = 0; i < targets.size(); ++i) {
        const auto& col = batch->columns[i];
        if (col.is_null(r)) {
          append_copy_null(out, o, i);
        } else if (is_text_kind(col.type.id)) {
          append_copy_field(out, col.dictionary->at(col.values<int32_t>()[r]), o, i, targets.size());
        } else if (col.type.id == TypeId::bytea) {
          value.clear();
          types::append_bytea_out(value, col.dictionary->at(col.values<int32_t>()[r]));
          append_copy_field(out, value, o, i, targets.size());
        } else {
          value.clear();
          types::append_text_value(value, col.type, col.data.data() + r * static_cast<size_t>(storage_width(col.type)));
          append_copy_field(out, value, o, i, targets.size());
        }
      }
      out += '\n';
      ++rows;
      if (out.size() >= copy_flush_bytes) {
        sink(out);
        out.clear();
        // A chunk takes long to render: check per flush too, not per chunk only.
        ctx.check_cancel();
      }
    }
  }
  if (!out.empty()) sink(out);
  return rows;
}

uint64_t run_copy_out(StatementContext& ctx, const std::string& filename, int columns,
                      const std::function<uint64_t(const CopySink&)>& produce) {
  if (filename.empty()) {
    ctx.out.copy_out_begin(tally::Format::text, columns);
    const uint64_t rows = produce([&](std::string_view b) { ctx.out.copy_out_data(b); });
    ctx.out.copy_out_end();
    return rows;
  }
  if (filename[0] != '/') throw Error(SqlState::invalid_name, "relative path not allowed for COPY to file");
  std::FILE* f = std::fopen(filename.c_str(), "wb");
  if (!f)
    throw Error(errno == ENOENT ? SqlState::undefined_file : SqlState::io_error,
                "could not open file \"" + filename + "\" for writing: " + std::strerror(errno));
  uint64_t rows = 0;
  try {
    rows = produce([&](std::string_view b) {
      if (std::fwrite(b.data(), 1, b.size(), f) != b.size())
        throw Error(SqlState::io_error, "could not write to COPY file: " + std::string(std::strerror(errno)));
    });
  } catch (...) {
    std::fclose(f);
    throw;
  }
  if (std::fclose(f) != 0)
    throw Error(SqlState::io_error, "could not write to COPY file: " + std::string(std::strerror(errno)));
  return rows;
}

}  // namespace tally::executor::dml
