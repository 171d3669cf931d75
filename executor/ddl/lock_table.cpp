// LOCK TABLE ... IN ACCESS SHARE MODE, the lock pg_dump takes on every table
// it dumps. A Tally reader never blocks a writer nor waits for one (it reads
// a snapshot of the table's chunk list), so the lock that only keeps the
// table's definition from changing under the reader is the one mode checked
// and accepted: the tables must exist and the statement must be in a
// transaction block, as PostgreSQL requires. DROP, TRUNCATE and ALTER TABLE
// do not wait for it. The stronger modes, which exclude writers, are 0A000.
#include "executor/ddl/ddl.hpp"

namespace tally::executor::ddl {
namespace {

// LockStmt.mode: PostgreSQL's lock mode numbers (AccessShareLock is 1,
// AccessExclusiveLock, the default of a bare LOCK TABLE, 8).
constexpr int kAccessShareLock = 1;

const char* mode_name(int mode) {
  static const char* names[] = {
      "",      "ACCESS SHARE",        "ROW SHARE", "ROW EXCLUSIVE",   "SHARE UPDATE EXCLUSIVE",
      "SHARE", "SHARE ROW EXCLUSIVE", "EXCLUSIVE", "ACCESS EXCLUSIVE"};
  return mode >= 1 && mode <= 8 ? names[mode] : "this";
}

}  // namespace

std::string lock_table(const nlohmann::json& stmt, StatementContext& ctx,
                       bool in_transaction_block) {
  if (!in_transaction_block) {
    throw Error(SqlState::no_active_sql_transaction,
                "LOCK TABLE can only be used in transaction blocks");
  }
  const int mode = stmt.value("mode", 8);
  for (const auto& rel : stmt.value("relations", nlohmann::json::array()))
    resolve_relation(ctx, rel.at("RangeVar"));
  if (mode != kAccessShareLock) {
    throw Error(SqlState::feature_not_supported, std::string("LOCK TABLE IN ") + mode_name(mode) +
                                                     " MODE is not supported by Tally");
  }
  return "LOCK TABLE";
}

}  // namespace tally::executor::ddl
