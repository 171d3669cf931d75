#pragma once
// tallyd's statement history on disk: the texts of the process's shared
// analyses (executor/shared_analyses.hpp: SELECTs over one table, by planning
// settings, with use counts), kept in <data-dir>/statement_history and planned
// again by a restarted tallyd, so that a client's first statement after a
// restart finds its analysis made (issue 6: a restarted tallyd's first GROUP
// BY text spent ~200-300 us in parse and planning before its executor; a text
// analyzed before ~25); the most-used are also run (twice) before clients come
// (statement_history_run.hpp).
//
// Exact by construction: a re-planned analysis is used only while its table's
// snapshot is the current one and a session's planning settings are those it
// was made under, as any cached analysis (Session::analyze_shared).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "executor/shared_analyses.hpp"

namespace tally::executor {
class Database;
}

namespace tally::server {

// The file's contents, one record per statement:
//   "<uses> <settings bytes> <sql bytes>\n" <settings> <sql> "\n"
std::string encode_statement_history(const std::vector<executor::HistoryStatement>& statements);
// The records of `bytes` up to the first malformed one (a torn write loses
// only the tail); at most executor::kMaxSharedAnalyses.
std::vector<executor::HistoryStatement> decode_statement_history(const std::string& bytes);

// Reads <dir>/statement_history (empty when missing or unreadable).
std::vector<executor::HistoryStatement> load_statement_history(const std::string& dir);
// Writes it through a temporary file and a rename; false when that failed.
bool save_statement_history(const std::string& dir, const std::vector<executor::HistoryStatement>& statements);

// The background thread: re-plans the loaded history (one
// `statement_history_replanned` log line: statements, failed, ms), runs its
// `warm_runs` most-used statements twice each (statement_history_run.hpp; one
// `statement_history_ran` line: ran, failed, skipped, ms), then every
// kSaveInterval saves the history when it changed and releases analyses whose
// table changed; stop() saves once more.
class StatementHistoryKeeper {
 public:
  // No warm run starts after this long (statement_history_run.hpp): a start
  // that fills the column cache of a large table takes seconds.
  static constexpr std::chrono::milliseconds kWarmRunBudget{10'000};
  // How long tallyd waits for the warm runs before it accepts anyway (a run
  // that started within the budget runs to its end, in the background then).
  static constexpr std::chrono::milliseconds kWarmStartWait{15'000};

  StatementHistoryKeeper(executor::Database& database, std::string dir, size_t warm_runs = 0);
  ~StatementHistoryKeeper();
  void stop();
  // The re-planning finished (tests).
  bool replanned() const { return replanned_.load(); }
  // Waits until the re-planning and the warm runs finished or `limit`
  // passed; returns whether they finished. tallyd waits
  // before its listener accepts: warm runs beside a client's first
  // statements slowed them (H100, 2026-11-23 06:21: the first two Qs after a
  // restart 1.14-1.15x of the best fixed configuration with the runs in the
  // background, 1.00 from the third; without runs 1.02).
  bool wait_until_warm(std::chrono::milliseconds limit);

 private:
  void run(std::vector<executor::HistoryStatement> loaded);
  void save_if_changed();

  executor::Database& database_;
  std::string dir_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  size_t warm_runs_ = 0;
  std::atomic<bool> replanned_{false};
  bool warm_ = false;                // under mutex_
  std::condition_variable warmed_;  // notified when warm_ turns true
  uint64_t saved_version_ = 0;
  std::thread thread_;
};

}  // namespace tally::server
