#include "executor/shared_analyses.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "executor/select_plan.hpp"
#include "executor/table_provider.hpp"

namespace tally::executor {
namespace {

// Settings no analysis reads: the executor reads the tally.* knobs when it
// runs (SqlSession::make_exec_context, Database::prepare), the protocol the
// timeouts, the wire application_name; transaction_* change at BEGIN/COMMIT.
// Everything else (DateStyle, TimeZone, search_path, session_authorization,
// extra_float_digits ...) keeps sessions with other values apart, whether or
// not today's planner reads it.
constexpr std::string_view kExecutionOnlySettings[] = {
    "tally.engine",          "tally.variant",        "tally.lookup_joins",
    "tally.launch_config",   "application_name",
    "statement_timeout",     "lock_timeout",
    "idle_in_transaction_session_timeout", "transaction_isolation",
    "transaction_read_only"};

struct Entry {
  // Uses before the current analysis (a replaced one's); the current
  // analysis counts its own (AnalyzedStatement::runs).
  uint64_t uses = 0;
  uint64_t last_use = 0;  // SharedAnalyses::clock_ at the last use
  std::shared_ptr<const AnalyzedStatement> analyzed;
};

uint64_t total_uses(const Entry& e) {
  return e.uses +
         (e.analyzed && e.analyzed->runs ? e.analyzed->runs->load(std::memory_order_relaxed) : 0);
}

class SharedAnalyses {
 public:
  std::shared_ptr<const AnalyzedStatement> find(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    it->second.last_use = ++clock_;
    return it->second.analyzed;
  }

  void share(const std::string& key, std::shared_ptr<const AnalyzedStatement> analyzed) {
    std::shared_ptr<const AnalyzedStatement> doomed;  // freed after the lock
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      if (entries_.size() >= kMaxSharedAnalyses) {
        // Out goes the least used, the least recently used among those.
        auto victim =
            std::min_element(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) {
              return std::pair(total_uses(a.second), a.second.last_use) <
                     std::pair(total_uses(b.second), b.second.last_use);
            });
        doomed = std::move(victim->second.analyzed);
        entries_.erase(victim);
      }
      it = entries_.emplace(key, Entry{}).first;
    }
    it->second.uses = total_uses(it->second);
    it->second.last_use = ++clock_;
    doomed = std::exchange(it->second.analyzed, std::move(analyzed));
  }

  // The entries' analyses, to check without holding the lock.
  std::vector<std::pair<std::string, std::shared_ptr<const AnalyzedStatement>>> analyses() {
    std::lock_guard lock(mutex_);
    std::vector<std::pair<std::string, std::shared_ptr<const AnalyzedStatement>>> out;
    out.reserve(entries_.size());
    for (const auto& [key, e] : entries_) out.emplace_back(key, e.analyzed);
    return out;
  }

  // Drops `key`'s entry if its analysis is still `analyzed`.
  void release(const std::string& key, const AnalyzedStatement* analyzed) {
    std::shared_ptr<const AnalyzedStatement> doomed;  // freed after the lock
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end() && it->second.analyzed.get() == analyzed) {
      doomed = std::move(it->second.analyzed);
      entries_.erase(it);
    }
  }

  bool empty() {
    std::lock_guard lock(mutex_);
    return entries_.empty();
  }

  void clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  uint64_t clock_ = 0;
};

SharedAnalyses& shared() {
  static SharedAnalyses cache;
  return cache;
}

std::atomic<uint64_t> reuses{0};

}  // namespace

std::string planning_settings_fingerprint(const std::map<std::string, std::string>& settings) {
  std::string out;
  for (const auto& [name, value] : settings) {
    if (std::find(std::begin(kExecutionOnlySettings), std::end(kExecutionOnlySettings), name) !=
        std::end(kExecutionOnlySettings)) {
      continue;
    }
    out.append(name).push_back('=');
    out.append(value).push_back('\n');
  }
  return out;
}

std::shared_ptr<const AnalyzedStatement> find_shared_analysis(const std::string& key) {
  return shared().find(key);
}

void count_shared_analysis_reuse() { reuses.fetch_add(1, std::memory_order_relaxed); }

void share_analysis(const std::string& key, std::shared_ptr<const AnalyzedStatement> analyzed) {
  shared().share(key, std::move(analyzed));
}

uint64_t shared_analysis_reuses() { return reuses.load(std::memory_order_relaxed); }

void clear_shared_analyses() { shared().clear(); }

void release_stale_shared_analyses(TableProvider& tables) {
  if (shared().empty()) return;
  for (const auto& [key, analyzed] : shared().analyses()) {
    const auto& table = analyzed->select ? select_table(*analyzed->select) : nullptr;
    if (!table) continue;
    const auto now = tables.find_table("", table->name());
    if (!now || now->version() != table->version()) shared().release(key, analyzed.get());
  }
}

}  // namespace tally::executor
