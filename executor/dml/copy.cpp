// COPY dispatch: resolves the table, columns and options, then runs COPY FROM
// (STDIN or a server file) or COPY TO (STDOUT or a server file).
#include "executor/dml/copy_from.hpp"
#include "executor/dml/copy_to.hpp"
#include "executor/dml/dml.hpp"

namespace tally::executor::dml {

std::string copy(const nlohmann::json& stmt, StatementContext& ctx) {
  if (stmt.contains("query"))  // the session routes these to copy_query (copy_query.hpp)
    throw Error(SqlState::feature_not_supported, "COPY (query) TO needs the executor's session");
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
      StdinCopySource source(ctx.out.copy_in(tally::Format::text, static_cast<int>(targets.size())));
      rows = copy_from(ctx, snap->def, targets, options, source, end_marker);
      if (end_marker) source.drain();
    } else {
      FileCopySource source(filename);
      rows = copy_from(ctx, snap->def, targets, options, source, end_marker);
    }
    return "COPY " + std::to_string(rows);
  }
  const uint64_t rows = run_copy_out(ctx, filename, static_cast<int>(targets.size()),
                                     [&](const CopySink& sink) { return copy_to(ctx, *snap, targets, options, sink); });
  return "COPY " + std::to_string(rows);
}

}  // namespace tally::executor::dml
