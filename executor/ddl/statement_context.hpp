#pragma once
// What a DDL/DML entry point needs from the session that dispatches it: the
// table store (and through it the catalog), the result writer (COPY streams,
// notices), the full query text (libpg_query locations are byte offsets into
// it; PostgreSQL reports 1-based character positions) and the cancel token.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/cancel.hpp"
#include "common/error.hpp"
#include "common/query_handler.hpp"
#include "storage/table_store.hpp"

namespace tally::executor {

struct StatementContext {
  storage::TableStore& store;
  tally::ResultWriter& out;
  std::string_view query_text;        // the whole Query/Parse string
  const CancelToken* cancel = nullptr;

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
