#include "executor/parser.hpp"

#include <pg_query.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/error.hpp"
#include "executor/types/type_io.hpp"

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

// Statements at most this long are cached: bulk INSERT ... VALUES texts are long
// and rarely sent twice, while the statements clients repeat are short.
constexpr size_t kMaxCachedTextBytes = 8 * 1024;
// Distinct texts kept. On overflow the cache starts over (one clear, no LRU
// bookkeeping on the hit path); a workload with more distinct texts than this
// parses as it would without a cache.
constexpr size_t kMaxCachedTexts = 4096;

struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

using ParsedList = std::vector<ParsedStatement>;

class ParseCache {
 public:
  std::shared_ptr<const ParsedList> find(std::string_view sql, bool count_miss = true) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(sql);
    if (it == entries_.end()) {
      if (count_miss) ++misses_;
      return nullptr;
    }
    ++hits_;
    return it->second;
  }
  void insert(std::string_view sql, std::shared_ptr<const ParsedList> parsed) {
    std::lock_guard lock(mutex_);
    if (entries_.size() >= kMaxCachedTexts) entries_.clear();
    entries_.emplace(std::string(sql), std::move(parsed));
  }
  ParseCacheStats stats() {
    std::lock_guard lock(mutex_);
    return {hits_, misses_, entries_.size()};
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const ParsedList>, TextHash, std::equal_to<>> entries_;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

ParseCache& parse_cache() {
  static ParseCache cache;
  return cache;
}

std::shared_ptr<const ParsedList> parse_uncached(std::string_view sql) {
  // libpg_query passes the text's bytes into its JSON output, which then
  // fails to parse: refuse invalid UTF-8 first, with PostgreSQL's 22021.
  types::check_utf8(sql);
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

  auto statements = std::make_shared<ParsedList>();
  auto tree = nlohmann::json::parse(result.parse_tree);
  // The walk visits every node (a tenth of a new text's parse); only a text
  // with a '-' whose tree has an empty ival can need it.
  if (sql.find('-') != std::string_view::npos && std::strstr(result.parse_tree, "\"ival\":{}") != nullptr) {
    restore_negative_int_constants(tree, sql);
  }
  auto stmts = tree.find("stmts");
  if (stmts == tree.end()) return statements;
  statements->reserve(stmts->size());
  for (auto& raw : *stmts) {
    ParsedStatement statement;
    statement.tree = std::make_shared<const nlohmann::json>(std::move(raw.at("stmt")));
    statement.location = raw.value("stmt_location", 0);
    statement.length = raw.value("stmt_len", 0);
    statements->push_back(std::move(statement));
  }
  return statements;
}

}  // namespace

std::shared_ptr<const std::vector<ParsedStatement>> parse_sql_shared(std::string_view sql) {
  const bool cacheable = sql.size() <= kMaxCachedTextBytes;
  if (cacheable) {
    if (auto cached = parse_cache().find(sql)) return cached;
  }
  auto parsed = parse_uncached(sql);
  if (cacheable) parse_cache().insert(sql, parsed);
  return parsed;
}

std::shared_ptr<const std::vector<ParsedStatement>> find_parsed(std::string_view sql) {
  if (sql.size() > kMaxCachedTextBytes) return nullptr;
  return parse_cache().find(sql, /*count_miss=*/false);
}

std::vector<ParsedStatement> parse_sql(std::string_view sql) { return *parse_sql_shared(sql); }

ParseCacheStats parse_cache_stats() { return parse_cache().stats(); }

}  // namespace tally::executor
