#pragma once
// One SELECT planned over in-memory tables and run with a given ExecContext,
// and its result as the wire sends it: the steps the executor's engine tests
// share.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "executor/parser.hpp"
#include "executor/result_set.hpp"
#include "executor/select_plan.hpp"
#include "executor/table_provider.hpp"
#include "tests/executor/recording_writer.hpp"

namespace tally::executor::testing {

inline ResultSet run_select_sql(const std::string& sql, MemoryTableProvider& tables, ExecContext& ec) {
  const auto statements = parse_sql(sql);
  std::vector<uint32_t> types;
  PlanContext pc;
  pc.tables = &tables;
  pc.parameter_types = &types;
  auto plan = plan_select(statements.at(0).body(), pc);
  return run_select(*plan, ec);
}

// The result streamed in text format, as "a|b|NULL" lines in its order.
inline std::vector<std::string> text_lines(const ResultSet& result) {
  RecordingWriter writer;
  writer.row_description(result.fields);
  size_t position = 0;
  stream_rows(result, std::vector<tally::Format>(result.columns.size(), tally::Format::text), position, 0, writer);
  writer.command_complete("SELECT");
  return writer.lines();
}

// The same lines, sorted.
inline std::vector<std::string> sorted_text_lines(const ResultSet& result) {
  auto lines = text_lines(result);
  std::sort(lines.begin(), lines.end());
  return lines;
}

// A SELECT run by `engine` ("cpu", "generic", ...): its lines in the
// result's order and EXPLAIN ANALYZE's lines of the run.
struct EngineAnswer {
  std::vector<std::string> rows, explain;
};

inline EngineAnswer run_with_engine(const std::string& sql, MemoryTableProvider& tables, const std::string& engine) {
  EngineAnswer a;
  ExecContext ec;
  ec.engine = engine;
  ec.explain = &a.explain;
  a.rows = text_lines(run_select_sql(sql, tables, ec));
  return a;
}

}  // namespace tally::executor::testing
