// SqlSession's cursors: DECLARE, FETCH/MOVE (forward only) and CLOSE.
#include "executor/sql_session.hpp"

#include <numeric>

#include "common/error.hpp"
#include "executor/command_result.hpp"
#include "executor/operators/chunk_ops.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {

using nlohmann::json;

ResultSet SqlSession::run_cursor_statement(const std::string& kind, const json& body,
                                           const std::vector<Value>& parameters,
                                           tally::ResultWriter& out) {
  (void)out;
  if (kind == "DeclareCursorStmt") {
    const std::string name = body.value("portalname", "");
    const int options = body.value("options", 0);
    constexpr int kCursorOptHold = 0x0020;  // CURSOR_OPT_HOLD in parsenodes.h
    if (state_ == TxState::idle && !(options & kCursorOptHold)) {
      throw Error(SqlState::no_active_sql_transaction,
                  "DECLARE CURSOR can only be used in transaction blocks");
    }
    if (cursors_.count(name))
      throw Error(SqlState::duplicate_cursor, "cursor \"" + name + "\" already exists");
    lock_selected_tables(body["query"]["SelectStmt"]);
    std::vector<uint32_t> types;
    PlanContext pc = make_plan_context(&types);
    auto plan = plan_select(body["query"]["SelectStmt"], pc);
    ExecContext ec = make_exec_context(&parameters);
    cursors_[name] = Cursor{run_select(*plan, ec), 0};
    return command_result("DECLARE CURSOR");
  }
  if (kind == "ClosePortalStmt") {
    if (!body.contains("portalname")) {
      cursors_.clear();
      return command_result("CLOSE CURSOR ALL");
    }
    const std::string name = body.value("portalname", "");
    if (!cursors_.erase(name))
      throw Error(SqlState::invalid_cursor_name, "cursor \"" + name + "\" does not exist");
    return command_result("CLOSE CURSOR");
  }
  // FETCH / MOVE
  const std::string name = body.value("portalname", "");
  auto it = cursors_.find(name);
  if (it == cursors_.end())
    throw Error(SqlState::invalid_cursor_name, "cursor \"" + name + "\" does not exist");
  Cursor& cursor = it->second;
  const std::string direction = body.value("direction", "FETCH_FORWARD");
  int64_t count = body.contains("howMany") ? body["howMany"].get<int64_t>() : 1;
  constexpr int64_t kFetchAll = INT64_MAX;  // FETCH ALL comes as LONG_MAX
  if (direction != "FETCH_FORWARD")
    throw Error(SqlState::feature_not_supported, "only forward FETCH is supported");
  if (count == 0 && body.contains("howMany")) count = 0;
  size_t from = cursor.position;
  size_t to =
      count >= kFetchAll || cursor.position + static_cast<size_t>(count) > cursor.result.rows
          ? cursor.result.rows
          : cursor.position + static_cast<size_t>(count);
  cursor.position = to;
  const bool is_move = body.value("ismove", false);
  ResultSet r;
  r.tag = is_move ? "MOVE" : "FETCH";
  r.fields = cursor.result.fields;
  r.returns_rows = !is_move;
  // Typed copies of the rows' range (text stays coded): a client reading a
  // large result in batches pays per batch, not per value.
  std::vector<uint32_t> rows(to - from);
  std::iota(rows.begin(), rows.end(), static_cast<uint32_t>(from));
  for (const auto& column : cursor.result.columns) r.columns.push_back(gather(column, rows));
  r.rows = to - from;
  if (is_move) r.tag = "MOVE " + std::to_string(to - from);
  return r;
}

}  // namespace tally::executor
