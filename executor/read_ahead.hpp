#pragma once
// Runs a scan's per-chunk work (reading and decoding stored chunks, and for
// the operator tree's scans converting and filtering them) ahead of the
// consumer, on the shared worker pool: a table's first scan is otherwise
// bound by one thread decoding chunk files while the engine waits. Work is
// queued in chunk order and taken in that order. Work no worker has started
// when the consumer takes it runs on the consumer's thread, so a busy pool
// only makes the scan do its own work (cpu/worker_pool.hpp's rule).
// A scan that may be stopped early (LIMIT) widens its window with the chunks
// taken (1, 2, 4, ... up to the depth), so that it has done little work
// beyond its need. Any other starts with the whole depth: a doubling window
// keeps most cores idle for the first four pieces' durations, which is most
// of a scan of a few large chunks with costly per-row work (a LIKE over
// every row of a million-row chunk).
#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "common/engine_counters.hpp"
#include "common/error.hpp"
#include "common/memory_tracker.hpp"
#include "executor/cancel_point.hpp"
#include "executor/cpu/worker_pool.hpp"
#include "executor/types/thread_settings.hpp"

namespace tally::executor {

template <typename T>
class ReadAhead {
 public:
  using Work = std::function<T()>;
  // A piece's work. in_place: so little (a chunk whose columns are all held
  // by the engine: nothing to read) that handing it to a worker would cost
  // more than the work, tens of microseconds a chunk on the consumer's
  // path to its engine: it runs in take().
  struct Piece {
    template <class F>
    Piece(F f, bool in_place = false) : work(std::move(f)), in_place(in_place) {}  // NOLINT: any callable
    Work work;
    bool in_place = false;
  };

  // Pieces 0 .. count-1, taken in that order. work_for(i) runs on the
  // consumer's thread, in order, when piece i is queued, and says what to
  // do for it; at most `depth` pieces are queued beyond the one taken
  // (0: each runs in take()), which bounds the decoded chunks held beyond
  // the consumer's own. may_stop: the consumer may stop taking before the
  // last piece (the window widens gradually).
  ReadAhead(size_t depth, size_t count, std::function<Piece(size_t)> work_for, bool may_stop)
      : depth_(depth), count_(count), work_for_(std::move(work_for)), may_stop_(may_stop) {}
  // Waits for work a worker is running (it uses the caller's snapshot and
  // plan); queued work never starts.
  ~ReadAhead() {
    for (const auto& slot : slots_) {
      std::unique_lock lock(slot->mutex);
      if (slot->state == State::queued) slot->state = State::abandoned;
      slot->finished.wait(lock, [&] { return slot->state != State::running; });
    }
  }
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // The depth for a scan on this host: the pool's workers, at most 16. A
  // piece carries the consumer's prepared work too (ChunkSink::prepare),
  // so the depth is the scan's parallelism; 16 pieces of a million rows
  // bound what is held ahead.
  static size_t default_depth() { return static_cast<size_t>(std::min(16, cpu::WorkerPool::shared().workers())); }

  // The next piece's result (its error rethrown here).
  T take() {
    // Where the consumer may stop, the window doubles with the pieces taken, to the depth.
    const size_t window = !may_stop_ || taken_ >= 16 ? depth_ : std::min(depth_, size_t{1} << taken_);
    for (; queued_ < count_ && queued_ <= taken_ + window; ++queued_) push(work_for_(queued_));
    if (slots_.empty()) throw Error(SqlState::internal_error, "read-ahead: nothing left to take");
    const std::shared_ptr<Slot> slot = std::move(slots_.front());
    slots_.pop_front();
    ++taken_;
    run(*slot);  // here, unless a worker started it
    // While a worker finishes this piece, this thread runs later queued
    // ones, the newest first (the workers take them from the oldest): with
    // few workers it would otherwise wait idle, one core of two unused.
    auto done = [&slot] {
      std::lock_guard lock(slot->mutex);
      return slot->state == State::done;
    };
    for (auto later = slots_.rbegin(); later != slots_.rend() && !done(); ++later) run(**later);
    std::unique_lock lock(slot->mutex);
    slot->finished.wait(lock, [&] { return slot->state == State::done; });
    if (slot->error) std::rethrow_exception(slot->error);
    return std::move(*slot->result);
  }

 private:
  enum class State { queued, running, done, abandoned };
  struct Slot {
    std::mutex mutex;
    std::condition_variable finished;
    State state = State::queued;
    Work work;
    std::optional<T> result;
    std::exception_ptr error;
  };

  void push(Piece piece) {
    auto slot = std::make_shared<Slot>();
    slot->work = std::move(piece.work);
    slots_.push_back(slot);
    if (depth_ == 0 || piece.in_place) return;
    // The worker runs under the statement's cancel token, memory tracker,
    // settings (time zone, bytea_output, date order) and trace (its chunk
    // reads count in the statement's log line), as the consumer would (a
    // sink's prepare() may reserve; a filter may cast a timestamptz or a
    // bytea to text, or a text to a date).
    cpu::WorkerPool::shared().submit(
        [slot, token = current_cancel_token(), tracker = current_memory_tracker(),
         settings = types::current_thread_settings(), trace = current_statement_trace()] {
          const CancelScope scope(token);
          const MemoryScope memory_scope(tracker);
          const types::ThreadSettingsScope settings_scope(settings);
          const StatementTraceScope trace_scope(trace);
          run(*slot);
        });
  }

  static void run(Slot& slot) {
    Work work;
    {
      std::lock_guard lock(slot.mutex);
      if (slot.state != State::queued) return;
      slot.state = State::running;
      work = std::move(slot.work);
    }
    std::optional<T> result;
    std::exception_ptr error;
    try {
      result.emplace(work());
    } catch (...) {
      error = std::current_exception();
    }
    work = nullptr;  // its captures belong to the consumer's scan: gone before it may end
    std::lock_guard lock(slot.mutex);
    slot.result = std::move(result);
    slot.error = error;
    slot.state = State::done;
    slot.finished.notify_all();
  }

  size_t depth_;
  size_t count_;
  std::function<Piece(size_t)> work_for_;
  bool may_stop_;
  size_t queued_ = 0;  // pieces [0, queued_) are queued or taken
  size_t taken_ = 0;
  std::deque<std::shared_ptr<Slot>> slots_;
};

}  // namespace tally::executor
