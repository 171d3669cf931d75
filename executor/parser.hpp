#pragma once
// SQL text -> PostgreSQL 15 parse tree, through libpg_query (the real grammar).
// The tree is libpg_query's JSON form, held as nlohmann::json: each statement is
// {"<NodeType>": {...}} with its location and length in the text.
//
// Parsing is a pure function of the text, so trees are cached process-wide by
// text (parse_cache below): a client that sends the same statement again
// (pgbench -M extended, JDBC's unnamed Parse per execution, an application's
// fixed queries) skips libpg_query and the JSON decode. Cached trees are
// immutable and shared between sessions.
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tally::executor {

struct ParsedStatement {
  // {"SelectStmt": {...}}, {"CreateStmt": {...}}, ...: immutable, shared with
  // the parse cache, so copying a ParsedStatement copies a pointer.
  std::shared_ptr<const nlohmann::json> tree;
  int location = 0;      // byte offset of the statement in the original text
  int length = 0;        // 0 = to the end of the text
  const nlohmann::json& node() const { return *tree; }
  // The statement's node type name ("SelectStmt"), for dispatch.
  const std::string& type() const { return tree->begin().key(); }
  const nlohmann::json& body() const { return tree->begin().value(); }
};

// Parses every statement of sql (from the cache when the same text was parsed
// before). Throws Error(42601 syntax_error) with the message and the 1-based
// cursor position PostgreSQL would report; errors are not cached.
// An empty or whitespace/comment-only string gives an empty vector.
std::vector<ParsedStatement> parse_sql(std::string_view sql);

// The same, without copying the vector: what the session's hot path uses.
std::shared_ptr<const std::vector<ParsedStatement>> parse_sql_shared(std::string_view sql);

// The cached parse of sql, or null when the cache does not hold it (a hit is
// counted; a miss is not: the parse_sql_shared that follows counts it).
std::shared_ptr<const std::vector<ParsedStatement>> find_parsed(std::string_view sql);

// Counters of the process-wide parse cache (tests and benchmarks).
struct ParseCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  size_t entries = 0;
};
ParseCacheStats parse_cache_stats();

}  // namespace tally::executor
