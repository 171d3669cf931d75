#pragma once
// Text blocks made on several threads and read by one reader in order: a
// benchmark's generator formats rows on worker threads while the reader sends
// them into COPY FROM STDIN through libpq (or writes a file), so that loading
// 1e9 rows is not held up by one thread's formatting. At most two blocks per
// thread are made ahead of the reader, so memory stays bounded.
#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tally::bench {

class OrderedBlocks {
 public:
  // make(i, out) appends block i's text to `out` (empty on entry). Calls for
  // different blocks run concurrently, each block's once; block i's call
  // starts no later than block i + 1's, so a maker that must do part of its
  // work in block order (a sequential random stream) may wait for block i - 1.
  using Make = std::function<void(uint64_t, std::string&)>;

  OrderedBlocks(uint64_t blocks, unsigned threads, Make make)
      : blocks_(blocks), make_(std::move(make)), slots_(2 * std::max(1u, threads)) {
    for (unsigned t = 0; t < std::max(1u, threads); ++t) workers_.emplace_back([this] { work(); });
  }
  ~OrderedBlocks() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    for (auto& w : workers_) w.join();
  }
  OrderedBlocks(const OrderedBlocks&) = delete;
  OrderedBlocks& operator=(const OrderedBlocks&) = delete;

  // Swaps the next block's text into `out`; false once every block was read.
  bool next(std::string& out) {
    if (read_ == blocks_) return false;
    Slot& slot = slots_[read_ % slots_.size()];
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return slot.ready && slot.block == read_; });
    out.swap(slot.text);  // the reader's old buffer goes back to be filled again
    slot.text.clear();
    slot.ready = false;
    ++read_;
    lock.unlock();
    changed_.notify_all();
    return true;
  }

  uint64_t blocks_read() const { return read_; }

 private:
  struct Slot {
    uint64_t block = 0;
    bool ready = false;
    std::string text;
  };

  void work() {
    std::string text;
    for (;;) {
      uint64_t i = 0;
      {
        std::unique_lock lock(mutex_);
        // Block i fills slot i % slots, free once block i - slots was read.
        changed_.wait(lock, [&] { return stop_ || next_ == blocks_ || next_ < read_ + slots_.size(); });
        if (stop_ || next_ == blocks_) return;
        i = next_++;
      }
      text.clear();
      make_(i, text);
      {
        std::lock_guard lock(mutex_);
        Slot& slot = slots_[i % slots_.size()];
        slot.text.swap(text);
        slot.block = i;
        slot.ready = true;
      }
      changed_.notify_all();
    }
  }

  const uint64_t blocks_;
  const Make make_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Slot> slots_;
  uint64_t next_ = 0;  // the next block a worker takes
  uint64_t read_ = 0;  // blocks the reader took
  bool stop_ = false;
  std::vector<std::thread> workers_;  // last: they start once the rest is made
};

}  // namespace tally::bench
