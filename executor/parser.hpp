#pragma once
// SQL text -> PostgreSQL 15 parse tree, through libpg_query (the real grammar).
// The tree is libpg_query's JSON form, held as nlohmann::json: each statement is
// {"stmt": {"<NodeType>": {...}}, "stmt_location": N, "stmt_len": N}.
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tally::executor {

struct ParsedStatement {
  nlohmann::json node;   // {"SelectStmt": {...}}, {"CreateStmt": {...}}, ...
  int location = 0;      // byte offset of the statement in the original text
  int length = 0;        // 0 = to the end of the text
  // The statement's node type name ("SelectStmt"), for dispatch.
  const std::string& type() const { return node.begin().key(); }
  const nlohmann::json& body() const { return node.begin().value(); }
};

// Parses every statement of sql. Throws Error(42601 syntax_error) with the
// message and the 1-based cursor position PostgreSQL would report.
// An empty or whitespace/comment-only string gives an empty vector.
std::vector<ParsedStatement> parse_sql(std::string_view sql);

}  // namespace tally::executor
