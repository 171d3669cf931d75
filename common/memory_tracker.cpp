#include "common/memory_tracker.hpp"

#include <string>

#include "common/error.hpp"

namespace tally {

namespace {
thread_local std::shared_ptr<MemoryTracker> current_tracker;
}  // namespace

void MemoryTracker::reserve(uint64_t bytes) {
  const uint64_t before = used_.fetch_add(bytes, std::memory_order_relaxed);
  const uint64_t after = before + bytes;
  if (budget_ > 0 && after > budget_) {
    used_.fetch_sub(bytes, std::memory_order_relaxed);
    // PostgreSQL's words for the message; the detail names the setting that
    // bounds it, since the cause here is the budget, not the machine.
    throw Error(SqlState::out_of_memory, "out of memory")
        .with_detail("Failed on request of size " + std::to_string(bytes) + " with " + std::to_string(before) +
                     " bytes in use (" + setting_ + " " + std::to_string(budget_) + " bytes).");
  }
  if (parent_) {
    try {
      parent_->reserve(bytes);
    } catch (...) {
      used_.fetch_sub(bytes, std::memory_order_relaxed);
      throw;
    }
  }
  uint64_t peak = peak_.load(std::memory_order_relaxed);
  while (after > peak && !peak_.compare_exchange_weak(peak, after, std::memory_order_relaxed)) {
  }
}

std::shared_ptr<MemoryTracker> current_memory_tracker() { return current_tracker; }

MemoryScope::MemoryScope(std::shared_ptr<MemoryTracker> tracker) : previous_(std::move(current_tracker)) {
  current_tracker = std::move(tracker);
}

MemoryScope::~MemoryScope() { current_tracker = std::move(previous_); }

}  // namespace tally
