#include "executor/recursive_cte.hpp"

#include <unordered_set>
#include <vector>

#include "common/error.hpp"
#include "executor/cancel_point.hpp"
#include "executor/relation_references.hpp"
#include "executor/select_plan_detail.hpp"
#include "executor/statement_context.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor {
namespace {

using nlohmann::json;

// A set operation's branch: the SelectStmt body, wrapped or not.
const json& select_body(const json& node) { return node.contains("SelectStmt") ? node["SelectStmt"] : node; }

// The working table the recursive term reads: the rows of the last iteration.
struct WorkingTable {
  DataChunk rows;
};

DataChunk empty_chunk(const std::vector<OutputColumn>& columns) {
  DataChunk chunk;
  for (const auto& c : columns) chunk.columns.emplace_back(c.type);
  return chunk;
}

// A row's identity for UNION's duplicate removal: its values' text forms
// (NULL apart from every text).
std::string row_key(const ResultSet& rows, size_t row, size_t width) {
  std::string key;
  for (size_t c = 0; c < width; ++c) {
    const Value v = rows.columns[c].get(row);
    if (is_null(v)) {
      key += '\x01';
    } else {
      key += '\x02';
      const std::string text = value_to_text(rows.columns[c].type, v);
      key += std::to_string(text.size()) + ':' + text;
    }
  }
  return key;
}

// Appends the rows of `from` (those not yet in `seen`, unless `all`) to
// `out` and to `added`; returns how many.
size_t append_new(const ResultSet& from, size_t width, bool all,
                  std::unordered_set<std::string>& seen, DataChunk& out, DataChunk& added) {
  size_t count = 0;
  for (size_t r = 0; r < from.rows; ++r) {
    if (!all && !seen.insert(row_key(from, r, width)).second) continue;
    for (size_t c = 0; c < width; ++c) {
      const Value v = from.columns[c].get(r);
      out.columns[c].push(v);
      added.columns[c].push(v);
    }
    ++count;
  }
  out.rows += count;
  added.rows += count;
  return count;
}

}  // namespace

bool refers_to_itself(const json& cte) {
  return names_relation(cte.value("ctequery", json::object()), cte.value("ctename", ""), /*unqualified_only=*/true);
}

std::shared_ptr<const MaterializedRelation> plan_recursive_cte(const json& cte,
                                                               const PlanContext& context) {
  const std::string name = cte.value("ctename", "");
  const json& query = cte["ctequery"];
  const json* select = query.contains("SelectStmt") ? &query["SelectStmt"] : nullptr;
  if (select == nullptr || select->value("op", "SETOP_NONE") != "SETOP_UNION" || !select->contains("larg") ||
      !select->contains("rarg")) {
    throw Error(SqlState::feature_not_supported,
                "recursive query \"" + name +
                    "\" does not have the form non-recursive-term UNION [ALL] recursive-term");
  }
  for (const char* clause : {"sortClause", "limitCount", "limitOffset", "withClause"}) {
    if (select->contains(clause)) {
      throw Error(
          SqlState::feature_not_supported,
          std::string("ORDER BY, LIMIT, OFFSET or WITH in a recursive query is not supported"));
    }
  }
  const bool all = select->value("all", false);
  const json& left_select = select_body((*select)["larg"]);
  if (names_relation(left_select, name)) {
    throw Error(SqlState::invalid_recursion,
                "recursive reference to query \"" + name +
                    "\" must not appear within its non-recursive term");
  }
  PlanContext left_pc = context;
  const auto left = plan_select(left_select, left_pc);
  const json* aliases = cte.contains("aliascolnames") ? &cte["aliascolnames"] : nullptr;
  if (aliases != nullptr && aliases->size() > left->visible) {
    throw Error(SqlState::invalid_column_reference,
                "WITH query \"" + name + "\" has " + std::to_string(left->visible) +
                    " columns available but " + std::to_string(aliases->size()) +
                    " columns specified");
  }
  std::vector<OutputColumn> columns;
  for (size_t i = 0; i < left->visible; ++i) {
    std::string column = left->names[i];
    if (aliases != nullptr && i < aliases->size())
      column = (*aliases)[i]["String"].value("sval", column);
    SqlType type = left->outputs[i]->type;
    if (type.id == TypeId::unknown) type = SqlType{TypeId::text};
    columns.push_back({column, type});
  }

  auto working = std::make_shared<WorkingTable>();
  auto working_relation = std::make_shared<MaterializedRelation>();
  working_relation->name = name;
  working_relation->columns = columns;
  working_relation->rows = empty_chunk(columns);
  working_relation->rows_at_run = [working](const std::vector<Value>*) { return working->rows; };
  PlanContext right_pc = context;
  right_pc.cte_relations.emplace_back(name, working_relation);
  const auto right = plan_select(select_body((*select)["rarg"]), right_pc);
  if (right->visible != columns.size()) {
    throw Error(SqlState::syntax_error, "each UNION query must have the same number of columns");
  }
  for (size_t i = 0; i < columns.size(); ++i) {
    // The terms' rows go into the same columns: their types must be the same.
    TypeId right_type = right->outputs[i]->type.id;
    if (right_type == TypeId::unknown) right_type = TypeId::text;
    if (right_type != columns[i].type.id) {
      throw Error(SqlState::datatype_mismatch,
                  "recursive query \"" + name + "\" column " + std::to_string(i + 1) +
                      " has type " + format_type(columns[i].type) +
                      " in non-recursive term but type " + format_type(right->outputs[i]->type) +
                      " overall");
    }
  }

  auto relation = std::make_shared<MaterializedRelation>();
  relation->name = name;
  relation->columns = columns;
  relation->rows = empty_chunk(columns);
  relation->rows_at_run = [left, right, working, columns,
                           all](const std::vector<Value>* parameters) {
    ExecContext run = nested_context(parameters);
    std::unordered_set<std::string> seen;
    DataChunk out = empty_chunk(columns), added = empty_chunk(columns);
    append_new(run_select(*left, run), columns.size(), all, seen, out, added);
    while (added.rows > 0) {
      working->rows = std::move(added);
      added = empty_chunk(columns);
      if (run.cancel != nullptr) run.cancel->check();
      append_new(run_select(*right, run), columns.size(), all, seen, out, added);
    }
    working->rows = empty_chunk(columns);
    return out;
  };
  return relation;
}

}  // namespace tally::executor
