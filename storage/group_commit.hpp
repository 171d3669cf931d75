#pragma once
// Group commit of small appends to one table. Each append costs a handful of
// fsyncs (chunk files, dictionary, directory, the SQLite WAL) whatever its
// size, so single-row INSERTs from concurrent sessions are joined: the first
// waiter becomes the leader, runs every queued request's rows through one
// TableAppender and commits once; requests queued meanwhile form the next
// group. A statement still returns only after the commit that holds its rows
// (durable when the statement returns), and a request whose rows fail is
// taken out of its group, which is then retried without it (nothing of it is
// committed, nothing of the others is lost).
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <vector>

namespace tally::storage {

class TableAppender;
class TableStore;

// Per-table queue of appends waiting to be committed together.
class GroupCommitQueue {
 public:
  // Appends the rows that fill adds (set values, finish_row) in a group commit
  // with concurrent callers; returns after the group's commit, or rethrows
  // what fill or the commit threw.
  void append(TableStore& store, uint32_t oid, const std::function<void(TableAppender&)>& fill);

  // Commits that held more than one request so far (for tests and benchmarks).
  uint64_t grouped_commits() const;

 private:
  struct Request {
    const std::function<void(TableAppender&)>* fill = nullptr;
    std::exception_ptr error;
    bool done = false;
  };
  static void run_group(TableStore& store, uint32_t oid, std::vector<Request*> group);

  mutable std::mutex mutex_;
  std::condition_variable finished_;
  std::vector<Request*> pending_;
  bool leader_active_ = false;
  uint64_t grouped_commits_ = 0;
};

}  // namespace tally::storage
