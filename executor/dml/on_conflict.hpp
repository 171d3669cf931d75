#pragma once
// INSERT ... VALUES ... ON CONFLICT: which unique keys arbitrate (the
// conflict target, as PostgreSQL infers it), and which proposed rows
// conflict with a stored row or with a row proposed before them. A row is
// compared as stored: fixed-width values in storage form, text as the string.
//
// The stored rows are read before the rows are appended, from the snapshot
// the statement resolved; another session's rows committed in between meet
// the append's own unique check (23505) rather than the ON CONFLICT action.
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/table_snapshot.hpp"
#include "executor/ddl/statement_context.hpp"

namespace tally::executor::dml {

// A proposed row: one value per table column (PostgreSQL's text form), nullopt = NULL.
using ProposedRow = std::vector<std::optional<std::string>>;

class ConflictCheck {
 public:
  // clause: the InsertStmt's onConflictClause. 42P10 when its column list
  // matches no unique key, 42704 for an unknown constraint, 42601 for DO
  // UPDATE without a target.
  ConflictCheck(const nlohmann::json& clause, const catalog::TableSnapshot& snapshot, StatementContext& ctx);

  bool do_update() const { return do_update_; }
  // The columns of the arbiter key DO UPDATE matches rows by.
  const std::vector<int>& update_key() const { return update_key_; }
  // Whether row conflicts with a stored row (stored_conflict) or with a row
  // taken before it; take() records a row as proposed.
  bool stored_conflict(const ProposedRow& row) const { return matches(row, stored_); }
  bool proposed_conflict(const ProposedRow& row) const { return matches(row, proposed_); }
  void take(const ProposedRow& row);

 private:
  std::optional<std::string> key_of(const ProposedRow& row, size_t key) const;
  bool matches(const ProposedRow& row, const std::vector<std::unordered_set<std::string>>& sets) const;

  const catalog::TableDef& def_;
  bool do_update_ = false;
  std::vector<std::vector<int>> keys_;  // the arbiters' columns
  std::vector<int> update_key_;
  std::vector<std::unordered_set<std::string>> stored_, proposed_;  // per arbiter
};

}  // namespace tally::executor::dml
