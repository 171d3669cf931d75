// COPY dispatch: resolves the table, columns and options, then runs COPY FROM
// (STDIN or a server file) or COPY TO (STDOUT or a server file).
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "executor/dml/copy_from.hpp"
#include "executor/dml/copy_to.hpp"
#include "executor/dml/dml.hpp"

namespace tally::executor::dml {

std::string copy(const nlohmann::json& stmt, StatementContext& ctx) {
  if (stmt.contains("query"))
    throw Error(SqlState::feature_not_supported, "COPY (query) TO is not supported by Tally yet");
  if (stmt.value("is_program", false))
    throw Error(SqlState::feature_not_supported, "COPY ... PROGRAM is not supported by Tally");
  if (stmt.contains("whereClause"))
    throw Error(SqlState::feature_not_supported, "COPY FROM ... WHERE is not supported by Tally");
  const bool is_from = stmt.value("is_from", false);
  const auto snap = resolve_relation(ctx, stmt.at("relation"), /*with_position=*/false);
  const auto targets = copy_target_columns(ctx, stmt, snap->def);
  const CopyOptions options = parse_copy_options(ctx, stmt, snap->def, targets, is_from);
  const std::string filename = stmt.value("filename", std::string());

  if (is_from) {
    bool end_marker = false;
    uint64_t rows;
    if (filename.empty()) {
      StdinCopySource source(ctx.out.copy_in(protocol::Format::text, static_cast<int>(targets.size())));
      rows = copy_from(ctx, snap->def, targets, options, source, end_marker);
      if (end_marker) source.drain();
    } else {
      FileCopySource source(filename);
      rows = copy_from(ctx, snap->def, targets, options, source, end_marker);
    }
    return "COPY " + std::to_string(rows);
  }

  if (filename.empty()) {
    ctx.out.copy_out_begin(protocol::Format::text, static_cast<int>(targets.size()));
    const uint64_t rows = copy_to(ctx, *snap, targets, options, [&](std::string_view b) { ctx.out.copy_out_data(b); });
    ctx.out.copy_out_end();
    return "COPY " + std::to_string(rows);
  }
  if (filename.empty() || filename[0] != '/')
    throw Error(SqlState::invalid_name, "relative path not allowed for COPY to file");
  std::FILE* f = std::fopen(filename.c_str(), "wb");
  if (!f)
    throw Error(errno == ENOENT ? SqlState::undefined_file : SqlState::io_error,
                "could not open file \"" + filename + "\" for writing: " + std::strerror(errno));
  uint64_t rows = 0;
  try {
    rows = copy_to(ctx, *snap, targets, options, [&](std::string_view b) {
      if (std::fwrite(b.data(), 1, b.size(), f) != b.size())
        throw Error(SqlState::io_error, "could not write to COPY file: " + std::string(std::strerror(errno)));
    });
  } catch (...) {
    std::fclose(f);
    throw;
  }
  if (std::fclose(f) != 0)
    throw Error(SqlState::io_error, "could not write to COPY file: " + std::string(std::strerror(errno)));
  return "COPY " + std::to_string(rows);
}

}  // namespace tally::executor::dml
