// ChunkPipeline (chunk_pipeline.hpp): cache look-ups, pinned double-buffered
// host-to-device copies on a copy stream, and CUDA-event timing of each
// chunk's aggregation on the compute stream.
#include "gpu/pipeline/chunk_pipeline.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <optional>
#include <utility>

#include "common/engine_counters.hpp"
#include "gpu/pipeline/column_regions.hpp"
#include "gpu/pipeline/host_copies.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/event_wait.cuh"
#include "gpu/host_steps.hpp"

namespace tally::gpu {

namespace {
// Device arrays start on 256-byte boundaries (coalesced, vector loads).
constexpr uint64_t kAlignment = 256;
uint64_t padded(uint64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }
// Whether the copy that `ready` marks may still be running (errors other
// than not-ready are reported).
bool copy_pending(cudaEvent_t ready) {
  const cudaError_t q = cudaEventQuery(ready);
  if (q == cudaErrorNotReady) return true;
  TALLY_CUDA_CHECK(q);
  return false;
}

uint64_t column_bytes(int64_t rows, const HostColumn& c) {
  const auto n = static_cast<uint64_t>(rows);
  return padded(n * c.width_bytes) + (c.validity ? padded(n) : 0);
}
}  // namespace

DeviceColumn::~DeviceColumn() {
  // The copy that filled the column may still be in flight (a chunk staged
  // and abandoned): free only after it. Destructor: errors cannot be thrown.
  if (ready) {
    (void)cudaEventSynchronize(ready);
    (void)cudaEventDestroy(ready);
  }
  if (data && !backing) (void)cudaFreeAsync(data, nullptr);
}

struct ChunkPipeline::Impl {
  struct Slot {
    void* pinned = nullptr;
    uint64_t pinned_bytes = 0;
    DeviceBuffer transient;
    cudaEvent_t copied = nullptr;
    cudaEvent_t consumed = nullptr;  // the last run that read `transient` has finished
    bool busy = false;  // a staged, not yet run chunk reads `transient`
  };
  struct InFlight {
    uint64_t ticket = 0;
    cudaEvent_t start = nullptr, stop = nullptr;
    std::vector<std::shared_ptr<const DeviceColumn>> leases;  // kept until the kernels are done
  };
  int device = 0;
  ColumnCache* cache = nullptr;
  cudaStream_t compute = nullptr, copy = nullptr;
  Slot slots[2];
  int next = 0;
  std::deque<InFlight> in_flight;
  // Timings of runs that run() found finished while making room: handed out
  // by the next completed(), so that no chunk's time is lost to the tuner.
  std::vector<ChunkTiming> finished;
  std::vector<cudaEvent_t> spare_events;  // timing events for reuse
  cudaEvent_t span_start = nullptr;       // before the first run() of a query (PipelineStats::span_ms)
  uint64_t next_ticket = 1;

  cudaEvent_t take_event() {
    if (!spare_events.empty()) {
      cudaEvent_t e = spare_events.back();
      spare_events.pop_back();
      return e;
    }
    cudaEvent_t e = nullptr;
    TALLY_CUDA_CHECK(cudaEventCreate(&e));
    return e;
  }
  void give_back(const InFlight& f) {
    spare_events.push_back(f.start);
    spare_events.push_back(f.stop);
  }

  ~Impl() {
    if (copy) (void)cudaStreamSynchronize(copy);
    if (compute) (void)cudaStreamSynchronize(compute);
    for (InFlight& f : in_flight) give_back(f);
    in_flight.clear();
    for (Slot& s : slots) {
      s.transient.release();
      if (s.pinned) (void)cudaFreeHost(s.pinned);
      if (s.copied) (void)cudaEventDestroy(s.copied);
      if (s.consumed) (void)cudaEventDestroy(s.consumed);
    }
    for (cudaEvent_t e : spare_events) (void)cudaEventDestroy(e);
    if (span_start) (void)cudaEventDestroy(span_start);
    if (copy) (void)cudaStreamDestroy(copy);
    if (compute) (void)cudaStreamDestroy(compute);
  }
};

ChunkPipeline::ChunkPipeline(int device, ColumnCache* cache) : device_(device), impl_(std::make_unique<Impl>()) {
  impl_->device = device;
  impl_->cache = cache;
  TALLY_CUDA_CHECK(cudaSetDevice(device));
  configure_memory_pool(device);
  TALLY_CUDA_CHECK(cudaStreamCreateWithFlags(&impl_->compute, cudaStreamNonBlocking));
  TALLY_CUDA_CHECK(cudaStreamCreateWithFlags(&impl_->copy, cudaStreamNonBlocking));
  for (auto& s : impl_->slots) {
    TALLY_CUDA_CHECK(cudaEventCreateWithFlags(&s.copied, cudaEventDisableTiming));
    TALLY_CUDA_CHECK(cudaEventCreateWithFlags(&s.consumed, cudaEventDisableTiming));
  }
  TALLY_CUDA_CHECK(cudaEventCreate(&impl_->span_start));
}

ChunkPipeline::~ChunkPipeline() = default;

StreamHandle ChunkPipeline::compute_stream() const { return reinterpret_cast<StreamHandle>(impl_->compute); }

StagedChunk ChunkPipeline::stage(int64_t rows, const std::vector<HostColumn>& columns) {
  TALLY_CUDA_CHECK(cudaSetDevice(device_));
  Impl& im = *impl_;
  StagedChunk out;
  out.rows = rows;
  out.columns.resize(columns.size());
  out.widths.resize(columns.size());
  for (size_t i = 0; i < columns.size(); ++i) out.widths[i] = columns[i].width_bytes;
  std::vector<size_t> missing;
  for (size_t i = 0; i < columns.size(); ++i) {
    const HostColumn& c = columns[i];
    std::shared_ptr<const DeviceColumn> hit = c.resident;
    if (!hit && !c.data && !c.validity) continue;  // absent column (count(*) has none)
    if (!hit && c.cacheable && im.cache) hit = im.cache->find(c.key);
    if (hit) {
      // A held column brings its NULLs with it (the host never saw them).
      out.columns[i] = ColumnPointer{hit->data, c.validity || c.resident ? hit->validity : nullptr};
      // Only a copy still in flight needs a cross-stream wait: a resident
      // column's copy finished long ago, and each cudaStreamWaitEvent
      // between two chunks' kernels is a point where the compute stream
      // cannot run them back to back.
      if (hit->ready && !hit->ready_seen.load(std::memory_order_acquire)) {
        if (copy_pending(hit->ready)) out.waits.push_back(hit->ready);
        else hit->ready_seen.store(true, std::memory_order_release);
      }
      out.leases.push_back(std::move(hit));
      ++out.hits;
      continue;
    }
    if (c.cacheable && im.cache) ++out.misses;
    missing.push_back(i);
  }
  stats_.hits += static_cast<uint64_t>(out.hits);
  stats_.misses += static_cast<uint64_t>(out.misses);
  if (missing.empty()) return out;

  // A slot whose transient buffer no staged chunk reads.
  int s = im.next;
  if (im.slots[s].busy) s ^= 1;
  if (im.slots[s].busy) throw Error(SqlState::internal_error, "GPU: chunk pipeline: more than two chunks staged");
  im.next = s ^ 1;
  Impl::Slot& slot = im.slots[s];
  // The pinned buffer is free once its previous copy finished; the device
  // buffer once the last run that read it finished (copy-stream order, so
  // the host does not wait).
  const auto t_wait = std::chrono::steady_clock::now();
  TALLY_CUDA_CHECK(cudaEventSynchronize(slot.copied));
  TALLY_CUDA_CHECK(cudaStreamWaitEvent(im.copy, slot.consumed, 0));
  const auto t_setup = std::chrono::steady_clock::now();
  stats_.slot_wait_us += std::chrono::duration<double, std::micro>(t_setup - t_wait).count();
  double copy_us = 0;
  uint64_t total = 0, transient = 0;
  std::vector<uint8_t> keep(columns.size(), 0);
  for (size_t i : missing) {
    const uint64_t b = column_bytes(rows, columns[i]);
    total += b;
    keep[i] = columns[i].cacheable && im.cache && im.cache->admits(b);
    if (!keep[i]) transient += b;
  }
  if (slot.pinned_bytes < total) {
    if (slot.pinned) TALLY_CUDA_CHECK(cudaFreeHost(slot.pinned));
    slot.pinned = nullptr;
    slot.pinned_bytes = 0;
    TALLY_CUDA_CHECK(cudaHostAlloc(&slot.pinned, total, cudaHostAllocDefault));
    slot.pinned_bytes = total;
  }
  if (transient > 0) slot.transient.ensure(transient, im.copy);
  char* host = static_cast<char*>(slot.pinned);
  char* scratch = slot.transient.get<char>();
  const auto n = static_cast<uint64_t>(rows);
  for (size_t i : missing) {
    const HostColumn& c = columns[i];
    const uint64_t value_bytes = n * c.width_bytes;
    const uint64_t values_end = padded(value_bytes);  // where a validity array follows the values
    const uint64_t b = column_bytes(rows, c);
    const HostRange ranges[] = {{host, c.data, c.data ? value_bytes : 0},
                                {host + values_end, c.validity, c.validity ? n : 0}};
    const auto t_copy = std::chrono::steady_clock::now();
    copy_host_ranges(ranges);
    copy_us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t_copy).count();
    char* dst = nullptr;
    uint8_t* dst_validity = nullptr;  // where placed apart from the values
    std::shared_ptr<DeviceColumn> entry;
    if (keep[i]) {
      // Next to the previous chunk's copy of this column (and its validity
      // next to the previous chunk's validity), so that resident chunks can
      // be aggregated in one launch.
      std::optional<PlacedColumn> values = place_column(device_, c.key, ColumnPart::values, c.validity ? values_end : b);
      std::optional<PlacedColumn> flags;
      if (values && c.validity) flags = place_column(device_, c.key, ColumnPart::validity, b - values_end);
      if (values && (!c.validity || flags)) {
        entry = std::make_shared<DeviceColumn>();
        entry->data = values->data;
        entry->backing = std::move(values->backing);
        if (flags) {
          dst_validity = static_cast<uint8_t*>(flags->data);
          entry->backing = both_backings(std::move(entry->backing), std::move(flags->backing));
        }
        entry->bytes = b;
        entry->device = device_;
        dst = static_cast<char*>(values->data);
      }
    }
    if (keep[i] && !entry) {
      void* mem = nullptr;
      const cudaError_t e = cudaMallocAsync(&mem, b, im.copy);
      if (e == cudaSuccess) {
        entry = std::make_shared<DeviceColumn>();
        entry->data = mem;
        entry->bytes = b;
        entry->device = device_;
        dst = static_cast<char*>(mem);
      } else if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();  // device memory is short: stream this column instead
        keep[i] = 0;
        slot.transient.ensure(0, im.copy);
      } else {
        TALLY_CUDA_CHECK(e);
      }
    }
    if (!dst) {
      // Transient: the slot's scratch buffer (grown if a cacheable column fell back).
      if (!scratch || scratch + b > slot.transient.get<char>() + slot.transient.bytes()) {
        throw Error(SqlState::out_of_memory, "GPU: no device memory for a chunk column of " + std::to_string(b) + " bytes");
      }
      dst = scratch;
      scratch += b;
      slot.busy = true;
      out.slot = s;
    }
    if (dst_validity) {
      TALLY_CUDA_CHECK(cudaMemcpyAsync(dst, host, values_end, cudaMemcpyHostToDevice, im.copy));
      TALLY_CUDA_CHECK(cudaMemcpyAsync(dst_validity, host + values_end, b - values_end, cudaMemcpyHostToDevice, im.copy));
    } else {
      TALLY_CUDA_CHECK(cudaMemcpyAsync(dst, host, b, cudaMemcpyHostToDevice, im.copy));
      if (c.validity) dst_validity = reinterpret_cast<uint8_t*>(dst + values_end);
    }
    count(engine_counters().gpu_bytes_transferred, b);
    out.copied_bytes += b;
    out.columns[i] = ColumnPointer{dst, dst_validity};
    if (entry) {
      entry->validity = dst_validity;
      TALLY_CUDA_CHECK(cudaEventCreateWithFlags(&entry->ready, cudaEventDisableTiming));
      TALLY_CUDA_CHECK(cudaEventRecord(entry->ready, im.copy));
      im.cache->insert(c.key, entry);
      out.leases.push_back(std::move(entry));
    }
    host += b;
  }
  TALLY_CUDA_CHECK(cudaEventRecord(slot.copied, im.copy));
  out.waits.push_back(slot.copied);
  stats_.copied_bytes += out.copied_bytes;
  stats_.host_copy_us += copy_us;
  stats_.copy_setup_us +=
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t_setup).count() - copy_us;
  return out;
}

uint64_t ChunkPipeline::run(StagedChunk& chunk, const std::function<void()>& body) {
  TALLY_CUDA_CHECK(cudaSetDevice(device_));
  Impl& im = *impl_;
  {
    HostStepTimer timer(HostStep::in_flight_wait);
    while (im.in_flight.size() >= kMaxInFlight) {
      wait_event(im.in_flight.front().stop);
      std::vector<ChunkTiming> done = completed(false);
      im.finished.insert(im.finished.end(), done.begin(), done.end());
    }
  }
  host_mark("in-flight checked");
  {
    HostStepTimer timer(HostStep::stream_waits);
    for (EventHandle e : chunk.waits) TALLY_CUDA_CHECK(cudaStreamWaitEvent(im.compute, reinterpret_cast<cudaEvent_t>(e), 0));
  }
  Impl::InFlight f;
  {
    HostStepTimer timer(HostStep::events);
    f.ticket = im.next_ticket++;
    f.start = im.take_event();
    f.stop = im.take_event();
    if (!span_started_) {
      TALLY_CUDA_CHECK(cudaEventRecord(im.span_start, im.compute));
      span_started_ = true;
    }
    TALLY_CUDA_CHECK(cudaEventRecord(f.start, im.compute));
  }
  host_mark("start event");
  try {
    body();
  } catch (...) {
    (void)cudaStreamSynchronize(im.compute);
    im.give_back(f);
    release(chunk);
    throw;
  }
  {
    HostStepTimer timer(HostStep::events);
    TALLY_CUDA_CHECK(cudaEventRecord(f.stop, im.compute));
  }
  if (chunk.slot >= 0) TALLY_CUDA_CHECK(cudaEventRecord(im.slots[chunk.slot].consumed, im.compute));
  f.leases = std::move(chunk.leases);
  im.in_flight.push_back(std::move(f));
  release(chunk);
  host_mark("stop event");
  return im.in_flight.back().ticket;
}

std::vector<ChunkTiming> ChunkPipeline::completed(bool wait) {
  Impl& im = *impl_;
  std::vector<ChunkTiming> out = std::move(im.finished);
  im.finished.clear();
  while (!im.in_flight.empty()) {
    Impl::InFlight& f = im.in_flight.front();
    if (wait) {
      wait_event(f.stop);
    } else {
      const cudaError_t q = cudaEventQuery(f.stop);
      if (q == cudaErrorNotReady) break;
      TALLY_CUDA_CHECK(q);
    }
    float ms = 0;
    TALLY_CUDA_CHECK(cudaEventElapsedTime(&ms, f.start, f.stop));
    stats_.device_ms += ms;
    ++stats_.chunks;
    if (span_started_) {
      float span = 0;
      TALLY_CUDA_CHECK(cudaEventElapsedTime(&span, im.span_start, f.stop));
      stats_.span_ms = std::max<double>(stats_.span_ms, span);
    }
    out.push_back(ChunkTiming{f.ticket, ms});
    im.give_back(f);
    im.in_flight.pop_front();  // drops the leases: the kernels are done with them
  }
  return out;
}

std::vector<ChunkTiming> ChunkPipeline::completed_through(uint64_t ticket) {
  Impl& im = *impl_;
  // In-order stream: the run with `ticket` finishing means the earlier ones did.
  for (auto it = im.in_flight.rbegin(); it != im.in_flight.rend(); ++it) {
    if (it->ticket <= ticket) {
      wait_event(it->stop);
      break;
    }
  }
  return completed(false);
}

size_t ChunkPipeline::in_flight() const { return impl_->in_flight.size(); }

const char* ChunkPipeline::join_refusal(const StagedChunk& first, const StagedChunk& next) {
  if (first.slot >= 0 || next.slot >= 0) return "staged through pinned memory";
  if (!first.waits.empty() || !next.waits.empty()) return "copies to wait for";
  if (first.columns.size() != next.columns.size() || first.widths != next.widths || first.rows <= 0)
    return "other columns";
  for (size_t i = 0; i < first.columns.size(); ++i) {
    const ColumnPointer& a = first.columns[i];
    const ColumnPointer& b = next.columns[i];
    // Validity bytes continue the previous chunk's as the values do (placed
    // apart from them, column_regions.hpp), or neither chunk has any.
    if (!a.validity != !b.validity) return "NULL flags in one chunk only";
    if (a.validity && a.validity + first.rows != b.validity) return "NULL flags not adjacent";
    if (!a.data && !b.data) continue;  // absent in both (count(*))
    if (!a.data || !b.data) return "other columns";
    if (static_cast<const char*>(a.data) + static_cast<uint64_t>(first.rows) * first.widths[i] != b.data)
      return "columns not adjacent in device memory";
  }
  return nullptr;
}

void ChunkPipeline::join(StagedChunk& first, StagedChunk&& next) {
  first.rows += next.rows;
  for (auto& l : next.leases) first.leases.push_back(std::move(l));
  next.leases.clear();
  first.hits += next.hits;
  first.misses += next.misses;
  first.copied_bytes += next.copied_bytes;
}

void ChunkPipeline::release(StagedChunk& chunk) {
  if (chunk.slot >= 0) impl_->slots[chunk.slot].busy = false;
  chunk.slot = -1;
  chunk.leases.clear();
  chunk.waits.clear();
}

}  // namespace tally::gpu
