#include "server/statement_history_run.hpp"

#include <algorithm>
#include <exception>
#include <string>

#include "executor/database.hpp"
#include "protocol/discarding_result_writer.hpp"

namespace tally::server {
namespace {

// Encodes every DataRow as a client's result would be (the executor's
// encoder writes into data_row_buffer), then drops it: the encoder's first
// run of the statement's result shape happens here, not in a client's query.
class DroppingResultWriter final : public protocol::DiscardingResultWriter {
 public:
  std::string* data_row_buffer() override { return &buffer_; }
  void data_rows_appended() override { buffer_.clear(); }

 private:
  std::string buffer_;
};

// Runs of each statement. Why two: after one warm run a restarted process's
// next run of the statement was still the slowest of its next four (H100,
// 2026-11-23 06:27, HAVING shape, the first four client Qs after a restart
// 1.006 / 0.948 / 0.972 / 0.945 of the best fixed configuration); the
// second run's things made once (the tuner and aggregator prepared ahead
// from the first's facts, the heap the result build keeps) then happen
// before clients come too. Each run of a statement over a large table is
// milliseconds after the first has filled the column cache. (The one A/B of
// two runs against none on the H100, 07:09, was inside that query's noise:
// restart 1.021 against 1.015 over 9 samples each.)
constexpr int kWarmRunsPerStatement = 2;

}  // namespace

HistoryRunOutcome run_statement_history(executor::Database& database, std::vector<executor::HistoryStatement> statements,
                                        size_t limit, std::chrono::milliseconds budget,
                                        const std::function<bool()>& stopping) {
  const auto started = std::chrono::steady_clock::now();
  HistoryRunOutcome outcome;
  std::stable_sort(statements.begin(), statements.end(),
                   [](const auto& a, const auto& b) { return a.uses > b.uses; });
  for (size_t i = 0; i < statements.size(); ++i) {
    if (i >= limit || stopping() || std::chrono::steady_clock::now() - started >= budget) {
      outcome.skipped = statements.size() - i;
      break;
    }
    const executor::HistoryStatement& statement = statements[i];
    try {
      const auto session = executor::history_session(database, statement);
      // The history is a file: only what analyzes as a SELECT over one table
      // in this process runs. (The run itself counts one use of the
      // statement, as a client's run would.)
      if (!executor::analyze_history_statement(*session, statement, 0)) {
        ++outcome.failed;
        continue;
      }
      DroppingResultWriter out;
      for (int run = 0; run < kWarmRunsPerStatement; ++run) session->simple_query(statement.sql, out);
      ++outcome.ran;
    } catch (const std::exception&) {
      ++outcome.failed;
    }
  }
  outcome.micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - started).count();
  return outcome;
}

}  // namespace tally::server
