// SqlSession's transaction blocks: BEGIN/START, COMMIT, ROLLBACK, savepoints.
#include "executor/sql_session.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "executor/command_result.hpp"
#include "executor/database.hpp"
#include "executor/row_locks.hpp"
#include "executor/types/clock.hpp"
#include "storage/write_transaction.hpp"

namespace tally::executor {

using nlohmann::json;

storage::WriteTransaction* SqlSession::write_transaction() {
  if (state_ != TxState::in_block) return nullptr;
  if (!write_transaction_) {
    storage::TableStore* store = database_ ? database_->store() : nullptr;
    if (!store) return nullptr;
    write_transaction_ = std::make_unique<storage::WriteTransaction>(*store, info_.cancel);
  }
  return write_transaction_.get();
}

bool SqlSession::lock_selected_tables(const json& select) {
  if (!select.contains("lockingClause")) return false;
  storage::WriteTransaction* transaction = write_transaction();
  if (transaction == nullptr) return false;
  bool locked = false;
  for (const std::string& name : locked_table_names(select)) {
    if (auto table = transaction->find_table(name)) {
      transaction->lock_table(table->def.oid);
      locked = true;
    }
  }
  return locked;
}

void SqlSession::end_write_transaction(bool commit) {
  savepoints_.clear();
  auto transaction = std::move(write_transaction_);
  if (!transaction) return;
  // A failed commit has rolled the block back (PostgreSQL likewise ends the
  // block either way); the error goes to the client.
  if (commit) {
    transaction->commit();
  } else {
    transaction->rollback();
  }
}

ResultSet SqlSession::run_transaction_statement(const json& body, tally::ResultWriter& out) {
  const std::string kind = body.value("kind", "");
  auto warn = [&](SqlState state, const std::string& message) {
    out.notice(Error(state, message, Severity::warning));
  };
  if (kind == "TRANS_STMT_BEGIN" || kind == "TRANS_STMT_START") {
    for (const auto& option : body.value("options", json::array())) {
      const auto& def = option["DefElem"];
      const std::string name = def.value("defname", "");
      if (name == "transaction_isolation")
        settings_.set("transaction_isolation", constant_text(def["arg"]));
      if (name == "transaction_read_only") {
        settings_.set("transaction_read_only",
                      def["arg"]["A_Const"]["ival"].value("ival", 0) ? "on" : "off");
      }
    }
    if (state_ != TxState::idle) {
      warn(SqlState::active_sql_transaction, "there is already a transaction in progress");
    } else {
      state_ = TxState::in_block;
      transaction_started_us_ = clock_us();
      settings_at_begin_ = settings_.snapshot();
      savepoints_.clear();
    }
    return command_result(kind == "TRANS_STMT_BEGIN" ? "BEGIN" : "START TRANSACTION");
  }
  if (kind == "TRANS_STMT_COMMIT" || kind == "TRANS_STMT_ROLLBACK") {
    const bool failed = state_ == TxState::failed;
    if (state_ == TxState::idle) {
      warn(SqlState::no_active_sql_transaction, "there is no transaction in progress");
    } else if (kind == "TRANS_STMT_ROLLBACK" || failed) {
      report_changed(settings_.restore(settings_at_begin_), out);
    }
    state_ = TxState::idle;
    settings_.initialize("transaction_isolation",
                         settings_.get("default_transaction_isolation").value_or("read committed"));
    cursors_.clear();  // cursors without HOLD end with their transaction
    end_write_transaction(kind == "TRANS_STMT_COMMIT" && !failed);
    if (kind == "TRANS_STMT_ROLLBACK" || failed) return command_result("ROLLBACK");
    return command_result("COMMIT");
  }
  if (kind == "TRANS_STMT_SAVEPOINT" || kind == "TRANS_STMT_RELEASE" ||
      kind == "TRANS_STMT_ROLLBACK_TO") {
    const char* what =
        kind == "TRANS_STMT_SAVEPOINT"
            ? "SAVEPOINT"
            : (kind == "TRANS_STMT_RELEASE" ? "RELEASE SAVEPOINT" : "ROLLBACK TO SAVEPOINT");
    if (state_ == TxState::idle) {
      throw Error(SqlState::no_active_sql_transaction,
                  std::string(what) + " can only be used in transaction blocks");
    }
    const std::string name = body.value("savepoint_name", "");
    if (kind == "TRANS_STMT_SAVEPOINT") {
      storage::WriteTransaction* transaction = write_transaction();
      savepoints_.emplace_back(name, transaction ? transaction->savepoint() : nullptr);
    } else {
      auto it = std::find_if(savepoints_.rbegin(), savepoints_.rend(),
                             [&](const auto& s) { return s.first == name; });
      if (it != savepoints_.rend()) {
        const bool rollback_to = kind == "TRANS_STMT_ROLLBACK_TO";
        if (rollback_to && write_transaction_ && it->second) write_transaction_->rollback_to(*it->second);
        // RELEASE removes the savepoint and later ones; ROLLBACK TO keeps it.
        savepoints_.erase(it.base() - (rollback_to ? 0 : 1), savepoints_.end());
      }
    }
    if (kind == "TRANS_STMT_ROLLBACK_TO") state_ = TxState::in_block;
    return command_result(kind == "TRANS_STMT_SAVEPOINT"
                              ? "SAVEPOINT"
                              : (kind == "TRANS_STMT_RELEASE" ? "RELEASE" : "ROLLBACK"));
  }
  throw Error(SqlState::feature_not_supported, "two-phase commit is not supported");
}

}  // namespace tally::executor
