#pragma once
// The db-benchmark groupby table as CSV text made on several threads, byte for
// byte what GroupbyGenerator::next_block writes: the rows are drawn in order
// (one random stream, one NULL sampling pass) under a lock, a block at a time,
// and formatted in parallel, which is most of the work. Loading 1e9 rows
// straight into COPY FROM STDIN needs this: one thread formats about 7M rows/s.
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bench/common/ordered_blocks.hpp"
#include "bench/h2o/groupby_data.hpp"

namespace tally::bench::h2o {

class GroupbyCsvStream {
 public:
  static constexpr uint64_t kBlockRows = 1 << 15;  // about 1.5 MB of text

  GroupbyCsvStream(const GroupbyParams& p, unsigned threads)
      : gen_(p),
        rows_(p.rows),
        blocks_(std::make_unique<OrderedBlocks>((p.rows + kBlockRows - 1) / kBlockRows, threads,
                                                [this](uint64_t i, std::string& out) { make(i, out); })) {}

  // Swaps the next block (the header first) into `out`; false once every row was read.
  bool next(std::string& out) { return blocks_->next(out); }
  uint64_t rows() const { return rows_; }
  // Rows handed to the reader so far.
  uint64_t rows_read() const { return std::min(rows_, blocks_->blocks_read() * kBlockRows); }

 private:
  void make(uint64_t block, std::string& out) {
    std::vector<GroupbyGenerator::Row> rows;
    {
      std::unique_lock lock(mutex_);
      turn_.wait(lock, [&] { return drawn_ == block; });
      gen_.draw_rows(rows, kBlockRows);
      ++drawn_;
    }
    turn_.notify_all();
    if (block == 0) out += GroupbyGenerator::kHeader;
    GroupbyGenerator::append_csv(rows, out);
  }

  GroupbyGenerator gen_;
  const uint64_t rows_;
  std::mutex mutex_;
  std::condition_variable turn_;
  uint64_t drawn_ = 0;  // blocks drawn so far
  std::unique_ptr<OrderedBlocks> blocks_;  // last: its workers use the rest
};

}  // namespace tally::bench::h2o
