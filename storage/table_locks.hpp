#pragma once
// Per-table write locks. An append, DROP or TRUNCATE holds its table's lock
// for the statement; a transaction block holds the lock of every table it
// wrote until COMMIT or ROLLBACK, so its uncommitted chunks and dictionary
// entries cannot be interleaved with another writer's (the second writer
// waits). Waiting in a cycle (block A holds t1 and wants t2 while block B
// holds t2 and wants t1) fails the waiter that closes it, as PostgreSQL's
// deadlock detector does, instead of hanging both.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace tally {
class CancelToken;
}

namespace tally::storage {

class TableLocks {
 public:
  // Blocks until the table is free or already held by `owner` (re-entrant:
  // a held lock is counted). Throws Error(55000) when waiting would deadlock
  // (PostgreSQL says 40P01, which common/sqlstate.hpp does not list yet), and
  // what cancel->check() throws when the statement is cancelled while waiting.
  void acquire(uint32_t oid, const void* owner, const CancelToken* cancel = nullptr);
  // Returns once no one holds the table (or throws as acquire does), holding nothing.
  void wait_free(uint32_t oid, const CancelToken* cancel);
  // Releases one acquire of `owner`.
  void release(uint32_t oid, const void* owner);

 private:
  // Whether `owner` waiting for `oid` closes a cycle of waiters.
  bool would_deadlock(uint32_t oid, const void* owner) const;

  struct Held {
    const void* owner = nullptr;
    uint32_t count = 0;
  };
  std::mutex mutex_;
  std::condition_variable released_;
  std::unordered_map<uint32_t, Held> held_;
  std::unordered_map<const void*, uint32_t> waiting_;  // owner -> table it waits for
};

// Holds one table lock for a scope (no lock when locks is null).
class TableLockGuard {
 public:
  TableLockGuard(TableLocks* locks, uint32_t oid, const CancelToken* cancel = nullptr) : locks_(locks), oid_(oid) {
    if (locks_) locks_->acquire(oid_, this, cancel);
  }
  ~TableLockGuard() {
    if (locks_) locks_->release(oid_, this);
  }
  TableLockGuard(const TableLockGuard&) = delete;
  TableLockGuard& operator=(const TableLockGuard&) = delete;

 private:
  TableLocks* locks_;
  uint32_t oid_;
};

}  // namespace tally::storage
