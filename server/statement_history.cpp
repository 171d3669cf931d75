#include "server/statement_history.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/log.hpp"
#include "common/thread_name.hpp"
#include "executor/database.hpp"
#include "server/statement_history_run.hpp"

namespace tally::server {
namespace {

constexpr const char* kFileName = "statement_history";
// How often the history is saved when it changed: a tallyd killed without
// SIGTERM loses at most this much of it; a save is one small file write.
constexpr auto kSaveInterval = std::chrono::seconds(2);
// Texts longer than this are not recorded (the parse cache keeps no longer ones either).
constexpr size_t kMaxTextBytes = 8 * 1024;

}  // namespace

std::string encode_statement_history(const std::vector<executor::HistoryStatement>& statements) {
  std::string out;
  for (const auto& s : statements) {
    if (s.sql.size() > kMaxTextBytes) continue;
    out += std::to_string(s.uses) + " " + std::to_string(s.settings.size()) + " " + std::to_string(s.sql.size()) + "\n";
    out += s.settings;
    out += s.sql;
    out += "\n";
  }
  return out;
}

std::vector<executor::HistoryStatement> decode_statement_history(const std::string& bytes) {
  std::vector<executor::HistoryStatement> out;
  size_t at = 0;
  while (at < bytes.size() && out.size() < executor::kMaxSharedAnalyses) {
    const size_t eol = bytes.find('\n', at);
    if (eol == std::string::npos) break;
    unsigned long long uses = 0, settings = 0, sql = 0;
    int consumed = 0;
    const std::string header = bytes.substr(at, eol - at);
    if (std::sscanf(header.c_str(), "%llu %llu %llu%n", &uses, &settings, &sql, &consumed) != 3 ||
        static_cast<size_t>(consumed) != header.size() || sql == 0 || sql > kMaxTextBytes ||
        settings > bytes.size() || eol + 1 + settings + sql + 1 > bytes.size() ||
        bytes[eol + 1 + settings + sql] != '\n') {
      break;
    }
    executor::HistoryStatement s;
    s.uses = uses;
    s.settings = bytes.substr(eol + 1, settings);
    s.sql = bytes.substr(eol + 1 + settings, sql);
    out.push_back(std::move(s));
    at = eol + 1 + settings + sql + 1;
  }
  return out;
}

std::vector<executor::HistoryStatement> load_statement_history(const std::string& dir) {
  std::ifstream in(dir + "/" + kFileName, std::ios::binary);
  if (!in) return {};
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return decode_statement_history(bytes.str());
}

bool save_statement_history(const std::string& dir, const std::vector<executor::HistoryStatement>& statements) {
  const std::string path = dir + "/" + kFileName;
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out << encode_statement_history(statements);
    if (!out.flush()) return false;
  }
  return std::rename(temporary.c_str(), path.c_str()) == 0;
}

StatementHistoryKeeper::StatementHistoryKeeper(executor::Database& database, std::string dir, size_t warm_runs)
    : database_(database), dir_(std::move(dir)), warm_runs_(warm_runs) {
  auto loaded = load_statement_history(dir_);
  thread_ = std::thread([this, loaded = std::move(loaded)]() mutable {
    name_this_thread("tally-history");
    run(std::move(loaded));
  });
}

StatementHistoryKeeper::~StatementHistoryKeeper() { stop(); }

void StatementHistoryKeeper::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  save_if_changed();
}

void StatementHistoryKeeper::run(std::vector<executor::HistoryStatement> loaded) {
  if (!loaded.empty()) {
    const auto outcome = executor::replan_statement_history(database_, loaded);
    log::info("statement_history_replanned", {{"statements", static_cast<int64_t>(outcome.planned)},
                                              {"failed", static_cast<int64_t>(outcome.failed)},
                                              {"ms", std::round(outcome.micros / 10.0) / 100.0}});
  }
  replanned_ = true;
  if (!loaded.empty() && warm_runs_ > 0) {
    // A start that fills the column cache of a large table takes seconds:
    // say what tallyd is doing before it accepts.
    log::info("statement_history_running", {{"statements", static_cast<int64_t>(std::min(loaded.size(), warm_runs_))},
                                            {"budget_ms", static_cast<int64_t>(kWarmRunBudget.count())}});
    const auto outcome = run_statement_history(database_, std::move(loaded), warm_runs_, kWarmRunBudget, [this] {
      std::lock_guard lock(mutex_);
      return stopping_;
    });
    log::info("statement_history_ran", {{"ran", static_cast<int64_t>(outcome.ran)},
                                        {"failed", static_cast<int64_t>(outcome.failed)},
                                        {"skipped", static_cast<int64_t>(outcome.skipped)},
                                        {"ms", std::round(outcome.micros / 10.0) / 100.0}});
  }
  std::unique_lock lock(mutex_);
  warm_ = true;
  warmed_.notify_all();
  while (!stopping_) {
    wake_.wait_for(lock, kSaveInterval, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    executor::release_stale_shared_analyses(database_);
    save_if_changed();
    lock.lock();
  }
}

bool StatementHistoryKeeper::wait_until_warm(std::chrono::milliseconds limit) {
  std::unique_lock lock(mutex_);
  return warmed_.wait_for(lock, limit, [this] { return warm_; });
}

void StatementHistoryKeeper::save_if_changed() {
  const uint64_t version = executor::statement_history_version();
  if (version == saved_version_) return;
  if (save_statement_history(dir_, executor::statement_history())) saved_version_ = version;
}

}  // namespace tally::server
