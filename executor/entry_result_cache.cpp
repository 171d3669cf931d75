#include "executor/entry_result_cache.hpp"

#include <algorithm>
#include <list>
#include <mutex>
#include <string_view>

#include "common/column_width.hpp"
#include "executor/expression_copy.hpp"
#include "executor/expression_equality.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/types/thread_settings.hpp"

namespace tally::executor {
namespace {

// What kept results may hold in all: a URL column's few million entries
// take 5 bytes each as a lookup (a code or verdict and a validity byte),
// plus the distinct results' bytes for a text result.
constexpr size_t kMostKeptBytes = size_t{512} << 20;

// Functions whose value depends on their arguments alone (as PostgreSQL's
// immutable ones): text functions, operators, comparisons and casts between
// the value types below, and the date and time functions whose only other
// input is the session's time zone (in the key). Anything else
// (catalog lookups, settings, clocks) is evaluated anew by each statement.
bool pure_function(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      "cast",        "like",          "=",           "<>",          "<",          "<=",        ">",
      ">=",          "||",            "+",           "-",           "*",          "/",         "%",
      "substring",   "substr",        "length",      "char_length", "character_length",        "octet_length",
      "bit_length",  "lower",         "upper",       "left",        "right",      "strpos",    "position",
      "replace",     "btrim",         "ltrim",       "rtrim",       "concat",     "concat_ws", "split_part",
      "starts_with", "reverse",       "lpad",        "rpad",        "initcap",    "translate", "ascii",
      "md5",         "regexp_replace", "regexp_like", "regexp_count", "regexp_instr", "regexp_substr", "~",
      "~*",          "!~",            "!~*",         "abs",         "nullif",     "greatest",  "least",
      "extract",     "date_part",     "date_trunc",  "timezone"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

// Types whose values print and compare the same in every session but for
// the session settings in the key: not the catalog's
// (a regclass reads the catalog of its moment).
bool value_type(TypeId id) {
  switch (id) {
    case TypeId::boolean: case TypeId::int2: case TypeId::int4: case TypeId::int8: case TypeId::float4:
    case TypeId::float8: case TypeId::numeric: case TypeId::text: case TypeId::varchar: case TypeId::bpchar:
    case TypeId::date: case TypeId::timestamp: case TypeId::timestamptz: case TypeId::interval:
    case TypeId::time: case TypeId::timetz: case TypeId::bytea: case TypeId::unknown:
      return true;
    default:
      return false;
  }
}

bool cacheable(const Expr& e, const ColumnExpr& column) {
  if (!value_type(e.type.id)) return false;
  if (const auto* c = dynamic_cast<const ColumnExpr*>(&e)) return c->index == column.index;
  if (const auto* f = dynamic_cast<const FunctionExpr*>(&e)) {
    if (!pure_function(f->name)) return false;
  } else if (!dynamic_cast<const ConstExpr*>(&e) && !dynamic_cast<const BoolExpr*>(&e) &&
             !dynamic_cast<const NullTestExpr*>(&e) && !dynamic_cast<const CoalesceExpr*>(&e) &&
             !dynamic_cast<const InListExpr*>(&e) && !dynamic_cast<const CaseExpr*>(&e)) {
    return false;  // parameters (another execution's value), subqueries, lookups
  }
  bool all = true;
  for_each_child(const_cast<Expr&>(e), [&](Expr& child) { all = all && cacheable(child, column); });
  return all;
}

bool same_store(const std::weak_ptr<const void>& a, const std::weak_ptr<const void>& b) {
  return !a.owner_before(b) && !b.owner_before(a);
}

// What a result is kept under: the kind, the dictionary's store and size,
// the expression over column 0, and the session settings casts read
// (thread_settings.hpp).
struct Key {
  EntryResultKind kind;
  std::weak_ptr<const void> store;  // the dictionary's entries, whoever holds them
  int32_t size;
  types::ThreadSettings settings;
  ExprPtr expression;  // null: not kept
  bool operator==(const Key& k) const {
    return k.kind == kind && k.size == size && k.settings == settings && same_store(k.store, store) &&
           same_expression(*k.expression, *expression);
  }
};

struct Kept {
  Key key;
  std::shared_ptr<const EntryResult> result;
  size_t bytes = 0;
};

std::mutex cache_mutex;
std::list<Kept> kept;  // least recently used first
size_t kept_bytes = 0;
uint64_t hits = 0;

// `e` with its column at index 0: the same expression in another statement
// reads the column at another place of its row.
ExprPtr key_expression(const Expr& e, const ColumnExpr& column) {
  ExprCopy copy;
  copy.replace = [&column](const Expr& node) -> ExprPtr {
    if (const auto* c = dynamic_cast<const ColumnExpr*>(&node); c && c->index == column.index) {
      return std::make_unique<ColumnExpr>(c->type, 0);
    }
    return nullptr;
  };
  return copy(e);
}

}  // namespace

size_t EntryResult::bytes() const {
  size_t n = truths.size();
  if (lookup) {
    const size_t entries = lookup->column.size + 1;
    const auto width = static_cast<ColumnWidth>(lookup->column.width);
    const size_t value_bytes = width == ColumnWidth::int32 || width == ColumnWidth::float32 ? 4 : 8;
    n += entries * (value_bytes + (lookup->column.validity ? 1 : 0));
    if (lookup->codes) {
      for (int32_t c = 0; c < lookup->codes->size(); ++c) n += lookup->codes->at(c).size() + 16;
    }
  }
  return n;
}

namespace {

Key key_of(EntryResultKind kind, const Expr& e, const ColumnExpr& column, const storage::StringDictionary& dictionary) {
  return Key{kind, dictionary.store_identity(), dictionary.size(), types::current_thread_settings(),
             cacheable(e, column) ? key_expression(e, column) : nullptr};
}

// The kept result under `key`, now the most recently used (cache_mutex held).
const Kept* find_kept(const Key& key) {
  for (auto it = kept.begin(); it != kept.end(); ++it) {
    if (!(it->key == key)) continue;
    kept.splice(kept.end(), kept, it);
    return &kept.back();
  }
  return nullptr;
}

}  // namespace

std::shared_ptr<const EntryResult> cached_entry_result(EntryResultKind kind, const Expr& e, const ColumnExpr& column,
                                                      const storage::StringDictionary& dictionary,
                                                      const std::function<std::optional<EntryResult>()>& compute) {
  Key key = key_of(kind, e, column, dictionary);
  if (key.expression) {
    const std::lock_guard lock(cache_mutex);
    if (const Kept* found = find_kept(key)) {
      ++hits;
      return found->result;
    }
  }
  std::optional<EntryResult> computed = compute();
  if (!computed) return nullptr;
  auto result = std::make_shared<const EntryResult>(std::move(*computed));
  const size_t bytes = result->bytes();
  // Not kept where it may not be, or would push out most of the others.
  if (!key.expression || bytes > kMostKeptBytes / 4) return result;
  const std::lock_guard lock(cache_mutex);
  // Results of stores no statement can read again, and one another
  // statement kept meanwhile, give way.
  for (auto it = kept.begin(); it != kept.end();) {
    if (it->key.store.expired() || it->key == key) {
      kept_bytes -= it->bytes;
      it = kept.erase(it);
    } else {
      ++it;
    }
  }
  while (!kept.empty() && kept_bytes + bytes > kMostKeptBytes) {
    kept_bytes -= kept.front().bytes;
    kept.pop_front();
  }
  kept.push_back(Kept{std::move(key), result, bytes});
  kept_bytes += bytes;
  return result;
}

bool entry_result_keepable(const Expr& e, const ColumnExpr& column) { return cacheable(e, column); }

std::shared_ptr<const EntryResult> kept_entry_result(EntryResultKind kind, const Expr& e, const ColumnExpr& column,
                                                     const storage::StringDictionary& dictionary) {
  const Key key = key_of(kind, e, column, dictionary);
  if (!key.expression) return nullptr;
  const std::lock_guard lock(cache_mutex);
  const Kept* found = find_kept(key);
  return found != nullptr ? found->result : nullptr;
}

bool entry_result_kept(EntryResultKind kind, const Expr& e, const ColumnExpr& column,
                       const storage::StringDictionary& dictionary) {
  return kept_entry_result(kind, e, column, dictionary) != nullptr;
}

EntryResultCacheStats entry_result_cache_stats() {
  const std::lock_guard lock(cache_mutex);
  return EntryResultCacheStats{kept.size(), kept_bytes, hits};
}

void clear_entry_result_cache() {
  const std::lock_guard lock(cache_mutex);
  kept.clear();
  kept_bytes = 0;
}

}  // namespace tally::executor
