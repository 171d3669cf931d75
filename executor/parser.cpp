#include "executor/parser.hpp"

#include <pg_query.h>

#include <cstdint>
#include <memory>
#include <string>

#include "common/error.hpp"

namespace tally::executor {
namespace {

// libpg_query 15's JSON writer omits a negative integer constant's value
// ("SELECT -2" gives {"A_Const":{"ival":{}}}, the same as 0), so an A_Const
// whose ival is empty is re-read from the statement text at its location.
void restore_negative_int_constants(nlohmann::json& node, std::string_view sql) {
  if (node.is_object()) {
    auto konst = node.find("A_Const");
    if (konst != node.end() && konst->is_object()) {
      auto ival = konst->find("ival");
      auto location = konst->find("location");
      if (ival != konst->end() && ival->is_object() && !ival->contains("ival") &&
          location != konst->end() && location->is_number_integer()) {
        size_t at = location->get<size_t>();
        if (at < sql.size() && sql[at] == '-') {
          ++at;
          while (at < sql.size() && (sql[at] == ' ' || sql[at] == '\t' || sql[at] == '\n' ||
                                     sql[at] == '\r')) {
            ++at;
          }
          int64_t magnitude = 0;
          while (at < sql.size() && sql[at] >= '0' && sql[at] <= '9') {
            magnitude = magnitude * 10 + (sql[at] - '0');
            ++at;
          }
          (*ival)["ival"] = -magnitude;
        }
      }
    }
    for (auto& [key, child] : node.items()) restore_negative_int_constants(child, sql);
  } else if (node.is_array()) {
    for (auto& child : node) restore_negative_int_constants(child, sql);
  }
}

}  // namespace

std::vector<ParsedStatement> parse_sql(std::string_view sql) {
  const std::string text(sql);  // libpg_query needs a NUL-terminated string
  PgQueryParseResult result = pg_query_parse(text.c_str());
  std::unique_ptr<PgQueryParseResult, void (*)(PgQueryParseResult*)> guard(
      &result, [](PgQueryParseResult* r) { pg_query_free_parse_result(*r); });

  if (result.error != nullptr) {
    // libpg_query reports PostgreSQL's own message ("syntax error at or near ...")
    // and the cursor position as a 1-based character offset, as the server does.
    Error error(SqlState::syntax_error, result.error->message);
    if (result.error->cursorpos > 0) error.with_position(result.error->cursorpos);
    throw error;
  }

  std::vector<ParsedStatement> statements;
  auto tree = nlohmann::json::parse(result.parse_tree);
  restore_negative_int_constants(tree, sql);
  if (!tree.contains("stmts")) return statements;
  for (const auto& raw : tree["stmts"]) {
    ParsedStatement statement;
    statement.node = raw.at("stmt");
    statement.location = raw.value("stmt_location", 0);
    statement.length = raw.value("stmt_len", 0);
    statements.push_back(std::move(statement));
  }
  return statements;
}

}  // namespace tally::executor
