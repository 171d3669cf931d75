// INSERT ... VALUES [ON CONFLICT ...]: every row is evaluated, cast and checked before any is
// appended, so an error adds nothing; outside a transaction block the append
// is group-committed.
#include <optional>

#include "executor/dml/column_default.hpp"
#include "executor/dml/constant_value.hpp"
#include "executor/dml/dml.hpp"
#include "executor/dml/on_conflict.hpp"
#include "executor/dml/row_check.hpp"
#include "executor/types/type_io.hpp"
#include "storage/table_appender.hpp"

namespace tally::executor::dml {
namespace {

// ON CONFLICT: the rows to append. DO NOTHING leaves out a row that
// conflicts with a stored row or an earlier one; DO UPDATE hands the rows
// that conflict with stored rows to the caller (InsertedRows::conflicting),
// and a row that meets another row of the statement is 21000, as in
// PostgreSQL (it would update a row a second time).
std::vector<ProposedRow> without_conflicts(const nlohmann::json& clause, const catalog::TableSnapshot& snapshot,
                                           std::vector<ProposedRow> rows, InsertedRows* inserted,
                                           StatementContext& ctx) {
  ConflictCheck check(clause, snapshot, ctx);
  if (check.do_update() && !inserted)
    throw Error(SqlState::feature_not_supported, "INSERT ... ON CONFLICT DO UPDATE is not supported here by Tally");
  std::vector<ProposedRow> kept;
  for (auto& row : rows) {
    if (check.proposed_conflict(row)) {
      if (!check.do_update()) continue;
      throw std::move(Error(SqlState::cardinality_violation, "ON CONFLICT DO UPDATE command cannot affect row a second time")
                          .with_hint("Ensure that no rows proposed for insertion within the same command have "
                                     "duplicate constrained values."));
    }
    const bool stored = check.stored_conflict(row);
    check.take(row);
    if (!stored) kept.push_back(std::move(row));
    else if (check.do_update()) inserted->conflicting.push_back(std::move(row));
  }
  if (inserted) inserted->update_key = check.update_key();
  return kept;
}

}  // namespace

std::string insert(const nlohmann::json& stmt, StatementContext& ctx, InsertedRows* inserted) {
  if (stmt.contains("withClause")) throw Error(SqlState::feature_not_supported, "WITH in INSERT is not supported by Tally");
  if (stmt.contains("returningList") && !inserted)
    throw Error(SqlState::feature_not_supported, "INSERT ... RETURNING is not supported by Tally");
  const bool overriding = stmt.value("override", std::string()) == "OVERRIDING_SYSTEM_VALUE";
  const auto snap = resolve_relation(ctx, stmt.at("relation"));
  const catalog::TableDef& def = snap->def;

  // Target columns and where each was written (for error positions).
  std::vector<int> targets;
  std::vector<int> target_locations;
  if (stmt.contains("cols")) {
    std::vector<bool> used(def.columns.size(), false);
    for (const auto& c : stmt["cols"]) {
      const auto& rt = c.at("ResTarget");
      const std::string name = rt.value("name", std::string());
      const int location = rt.value("location", -1);
      const int index = def.find_column(name);
      if (index < 0)
        throw std::move(Error(SqlState::undefined_column,
                              "column \"" + name + "\" of relation \"" + def.name + "\" does not exist")
                            .with_position(ctx.position(location)));
      if (rt.contains("indirection"))
        throw std::move(Error(SqlState::feature_not_supported, "subscripted or field INSERT targets are not supported")
                            .with_position(ctx.position(location)));
      if (used[static_cast<size_t>(index)])
        throw std::move(Error(SqlState::duplicate_column, "column \"" + name + "\" specified more than once")
                            .with_position(ctx.position(location)));
      used[static_cast<size_t>(index)] = true;
      targets.push_back(index);
      target_locations.push_back(location);
    }
  } else {
    for (size_t i = 0; i < def.columns.size(); ++i) {
      targets.push_back(static_cast<int>(i));
      target_locations.push_back(-1);
    }
  }

  // The VALUES lists (DEFAULT VALUES = one row of defaults).
  std::vector<const nlohmann::json*> lists;
  static const nlohmann::json empty_list = nlohmann::json::array();
  if (!stmt.contains("selectStmt")) {
    lists.push_back(nullptr);
  } else {
    const auto& select = stmt["selectStmt"].at("SelectStmt");
    if (!select.contains("valuesLists"))
      throw Error(SqlState::feature_not_supported, "INSERT ... SELECT is not supported by Tally yet");
    for (const auto& l : select["valuesLists"]) lists.push_back(&l.at("List").at("items"));
    const size_t width = lists.front()->size();
    for (const auto* l : lists) {
      if (l->size() != width) {
        const auto& first = l->empty() ? nlohmann::json::object() : (*l)[0];
        const int location = first.empty() ? -1 : first.begin().value().value("location", -1);
        throw std::move(Error(SqlState::syntax_error, "VALUES lists must all be the same length")
                            .with_position(ctx.position(location)));
      }
    }
    if (width > targets.size()) {
      const auto& extra = (*lists.front())[targets.size()];
      throw std::move(Error(SqlState::syntax_error, "INSERT has more expressions than target columns")
                          .with_position(ctx.position(extra.begin().value().value("location", -1))));
    }
    if (width < targets.size() && stmt.contains("cols")) {
      throw std::move(Error(SqlState::syntax_error, "INSERT has more target columns than expressions")
                          .with_position(ctx.position(target_locations[width])));
    }
    // Without a column list, missing trailing columns take their defaults.
    if (!stmt.contains("cols")) targets.resize(width);
  }

  // Evaluate every row first: nothing is appended if any value fails.
  std::vector<std::vector<std::optional<std::string>>> rows;
  rows.reserve(lists.size());
  for (const auto* items : lists) {
    std::vector<std::optional<std::string>> row(def.columns.size());
    std::vector<bool> given(def.columns.size(), false);
    if (items) {
      for (size_t i = 0; i < items->size(); ++i) {
        const auto& col = def.columns[static_cast<size_t>(targets[i])];
        const ConstantValue v = evaluate_constant(ctx, (*items)[i]);
        if (v.is_default) continue;
        if (col.identity == 'a' && !overriding)
          throw std::move(Error(SqlState::generated_always,
                                "cannot insert a non-DEFAULT value into column \"" + col.name + "\"")
                              .with_detail("Column \"" + col.name + "\" is an identity column defined as GENERATED ALWAYS.")
                              .with_hint("Use OVERRIDING SYSTEM VALUE to override."));
        given[static_cast<size_t>(targets[i])] = true;
        const ConstantValue cast = cast_constant(ctx, v, col.type, false, col.name);
        if (cast.kind != ConstantValue::Kind::null) row[static_cast<size_t>(targets[i])] = cast.text;
      }
    }
    for (size_t c = 0; c < def.columns.size(); ++c) {
      if (given[c] || def.columns[c].default_expr.empty()) continue;
      const ConstantValue d = column_default(ctx, def.columns[c]);
      if (d.kind != ConstantValue::Kind::null) row[c] = d.text;
    }
    check_not_null(def, row);
    rows.push_back(std::move(row));
  }
  ctx.check_cancel();
  if (stmt.contains("onConflictClause")) {
    rows = without_conflicts(stmt["onConflictClause"], *snap, std::move(rows), inserted, ctx);
    if (rows.empty()) return "INSERT 0 0";
  }

  // Outside a block, group-committed with concurrent INSERTs into the same
  // table: one set of fsyncs for all of them (storage/group_commit.hpp); in a
  // block, the block's until COMMIT. The rows were checked
  // above, so filling them does not fail halfway in practice; if it did, only
  // this statement's rows would be left out.
  ctx.append_small(def.oid, [&](storage::TableAppender& appender) {
    for (const auto& row : rows) {
      for (size_t c = 0; c < def.columns.size(); ++c) {
        const auto& col = def.columns[c];
        if (!row[c]) {
          appender.set_null(static_cast<int>(c));
        } else if (is_string_stored(col.type.id)) {
          std::string bytes;
          appender.set_text(static_cast<int>(c), types::stored_string(col.type.id, *row[c], bytes));
        } else {
          types::parse_text_value(col.type, *row[c], appender.value_slot(static_cast<int>(c)));
        }
      }
      appender.finish_row();
    }
  });
  const size_t count = rows.size();
  if (inserted) inserted->rows = std::move(rows);
  return "INSERT 0 " + std::to_string(count);
}

}  // namespace tally::executor::dml
