#pragma once
// What a DDL/DML entry point needs from the session that dispatches it: the
// table store (and through it the catalog), the result writer (COPY streams,
// notices), the full query text (libpg_query locations are byte offsets into
// it; PostgreSQL reports 1-based character positions), the cancel token, and
// the session's transaction block when one is open: every table look-up and
// write goes through the methods below, which route it to the block
// (uncommitted until COMMIT) or commit it at the statement's end.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/cancel.hpp"
#include "common/error.hpp"
#include "common/query_handler.hpp"
#include "storage/table_appender.hpp"
#include "storage/table_store.hpp"
#include "storage/write_transaction.hpp"

namespace tally::catalog {
class ViewStore;
}

namespace tally::executor {

class SessionSequences;

// A bound parameter ($n) as a DDL/DML statement sees it: its type and
// PostgreSQL's text output of its value (nullopt = NULL).
struct StatementParameter {
  SqlType type;
  std::optional<std::string> text;
};

struct StatementContext {
  storage::TableStore& store;
  tally::ResultWriter& out;
  std::string_view query_text;        // the whole Query/Parse string
  const CancelToken* cancel = nullptr;
  storage::WriteTransaction* transaction = nullptr;  // null: autocommit
  int threads = 0;  // worker threads a statement may use (Config::cpu_threads; 0 = every core)
  // The extended protocol's parameters (INSERT ... VALUES ($1, ...)).
  std::vector<StatementParameter> parameters = {};
  // The session's sequences (serial defaults, CREATE SEQUENCE); null: none.
  SessionSequences* sequences = nullptr;
  // The views (CREATE VIEW); null: none (a build without storage).
  catalog::ViewStore* views = nullptr;
  // The statement's time, read on first use: every now() or CURRENT_DATE
  // default the statement fills in reads the same instant, as in PostgreSQL.
  mutable std::optional<int64_t> now_micros = std::nullopt;
  // Microseconds since 2000-01-01 00:00:00 UTC (PostgreSQL's epoch).
  int64_t statement_time() const;

  // The table as this statement sees it (nullptr: none), public schema.
  std::shared_ptr<const catalog::TableSnapshot> find_table(std::string_view name) const;
  // Whether a view (public schema) has this name.
  bool view_exists(std::string_view name) const;
  std::shared_ptr<const catalog::TableSnapshot> create_table(catalog::TableDef def, bool if_not_exists) const;
  void drop_table(uint32_t oid) const;
  void truncate_table(uint32_t oid) const;
  // TableStore::alter_table, or the block's.
  std::shared_ptr<const catalog::TableSnapshot> alter_table(
      uint32_t oid, const std::function<catalog::TableDef(const catalog::TableSnapshot&)>& change) const;
  // An append; its commit() is the statement's (autocommit) or the block's.
  std::unique_ptr<storage::TableAppender> begin_append(uint32_t oid) const;
  // A small append (INSERT ... VALUES): group-committed with other sessions'
  // when autocommit.
  void append_small(uint32_t oid, const std::function<void(storage::TableAppender&)>& fill) const;

  // PostgreSQL's cursor position for a parse-tree location (-1 = none -> 0).
  int position(int location) const;
  void check_cancel() const {
    if (cancel) cancel->check();
  }
};

// A RangeVar resolved against the catalog: schema must be absent or "public".
// Throws 42P01 `relation "x" does not exist` (with position) when missing,
// 3F000 for an unknown schema.
// with_position: PostgreSQL reports the cursor position for relations named in
// DML (INSERT) but not in TRUNCATE or COPY.
std::shared_ptr<const catalog::TableSnapshot> resolve_relation(const StatementContext& ctx,
                                                               const nlohmann::json& range_var,
                                                               bool with_position = true);

// The relation name of a RangeVar ("relname"), for messages.
std::string relation_name(const nlohmann::json& range_var);

// The integer of an A_Const ival node ({"ival": {"ival": N}}; {} means 0).
int64_t const_int(const nlohmann::json& ival);

}  // namespace tally::executor
