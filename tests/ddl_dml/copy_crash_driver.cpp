// Child process of copy_crash_test.
//   copy_crash_driver load DIR FIRST_BATCH BATCHES ROWS CHUNK_ROWS
//     COPYs batches FIRST_BATCH.. into table crash (created if missing); after
//     each COPY returns it prints "acked <batch>" (flushed) - the parent kills
//     it at any moment.
//   copy_crash_driver csv BATCH ROWS
//     prints batch BATCH as CSV (what load would COPY), for loads through tallyd.
//   copy_crash_driver verify DIR CHUNK_ROWS
//     recovers, then prints "batch <id> <rows>" per batch present, "total N",
//     and "orphans N" (files recover() removed), or "error ..." on failure.
#include <cstdio>
#include <map>
#include <string>

#include "storage/table_appender.hpp"
#include "tests/ddl_dml/sql_harness.hpp"

using tally::testing::SqlHarness;

namespace {

// Batch rows: (batch, seq, label text, value float8, day date); labels repeat
// so the dictionary grows in some batches and not others.
std::string batch_csv(int batch, int rows) {
  std::string s;
  s.reserve(static_cast<size_t>(rows) * 40);
  for (int i = 0; i < rows; ++i) {
    s += std::to_string(batch);
    s += ',';
    s += std::to_string(i);
    s += ",label-";
    s += std::to_string((batch * 7 + i) % 1000 + (i % 97 == 0 ? batch * 1000 : 0));
    s += ',';
    s += std::to_string(i * 0.5);
    s += ",2021-01-";
    s += std::to_string(10 + i % 18);
    s += '\n';
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const std::string mode = argv[1];
  if (mode == "csv" && argc == 4) {
    const std::string csv = batch_csv(std::stoi(argv[2]), std::stoi(argv[3]));
    std::fwrite(csv.data(), 1, csv.size(), stdout);
    return 0;
  }
  const std::string dir = argv[2];
  try {
    if (mode == "load" && argc == 7) {
      const int first = std::stoi(argv[3]), batches = std::stoi(argv[4]), rows = std::stoi(argv[5]);
      SqlHarness h(dir, static_cast<uint32_t>(std::stoul(argv[6])));
      h.run("CREATE TABLE IF NOT EXISTS crash (batch int NOT NULL, seq int NOT NULL, label text, v float8, day date)");
      for (int b = first; b < first + batches; ++b) {
        h.run("COPY crash FROM STDIN (FORMAT csv)", batch_csv(b, rows));
        std::printf("acked %d\n", b);
        std::fflush(stdout);
      }
      return 0;
    }
    if (mode == "verify" && argc == 4) {
      SqlHarness h(dir, static_cast<uint32_t>(std::stoul(argv[3])));  // runs recover()
      std::printf("recovered %zu\n", h.recovered());
      auto snap = h.catalog().find_table("crash");
      if (!snap) {
        std::printf("total 0\n");
        return 0;
      }
      std::map<int, uint64_t> per_batch;
      uint64_t total = 0;
      const int cols[] = {0, 1, 2};
      for (size_t c = 0; c < snap->chunks.size(); ++c) {
        auto batch = h.store().read_chunk(*snap, c, cols);
        if (batch->rows != snap->chunks[c].rows) throw std::runtime_error("row count mismatch");
        for (size_t r = 0; r < batch->rows; ++r) {
          ++per_batch[batch->columns[0].values<int32_t>()[r]];
          // Every text code must resolve (dictionary consistent with chunks).
          const int32_t code = batch->columns[2].values<int32_t>()[r];
          if (batch->columns[2].dictionary->at(code).rfind("label-", 0) != 0) throw std::runtime_error("bad label");
        }
        total += batch->rows;
      }
      for (const auto& [b, n] : per_batch) std::printf("batch %d %llu\n", b, static_cast<unsigned long long>(n));
      std::printf("total %llu\n", static_cast<unsigned long long>(total));
      // A second recover after a clean open must find nothing to remove.
      std::printf("orphans %zu\n", h.store().recover());
      return 0;
    }
  } catch (const std::exception& e) {
    std::printf("error %s\n", e.what());
    return 1;
  }
  return 2;
}
