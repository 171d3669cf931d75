// Single-row INSERT rate: N concurrent sessions each run
//   INSERT INTO ins_t VALUES (<k>, '<label>', <k>.5)
// statements (parse + cast + append + fsync + catalog commit, in-process, no
// network) for a fixed time, with group commit (storage/group_commit.hpp) and,
// as the baseline in the same run, with one commit per statement. Prints
// statements/s per client count and the ratio. Correctness: the table's row
// count and sum(k) must equal what the sessions report they inserted.
// --inline-chunk-bytes takes a list: one table per value of
// StoreOptions::inline_chunk_bytes (0: the table's rewritten tail chunk in
// files; the default: kept in the catalog while it is small).
//
// Usage: insert_rate_bench [--seconds S] [--clients 1,4,16] [--dir PATH] [--inline-chunk-bytes 0,262144]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "catalog/catalog.hpp"
#include "executor/ddl/ddl.hpp"
#include "executor/dml/dml.hpp"
#include "executor/parser.hpp"
#include "storage/table_store.hpp"
#include "protocol/discarding_result_writer.hpp"

namespace fs = std::filesystem;
using namespace tally;

namespace {

using NullWriter = protocol::DiscardingResultWriter;

struct Measurement {
  int clients = 0;
  bool grouped = false;
  uint64_t statements = 0;
  double seconds = 0;
  uint64_t grouped_commits = 0;
  bool correct = false;
};

std::string execute(storage::TableStore& store, const std::string& sql) {
  NullWriter out;
  std::string tag;
  for (const auto& st : executor::parse_sql(sql)) {
    executor::StatementContext ctx{store, out, sql, nullptr};
    tag = st.type() == "CreateStmt" ? executor::ddl::create_table(st.body(), ctx) : executor::dml::insert(st.body(), ctx);
  }
  return tag;
}

Measurement measure(const std::string& dir, int clients, bool grouped, double seconds, uint64_t inline_chunk_bytes) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  catalog::Catalog cat(dir);
  storage::StoreOptions options;
  options.group_commit = grouped;
  options.inline_chunk_bytes = inline_chunk_bytes;
  storage::TableStore store(cat, options);
  execute(store, "CREATE TABLE ins_t (k bigint, label text, v float8)");
  std::atomic<bool> stop{false};
  std::vector<uint64_t> counts(static_cast<size_t>(clients), 0), sums(static_cast<size_t>(clients), 0);
  std::vector<std::thread> threads;
  const auto t0 = std::chrono::steady_clock::now();
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      uint64_t k = static_cast<uint64_t>(c) * 1'000'000'000ULL;
      while (!stop.load(std::memory_order_relaxed)) {
        ++k;
        const std::string sql = "INSERT INTO ins_t VALUES (" + std::to_string(k) + ", 'label" + std::to_string(k % 97) +
                                "', " + std::to_string(k) + ".5)";
        if (execute(store, sql) != "INSERT 0 1") return;  // counted as incorrect below
        ++counts[static_cast<size_t>(c)];
        sums[static_cast<size_t>(c)] += k;
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  Measurement m;
  m.clients = clients;
  m.grouped = grouped;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  uint64_t want_sum = 0;
  for (int c = 0; c < clients; ++c) {
    m.statements += counts[static_cast<size_t>(c)];
    want_sum += sums[static_cast<size_t>(c)];
  }
  const auto snap = cat.find_table("ins_t");
  m.grouped_commits = store.grouped_commits(snap->def.oid);
  uint64_t rows = 0, sum = 0;
  const int columns[] = {0};
  for (size_t i = 0; i < snap->chunks.size(); ++i) {
    const auto batch = store.read_chunk(*snap, i, columns);
    rows += batch->rows;
    for (size_t r = 0; r < batch->rows; ++r) sum += static_cast<uint64_t>(batch->columns[0].values<int64_t>()[r]);
  }
  m.correct = rows == m.statements && sum == want_sum;
  return m;
}

}  // namespace

// A comma-separated list of numbers.
template <class T>
std::vector<T> parse_list(const std::string& text) {
  std::vector<T> out;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) out.push_back(static_cast<T>(std::stoull(item)));
  return out;
}

int main(int argc, char** argv) {
  double seconds = 3;
  std::vector<int> client_counts = {1, 4, 16};
  std::vector<uint64_t> inline_sizes = {storage::StoreOptions{}.inline_chunk_bytes};
  std::string dir = (fs::temp_directory_path() / "tally-insert-bench").string();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) seconds = std::stod(argv[++i]);
    else if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (a == "--clients" && i + 1 < argc) client_counts = parse_list<int>(argv[++i]);
    else if (a == "--inline-chunk-bytes" && i + 1 < argc) inline_sizes = parse_list<uint64_t>(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: insert_rate_bench [--seconds S] [--clients 1,4,16] [--dir PATH] [--inline-chunk-bytes 0,262144]\n");
      return 2;
    }
  }
  std::printf("single-row INSERT, in-process, fsync on, %.1f s per cell, data in %s\n", seconds, dir.c_str());
  bool all_correct = true;
  for (const uint64_t inline_bytes : inline_sizes) {
    std::printf("\ninline_chunk_bytes %llu\n\n", static_cast<unsigned long long>(inline_bytes));
    std::printf("| clients | one commit per statement (stmt/s) | group commit (stmt/s) | ratio | grouped commits | correct |\n");
    std::printf("|--------:|----------------------------------:|----------------------:|------:|----------------:|:-------:|\n");
    for (const int clients : client_counts) {
      const Measurement base = measure(dir, clients, false, seconds, inline_bytes);
      const Measurement group = measure(dir, clients, true, seconds, inline_bytes);
      const double base_rate = static_cast<double>(base.statements) / base.seconds;
      const double group_rate = static_cast<double>(group.statements) / group.seconds;
      const bool correct = base.correct && group.correct;
      all_correct = all_correct && correct;
      std::printf("| %7d | %33.1f | %21.1f | %5.2fx | %15llu | %s |\n", clients, base_rate, group_rate,
                  base_rate > 0 ? group_rate / base_rate : 0.0, static_cast<unsigned long long>(group.grouped_commits),
                  correct ? "yes" : "NO");
      std::fflush(stdout);
    }
  }
  fs::remove_all(dir);
  return all_correct ? 0 : 1;
}
