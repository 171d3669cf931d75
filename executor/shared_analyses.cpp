#include "executor/shared_analyses.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "common/error.hpp"
#include "executor/database.hpp"
#include "executor/parser.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {
namespace {

// Settings no analysis reads: the executor reads the tally.* knobs when it
// runs (Session::make_exec_context, Database::prepare), the protocol the
// timeouts, the wire application_name; transaction_* change at BEGIN/COMMIT.
// Everything else (DateStyle, TimeZone, search_path, session_authorization,
// extra_float_digits ...) keeps sessions with other values apart, whether or
// not today's planner reads it.
constexpr std::string_view kExecutionOnlySettings[] = {
    "tally.engine",     "tally.variant",        "tally.launch_config",
    "application_name", "statement_timeout",    "lock_timeout",          "idle_in_transaction_session_timeout",
    "transaction_isolation", "transaction_read_only", "tally.plan_reuse"};

struct Entry {
  std::string sql;
  std::string settings;
  // Uses before the current analysis (a replaced one's, a recorded count);
  // the current analysis counts its own (Analyzed::runs).
  uint64_t uses = 0;
  uint64_t last_use = 0;  // SharedAnalyses::clock_ at the last use
  std::shared_ptr<const Session::Analyzed> analyzed;  // null once released as stale
  bool has_parameters = false;  // a prepared statement's: not in the history (its types are not kept)
};

uint64_t total_uses(const Entry& e) {
  return e.uses + (e.analyzed && e.analyzed->runs ? e.analyzed->runs->load(std::memory_order_relaxed) : 0);
}

class SharedAnalyses {
 public:
  std::shared_ptr<const Session::Analyzed> find(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end() || !it->second.analyzed) return nullptr;
    it->second.last_use = ++clock_;
    ++version_;
    return it->second.analyzed;
  }

  void share(const std::string& key, const std::string& settings, std::string_view sql,
             std::shared_ptr<const Session::Analyzed> analyzed, uint64_t uses) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      if (entries_.size() >= kMaxSharedAnalyses) {
        // Out goes the least used, the least recently used among those.
        auto victim = std::min_element(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) {
          return std::pair(total_uses(a.second), a.second.last_use) < std::pair(total_uses(b.second), b.second.last_use);
        });
        entries_.erase(victim);
      }
      it = entries_.emplace(key, Entry{std::string(sql), settings, 0, 0, nullptr}).first;
    }
    if (it->second.analyzed && it->second.analyzed->runs) it->second.uses += it->second.analyzed->runs->load();
    it->second.uses += uses;
    it->second.last_use = ++clock_;
    it->second.has_parameters = !analyzed->parameter_types.empty();
    it->second.analyzed = std::move(analyzed);
    ++version_;
  }

  std::vector<HistoryStatement> history() {
    std::vector<std::pair<uint64_t, HistoryStatement>> ordered;
    {
      std::lock_guard lock(mutex_);
      for (const auto& [key, e] : entries_) {
        if (!e.has_parameters) ordered.push_back({e.last_use, {e.sql, e.settings, total_uses(e)}});
      }
    }
    std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
      return std::pair(a.second.uses, a.first) > std::pair(b.second.uses, b.first);
    });
    std::vector<HistoryStatement> out;
    for (auto& [at, statement] : ordered) out.push_back(std::move(statement));
    return out;
  }

  // Changes with the entries and with their runs.
  uint64_t version() {
    std::lock_guard lock(mutex_);
    uint64_t runs = 0;
    for (const auto& [key, e] : entries_) runs += total_uses(e);
    return version_ * 1'000'003 + runs;
  }

  // The entries' analyses, to check without holding the lock.
  std::vector<std::pair<std::string, std::shared_ptr<const Session::Analyzed>>> analyses() {
    std::lock_guard lock(mutex_);
    std::vector<std::pair<std::string, std::shared_ptr<const Session::Analyzed>>> out;
    for (const auto& [key, e] : entries_) {
      if (e.analyzed) out.emplace_back(key, e.analyzed);
    }
    return out;
  }

  // Releases `key`'s analysis if it is still `analyzed`.
  void release(const std::string& key, const Session::Analyzed* analyzed) {
    std::shared_ptr<const Session::Analyzed> doomed;  // freed after the lock
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end() && it->second.analyzed.get() == analyzed) {
      it->second.uses = total_uses(it->second);
      doomed = std::move(it->second.analyzed);
    }
  }

  void clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
    shapes_.clear();
    shapes_exist_ = false;
    ++version_;
  }

  void share_shape(const std::string& key, std::shared_ptr<const Session::ShapeTemplate> shape) {
    std::lock_guard lock(mutex_);
    if (shapes_.size() >= kMaxSharedAnalyses && !shapes_.contains(key)) shapes_.clear();
    shapes_.insert_or_assign(key, std::move(shape));
    shapes_exist_ = true;
  }

  std::shared_ptr<const Session::ShapeTemplate> find_shape(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto it = shapes_.find(key);
    return it == shapes_.end() ? nullptr : it->second;
  }

  // The shapes, to check without holding the lock.
  std::vector<std::pair<std::string, std::shared_ptr<const Session::ShapeTemplate>>> shapes() {
    std::lock_guard lock(mutex_);
    return {shapes_.begin(), shapes_.end()};
  }

  void release_shape(const std::string& key, const Session::ShapeTemplate* shape) {
    std::shared_ptr<const Session::ShapeTemplate> doomed;  // freed after the lock
    std::lock_guard lock(mutex_);
    auto it = shapes_.find(key);
    if (it != shapes_.end() && it->second.get() == shape) {
      doomed = std::move(it->second);
      shapes_.erase(it);
    }
    shapes_exist_ = !shapes_.empty();
  }

  bool shapes_exist() const { return shapes_exist_.load(std::memory_order_relaxed); }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  std::unordered_map<std::string, std::shared_ptr<const Session::ShapeTemplate>> shapes_;
  std::atomic<bool> shapes_exist_{false};
  uint64_t clock_ = 0;
  uint64_t version_ = 0;
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

std::vector<HistoryStatement> statement_history() { return shared().history(); }

uint64_t statement_history_version() { return shared().version(); }

std::shared_ptr<const Session::Analyzed> find_shared_analysis(const std::string& key) { return shared().find(key); }

void count_shared_analysis_reuse() { reuses.fetch_add(1, std::memory_order_relaxed); }

void share_analysis(const std::string& key, const std::string& settings, std::string_view sql,
                    std::shared_ptr<const Session::Analyzed> analyzed, uint64_t uses) {
  shared().share(key, settings, sql, std::move(analyzed), uses);
}

uint64_t shared_analysis_reuses() { return reuses.load(std::memory_order_relaxed); }

void clear_shared_analyses() { shared().clear(); }

void share_shape(const std::string& key, std::shared_ptr<const Session::ShapeTemplate> shape) {
  shared().share_shape(key, std::move(shape));
}

std::shared_ptr<const Session::ShapeTemplate> find_shared_shape(const std::string& key) {
  return shared().find_shape(key);
}

bool shared_shapes_exist() { return shared().shapes_exist(); }

void release_stale_shared_analyses(Database& database) {
  const auto current = [&](const Session::Analyzed& analyzed) {
    const auto& table = analyzed.select ? select_table(*analyzed.select) : nullptr;
    if (!table) return true;
    const auto now = database.tables().find_table("", table->name());
    return now && now->version() == table->version();
  };
  for (const auto& [key, analyzed] : shared().analyses()) {
    if (!current(*analyzed)) shared().release(key, analyzed.get());
  }
  for (const auto& [key, shape] : shared().shapes()) {
    if (!current(*shape->analyzed)) shared().release_shape(key, shape.get());
  }
}

std::unique_ptr<Session> history_session(Database& database, const HistoryStatement& statement) {
  // session_authorization is one of the recorded settings; the session's
  // user only names it before they are applied.
  protocol::SessionInfo info;
  info.database = database.config().databases.empty() ? "tally" : database.config().databases.front();
  auto session = std::make_unique<Session>(&database, &database.tables(), info);
  std::string_view lines = statement.settings;
  while (!lines.empty()) {
    const size_t end = lines.find('\n');
    const std::string_view line = lines.substr(0, end);
    const size_t eq = line.find('=');
    if (eq != std::string_view::npos) session->settings().initialize(line.substr(0, eq), line.substr(eq + 1));
    lines.remove_prefix(end == std::string_view::npos ? lines.size() : end + 1);
  }
  return session;
}

bool analyze_history_statement(Session& session, const HistoryStatement& statement, uint64_t uses) {
  const auto parsed = parse_sql_shared(statement.sql);
  return parsed->size() == 1 && session.analyze_shared(statement.sql, parsed->front(), {}, uses)->reusable_over_table;
}

ReplanOutcome replan_statement_history(Database& database, const std::vector<HistoryStatement>& statements) {
  const auto started = std::chrono::steady_clock::now();
  ReplanOutcome outcome;
  for (const auto& statement : statements) {
    try {
      const auto session = history_session(database, statement);
      if (!analyze_history_statement(*session, statement, statement.uses)) {
        ++outcome.failed;
        continue;
      }
      session->make_pending_shapes();  // its shape too, for texts that differ in a literal
      ++outcome.planned;
    } catch (const std::exception&) {
      ++outcome.failed;  // the table is gone or changed shape: the statement leaves the history
    }
  }
  outcome.micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - started).count();
  return outcome;
}

}  // namespace tally::executor
