#include "executor/parser.hpp"

#include <pg_query.h>

#include <memory>
#include <string>

#include "common/error.hpp"

namespace tally::executor {

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
  const auto tree = nlohmann::json::parse(result.parse_tree);
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
