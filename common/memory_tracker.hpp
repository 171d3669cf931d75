#pragma once
// Per-statement memory accounting against the CPU memory budget
// (Config::cpu_memory_budget), PostgreSQL's "out of memory" (53200) when a
// statement would hold more. The big consumers (hash tables and partial
// states, DISTINCT sets, materialized sorts and results, join build sides)
// hold a MemoryReservation and resize it when their storage grows, in
// blocks (a table's doubling, a few thousand values), never per row; what
// they reserve is charged to the tracker the statement installed for their
// thread (MemoryScope), so code deep in an operator needs no context passed
// down to it. The CPU engine's fork-join helpers install the caller's
// tracker in their tasks. Without a tracker installed, reservations count
// nothing.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>

namespace tally {

class MemoryTracker {
 public:
  // budget: bytes the statement may hold; 0 = no limit (still counted).
  // parent: the server's tracker, which every statement's bytes count
  // against as well (server_memory_budget), so that statements running
  // together cannot hold more than the host has. setting: the setting that
  // sets `budget`, named by the 53200's detail.
  explicit MemoryTracker(uint64_t budget, std::shared_ptr<MemoryTracker> parent = nullptr,
                         const char* setting = "cpu_memory_budget")
      : budget_(budget), parent_(std::move(parent)), setting_(setting) {}
  MemoryTracker(const MemoryTracker&) = delete;
  MemoryTracker& operator=(const MemoryTracker&) = delete;

  // Adds bytes to what the statement (and its parent) holds; throws Error
  // 53200 (and adds nothing) when that would exceed either budget.
  // Thread-safe.
  void reserve(uint64_t bytes);
  void release(uint64_t bytes) noexcept {
    used_.fetch_sub(bytes, std::memory_order_relaxed);
    if (parent_) parent_->release(bytes);
  }

  uint64_t budget() const { return budget_; }
  uint64_t used() const { return used_.load(std::memory_order_relaxed); }
  uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }

 private:
  const uint64_t budget_;
  const std::shared_ptr<MemoryTracker> parent_;
  const char* setting_;
  std::atomic<uint64_t> used_{0};
  std::atomic<uint64_t> peak_{0};
};

// The tracker this thread's statement runs under (null: none).
std::shared_ptr<MemoryTracker> current_memory_tracker();

// Installs a tracker for this thread while it lives; nests (the previous one
// comes back at its end).
class MemoryScope {
 public:
  explicit MemoryScope(std::shared_ptr<MemoryTracker> tracker);
  ~MemoryScope();
  MemoryScope(const MemoryScope&) = delete;
  MemoryScope& operator=(const MemoryScope&) = delete;

 private:
  std::shared_ptr<MemoryTracker> previous_;
};

// Bytes held against a tracker (the thread's current one when made) for as
// long as it lives. Copying makes a reservation of the same size (the copy's
// storage is as large); moving hands the bytes over.
class MemoryReservation {
 public:
  MemoryReservation() : tracker_(current_memory_tracker()) {}
  explicit MemoryReservation(std::shared_ptr<MemoryTracker> tracker) : tracker_(std::move(tracker)) {}
  ~MemoryReservation() { resize(0); }
  MemoryReservation(const MemoryReservation& other) : tracker_(other.tracker_) { resize(other.bytes_); }
  MemoryReservation& operator=(const MemoryReservation& other) {
    if (this != &other) {
      resize(0);
      tracker_ = other.tracker_;
      resize(other.bytes_);
    }
    return *this;
  }
  MemoryReservation(MemoryReservation&& other) noexcept
      : tracker_(std::move(other.tracker_)), bytes_(other.bytes_) {
    other.bytes_ = 0;
  }
  MemoryReservation& operator=(MemoryReservation&& other) noexcept {
    if (this != &other) {
      resize(0);
      tracker_ = std::move(other.tracker_);
      bytes_ = other.bytes_;
      other.bytes_ = 0;
    }
    return *this;
  }

  // Holds `bytes` in all; throws 53200 (holding what it held) when growing
  // past the budget. Shrinking never throws.
  void resize(uint64_t bytes) {
    if (!tracker_) {
      bytes_ = bytes;
      return;
    }
    if (bytes > bytes_) tracker_->reserve(bytes - bytes_);
    else tracker_->release(bytes_ - bytes);
    bytes_ = bytes;
  }
  void grow(uint64_t bytes) { resize(bytes_ + bytes); }
  uint64_t bytes() const { return bytes_; }

 private:
  std::shared_ptr<MemoryTracker> tracker_;
  uint64_t bytes_ = 0;
};

// Items (values, groups) held against the statement's budget in blocks of
// `block` items of `bytes_per_item` each, so that an item costs an increment.
class BlockReservation {
 public:
  explicit BlockReservation(uint64_t bytes_per_item = 0, uint64_t block = 4096)
      : bytes_per_item_(bytes_per_item), block_(block) {}
  // Counts `items` more; throws 53200 when their blocks are past the budget.
  void add(uint64_t items = 1) {
    count_ += items;
    if (count_ <= reserved_) return;
    // Below a block the reservation doubles from what is held, so that the
    // many small holders (a scalar subquery's one row, a group's few kept
    // values) do not each take a whole block; past it, a block at a time.
    const uint64_t wanted = count_ < block_ ? std::min(block_, std::bit_ceil(std::max<uint64_t>(count_, 16)))
                                            : (count_ + block_ - 1) / block_ * block_;
    memory_.resize(wanted * bytes_per_item_);
    reserved_ = wanted;
  }

 private:
  uint64_t bytes_per_item_;
  uint64_t block_;
  uint64_t count_ = 0, reserved_ = 0;
  MemoryReservation memory_;
};

}  // namespace tally
