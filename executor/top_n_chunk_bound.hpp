#pragma once
// ORDER BY key LIMIT n over a stored table's rows (`SELECT * FROM events
// ORDER BY ts DESC LIMIT 20`): the chunks are read in the order of their
// statistics for the first sort key, the likeliest to hold the first rows
// first, and once n rows are in, a chunk whose range cannot hold a row
// before the n-th of them is not read. On a table loaded in time order that
// leaves a chunk or two to read.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tally::executor {

class TableSnapshot;
struct Vector;
struct ScanPiece;
struct SelectPlan;

class TopNChunkBound {
 public:
  // Null where the first sort key is not a bare stored column whose chunk
  // statistics compare as its values (int2/4/8, date, timestamp), n is too
  // large to recount per chunk, or a row of a skipped chunk could raise an
  // error PostgreSQL raises (it projects and filters every row before it
  // sorts): an output other than a bare column, or a WHERE that may raise
  // (`where_never_raises` false).
  static std::unique_ptr<TopNChunkBound> plan(const SelectPlan& plan, size_t n, bool where_never_raises);
  // `pieces` in the order to read them: by their chunk's min (ASC) or max (DESC).
  void order(std::vector<ScanPiece>& pieces) const;
  // Whether `chunk` can no longer hold one of the first n rows. Thread-safe.
  bool skips(size_t chunk) const;
  // The first sort key's output column of every row taken so far: the
  // bound is its n-th value in the sort's order, once n are not NULL.
  void update(const Vector& first_key);
  // EXPLAIN ANALYZE's line ("" where no chunk was skipped).
  std::string explain() const;

 private:
  TopNChunkBound(const TableSnapshot& table, int column, bool descending, bool nulls_first, size_t n);
  const TableSnapshot& table_;
  int column_;
  bool descending_, nulls_first_;
  size_t n_;
  std::atomic<bool> known_{false};
  std::atomic<int64_t> bound_{0};
  mutable std::vector<std::atomic<uint8_t>> skipped_;  // per chunk
};

}  // namespace tally::executor
