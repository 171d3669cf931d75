#include "storage/group_commit.hpp"

#include "storage/table_appender.hpp"
#include "storage/table_store.hpp"

namespace tally::storage {

void GroupCommitQueue::append(TableStore& store, uint32_t oid, const std::function<void(TableAppender&)>& fill) {
  Request request;
  request.fill = &fill;
  std::unique_lock lock(mutex_);
  pending_.push_back(&request);
  while (!request.done) {
    if (leader_active_) {
      finished_.wait(lock);
      continue;
    }
    // Lead: take every queued request (this one included) and commit them.
    leader_active_ = true;
    std::vector<Request*> group;
    group.swap(pending_);
    if (group.size() > 1) ++grouped_commits_;
    lock.unlock();
    run_group(store, oid, std::move(group));
    lock.lock();
    leader_active_ = false;
    finished_.notify_all();
  }
  lock.unlock();
  if (request.error) std::rethrow_exception(request.error);
}

uint64_t GroupCommitQueue::grouped_commits() const {
  std::lock_guard lock(mutex_);
  return grouped_commits_;
}

// Runs under leadership, without the queue's mutex; `done` is published to
// the waiters when the leader re-takes the mutex and notifies.
void GroupCommitQueue::run_group(TableStore& store, uint32_t oid, std::vector<Request*> group) {
  while (!group.empty()) {
    size_t failed = group.size();
    std::exception_ptr fill_error;
    try {
      auto appender = store.begin_append(oid);
      for (size_t i = 0; i < group.size(); ++i) {
        try {
          (*group[i]->fill)(*appender);
        } catch (...) {
          failed = i;
          fill_error = std::current_exception();
          break;
        }
      }
      if (failed == group.size()) {
        appender->commit();
        for (Request* r : group) r->done = true;
        return;
      }
      // The appender is destroyed uncommitted here: its files are removed.
    } catch (...) {
      // begin_append or commit failed: nothing of this group is committed.
      const auto error = std::current_exception();
      for (Request* r : group) {
        r->error = error;
        r->done = true;
      }
      return;
    }
    group[failed]->error = fill_error;
    group[failed]->done = true;
    group.erase(group.begin() + static_cast<std::ptrdiff_t>(failed));
  }
}

}  // namespace tally::storage
