#include "executor/parallel_row_encoder.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <utility>

#include "executor/cancel_point.hpp"
#include "executor/cpu/worker_pool.hpp"
#include "executor/types/thread_settings.hpp"

namespace tally::executor::row_encoding {

namespace {

// Rows per block: at most 16K (~0.4-1.1 MB of DataRows for 2-6 columns, so
// the buffers in flight stay small and the hand-offs few), and small enough
// that every thread gets about four blocks, but no fewer than 2K rows (a
// hand-off costs a lock and a wake-up).
constexpr size_t kMaxEncodeBlockRows = size_t{1} << 14;
constexpr size_t kMinEncodeBlockRows = size_t{1} << 11;
constexpr size_t kBlocksPerThread = 4;
// How long a helper waits for a free slot before it leaves the job: sending
// a 1 MB block to a client that keeps up takes well under a millisecond,
// and a scheduling hiccup on a busy host must not send the helper away
// (the session's thread would then encode the rest alone).
constexpr std::chrono::milliseconds kHelperWindowWait{50};

// One parallel encoding, shared by the session's thread and its helpers.
// Block b is encoded by whoever claims it first (claims go in row order); a
// helper's block waits in slots[b % slots.size()] until the session's thread
// sends it. A helper claims a block only while its slot is free, so at most
// slots.size() blocks are buffered.
struct EncodeJob {
  std::vector<ColumnCoder> columns;  // copied by each helper (scratch strings are per thread)
  size_t begin = 0, end = 0, block_rows = 0, blocks = 0;
  std::mutex mutex;
  std::condition_variable changed;
  size_t next_block = 0;  // first block nobody has claimed
  size_t sent = 0;        // blocks the session's thread has sent
  int encoding = 0;       // helpers inside encode_rows (they read the result's columns)
  bool stop = false;      // the session's thread has left: claim nothing more
  struct Slot {
    RawBuffer bytes;
    size_t block = SIZE_MAX;  // the block whose bytes are ready; SIZE_MAX = free
    std::exception_ptr error;
  };
  std::vector<Slot> slots;

  std::pair<size_t, size_t> rows_of(size_t b) const {
    const size_t first = begin + b * block_rows;
    return {first, std::min(end, first + block_rows)};
  }

  // A pool task: claims and encodes blocks until none is left or the job stops.
  void help() {
    std::vector<ColumnCoder> mine;
    {
      std::lock_guard lock(mutex);
      if (stop) return;
      mine = columns;
    }
    while (true) {
      size_t b;
      {
        std::unique_lock lock(mutex);
        // A full window means the client reads slower than we encode: after
        // a while the helper gives its pool thread back (the session's
        // thread encodes what is left) rather than hold it for as long as
        // a slow client takes, while other sessions' results wait for helpers.
        const bool room = changed.wait_for(lock, kHelperWindowWait, [&] {
          return stop || next_block >= blocks || next_block < sent + slots.size();
        });
        if (!room || stop || next_block >= blocks) return;
        b = next_block++;
        ++encoding;
      }
      Slot& slot = slots[b % slots.size()];  // free: block b - slots.size() was sent
      slot.bytes.clear();
      try {
        const auto [first, last] = rows_of(b);
        encode_rows(mine, first, last, slot.bytes, [] {});
      } catch (...) {
        slot.error = std::current_exception();
      }
      {
        std::lock_guard lock(mutex);
        slot.block = b;
        --encoding;
      }
      changed.notify_all();
    }
  }
};

}  // namespace

void encode_rows_parallel(std::vector<ColumnCoder>& columns, size_t begin, size_t end, tally::ResultWriter& writer) {
  cpu::WorkerPool& pool = cpu::WorkerPool::shared();
  const size_t rows = end - begin;
  const size_t threads = static_cast<size_t>(pool.workers()) + 1;
  auto job = std::make_shared<EncodeJob>();
  job->columns = columns;
  job->begin = begin;
  job->end = end;
  job->block_rows = std::clamp(rows / (threads * kBlocksPerThread), kMinEncodeBlockRows, kMaxEncodeBlockRows);
  job->blocks = (rows + job->block_rows - 1) / job->block_rows;
  const size_t helpers = std::min(threads - 1, job->blocks - 1);
  job->slots.resize(2 * helpers + 1);
  // Helpers print timestamptz values in the session's zone, and bytea
  // values in its bytea_output, as this thread does.
  types::ThreadSettings settings = types::current_thread_settings();
  for (size_t h = 0; h < helpers; ++h) {
    pool.submit([job, settings] {
      const types::ThreadSettingsScope settings_scope(settings);
      job->help();
    });
  }
  // Whatever ends the loop (a send failing included), no helper reads the
  // result's columns after this function returns; helpers not yet started
  // find the job stopped.
  struct Stop {
    EncodeJob& job;
    ~Stop() {
      std::unique_lock lock(job.mutex);
      job.stop = true;
      job.changed.notify_all();
      job.changed.wait(lock, [&] { return job.encoding == 0; });
    }
  } stop{*job};
  RawBuffer own;
  for (size_t b = 0; b < job->blocks; ++b) {
    check_cancel_point();  // the Stop above waits for the helpers
    EncodeJob::Slot& slot = job->slots[b % job->slots.size()];
    bool claimed = false;
    while (true) {
      std::unique_lock lock(job->mutex);
      if (job->next_block == b) {  // nobody has it: straight into the writer's buffer
        job->next_block = b + 1;
        claimed = true;
        break;
      }
      if (slot.block == b) break;
      // A helper is still on block b: encode a later block into its slot
      // rather than wait (on two cores the helper and this thread take turns).
      if (job->next_block < job->blocks && job->next_block < job->sent + job->slots.size()) {
        const size_t later = job->next_block++;
        lock.unlock();
        EncodeJob::Slot& other = job->slots[later % job->slots.size()];
        other.bytes.clear();
        const auto [first, last] = job->rows_of(later);
        encode_rows(columns, first, last, other.bytes, [] {});
        lock.lock();
        other.block = later;
        continue;
      }
      job->changed.wait(lock, [&] {
        return slot.block == b || (job->next_block < job->blocks && job->next_block < job->sent + job->slots.size());
      });
    }
    if (claimed) {
      // Into this thread's own buffer, sent from there like a helper's
      // block: growing the writer's std::string zero-fills what it grows
      // into, a megabyte per append batch.
      const auto [first, last] = job->rows_of(b);
      own.clear();
      encode_rows(columns, first, last, own, [&] {
        writer.data_rows_encoded(own.view());
        own.clear();
      });
      if (own.size() > 0) writer.data_rows_encoded(own.view());
    } else {
      if (slot.error) std::rethrow_exception(slot.error);
      writer.data_rows_encoded(slot.bytes.view());  // sent from the block's buffer, not copied
      slot.bytes.clear();
    }
    {
      std::lock_guard lock(job->mutex);
      if (!claimed) slot.block = SIZE_MAX;
      job->sent = b + 1;
    }
    job->changed.notify_all();
  }
}

}  // namespace tally::executor::row_encoding
