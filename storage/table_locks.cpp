#include "storage/table_locks.hpp"

#include <chrono>

#include "common/cancel.hpp"
#include "common/error.hpp"

namespace tally::storage {

bool TableLocks::would_deadlock(uint32_t oid, const void* owner) const {
  // Follow holder -> the table it waits for -> that table's holder ...; each
  // owner waits for at most one table, so the chain is a path or a cycle.
  for (size_t steps = 0; steps <= waiting_.size(); ++steps) {
    const auto held = held_.find(oid);
    if (held == held_.end()) return false;
    if (held->second.owner == owner) return true;
    const auto next = waiting_.find(held->second.owner);
    if (next == waiting_.end()) return false;
    oid = next->second;
  }
  return false;
}

void TableLocks::acquire(uint32_t oid, const void* owner, const CancelToken* cancel) {
  // How often a waiter looks at its cancel token: well within the 100 ms a
  // cancel or statement_timeout has to take effect.
  constexpr auto cancel_poll = std::chrono::milliseconds(20);
  std::unique_lock lock(mutex_);
  for (;;) {
    Held& h = held_[oid];
    if (h.count == 0 || h.owner == owner) {
      h.owner = owner;
      ++h.count;
      waiting_.erase(owner);
      return;
    }
    if (would_deadlock(oid, owner)) {
      waiting_.erase(owner);
      throw std::move(Error(SqlState::object_not_in_prerequisite_state, "deadlock detected")
                          .with_detail("Waiting for the write lock of the table with OID " + std::to_string(oid) +
                                       ", held by a transaction that waits for this one."));
    }
    waiting_[owner] = oid;
    if (cancel) {
      released_.wait_for(lock, cancel_poll);
      if (cancel->requested()) {
        waiting_.erase(owner);
        cancel->check();
      }
    } else {
      released_.wait(lock);
    }
  }
}

void TableLocks::wait_free(uint32_t oid, const CancelToken* cancel) {
  const int marker = 0;  // an owner no one else is
  acquire(oid, &marker, cancel);
  release(oid, &marker);
}

void TableLocks::release(uint32_t oid, const void* owner) {
  std::lock_guard lock(mutex_);
  auto it = held_.find(oid);
  if (it == held_.end() || it->second.owner != owner || it->second.count == 0) return;
  if (--it->second.count == 0) {
    held_.erase(it);
    released_.notify_all();
  }
}

}  // namespace tally::storage
