#include "executor/dml/copy_query.hpp"

#include "executor/dml/copy_to.hpp"
#include "executor/select_plan.hpp"
#include "executor/sql_session.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor::dml {

std::string copy_query(SqlSession& session, const nlohmann::json& stmt, const std::vector<Value>& parameters,
                       StatementContext& ctx) {
  const auto& query = stmt.at("query");
  if (!query.contains("SelectStmt"))
    throw Error(SqlState::feature_not_supported, "COPY (" + query.begin().key() + ") TO is not supported by Tally");
  const auto& select = query["SelectStmt"];
  if (select.contains("intoClause")) throw Error(SqlState::feature_not_supported, "COPY (SELECT INTO) is not supported");
  if (stmt.value("is_program", false))
    throw Error(SqlState::feature_not_supported, "COPY ... PROGRAM is not supported by Tally");

  // Plan first: name and type errors come before any CopyOutResponse, as in
  // PostgreSQL (BeginCopyTo plans the query before DoCopyTo starts the copy).
  std::vector<uint32_t> parameter_types;
  PlanContext pc = session.make_plan_context(&parameter_types);
  const auto plan = plan_select(select, pc);
  const auto fields = select_fields(*plan);

  // The query's columns play the table's part for HEADER and FORCE_QUOTE.
  catalog::TableDef def;
  std::vector<int> targets;
  std::vector<std::string> names;
  for (size_t i = 0; i < fields.size(); ++i) {
    catalog::ColumnDef column;
    column.name = fields[i].name;
    column.type = {type_from_oid(fields[i].type_oid).value_or(TypeId::text), fields[i].type_modifier};
    def.columns.push_back(std::move(column));
    targets.push_back(static_cast<int>(i));
    names.push_back(fields[i].name);
  }
  const CopyOptions options = parse_copy_options(ctx, stmt, def, targets, /*is_from=*/false);

  ExecContext ec = session.make_exec_context(&parameters);
  const ResultSet result = run_select(*plan, ec);
  const std::string filename = stmt.value("filename", std::string());
  const uint64_t rows = run_copy_out(ctx, filename, static_cast<int>(result.columns.size()), [&](const CopySink& sink) {
    std::string out;
    std::string value;
    if (options.header) append_copy_header(out, names, options);
    const size_t ncols = result.columns.size();
    for (size_t r = 0; r < result.rows; ++r) {
      for (size_t c = 0; c < ncols; ++c) {
        const Vector& column = result.columns[c];
        if (column.null_at(r)) {
          append_copy_null(out, options, c);
          continue;
        }
        value.clear();
        append_text(value, column, r);
        append_copy_field(out, value, options, c, ncols);
      }
      out += '\n';
      if (out.size() >= copy_flush_bytes) {
        ctx.check_cancel();
        sink(out);
        out.clear();
      }
    }
    if (!out.empty()) sink(out);
    return static_cast<uint64_t>(result.rows);
  });
  return "COPY " + std::to_string(rows);
}

}  // namespace tally::executor::dml
