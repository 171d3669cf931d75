#include "executor/chunk_read_ahead.hpp"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>

#include "common/error.hpp"
#include "executor/cpu/worker_pool.hpp"

namespace tally::executor {

struct ChunkReadAhead::Slot {
  enum class State { queued, running, done, abandoned };
  std::mutex mutex;
  std::condition_variable finished;
  State state = State::queued;
  Read read;
  Batch batch;
  std::exception_ptr error;
};

ChunkReadAhead::ChunkReadAhead(size_t depth) : depth_(depth) {}

ChunkReadAhead::~ChunkReadAhead() {
  for (const auto& slot : slots_) {
    std::unique_lock lock(slot->mutex);
    if (slot->state == Slot::State::queued) slot->state = Slot::State::abandoned;
    slot->finished.wait(lock, [&] { return slot->state != Slot::State::running; });
  }
}

size_t ChunkReadAhead::default_depth() {
  return static_cast<size_t>(std::min(8, cpu::WorkerPool::shared().workers()));
}

void ChunkReadAhead::run(Slot& slot) {
  Read read;
  {
    std::lock_guard lock(slot.mutex);
    if (slot.state != Slot::State::queued) return;
    slot.state = Slot::State::running;
    read = std::move(slot.read);
  }
  Batch batch;
  std::exception_ptr error;
  try {
    batch = read();
  } catch (...) {
    error = std::current_exception();
  }
  read = nullptr;  // its captures go with the caller's scan, not with this worker
  std::lock_guard lock(slot.mutex);
  slot.batch = std::move(batch);
  slot.error = error;
  slot.state = Slot::State::done;
  slot.finished.notify_all();
}

void ChunkReadAhead::push(Read read) {
  auto slot = std::make_shared<Slot>();
  slot->read = std::move(read);
  slots_.push_back(slot);
  if (depth_ > 0) cpu::WorkerPool::shared().submit([slot] { run(*slot); });
}

ChunkReadAhead::Batch ChunkReadAhead::take() {
  if (slots_.empty()) throw Error(SqlState::internal_error, "chunk read-ahead: nothing queued");
  const std::shared_ptr<Slot> slot = std::move(slots_.front());
  slots_.pop_front();
  run(*slot);  // here, unless a worker started it
  std::unique_lock lock(slot->mutex);
  slot->finished.wait(lock, [&] { return slot->state == Slot::State::done; });
  if (slot->error) std::rethrow_exception(slot->error);
  return std::move(slot->batch);
}

}  // namespace tally::executor
