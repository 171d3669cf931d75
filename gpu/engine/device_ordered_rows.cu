// The device side of the ordered-set / DISTINCT collector
// (device_ordered_rows.hpp): a kernel per chunk appends each kept row's
// (key, order code) to device buffers; at the end a radix sort of pairs by
// code, then a stable one by key over the key's bits only, and a run-length
// encoding of the keys give every key's codes in order. Percentiles over
// few keys skip the sort: their values are selected (ordered_select.cuh).
#include "gpu/engine/device_ordered_rows.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <deque>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "common/cancel.hpp"
#include "common/column_program_run.hpp"
#include "common/error.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/engine/ordered_row_codes.cuh"
#include "gpu/engine/ordered_select.cuh"
#include "gpu/warp_append.cuh"
#include "gpu/engine/spec_translation.hpp"
#include "gpu/engine/top_codes_table.cuh"
#include "gpu/gpu_health.hpp"
#include "gpu/pipeline/column_programs.hpp"
#include "gpu/pipeline/key_packing.hpp"

namespace tally::gpu {
namespace {

using tally::ColumnWidth;

// Appends every kept row: rows with a NULL value or outside the FILTER are
// skipped, NULL-key rows go to their own buffer (their group's), the others
// to (out_keys, out_codes). One atomic per warp on the shared count: the
// order within the buffers is free, the sort sets it.
__global__ void collect_kernel(const __grid_constant__ CollectArgs a, int64_t rows) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x; base < rows; base += stride) {
    const int64_t r = base + threadIdx.x;
    const bool in = r < rows;
    const bool kept = in && row_kept(a, r);
    const bool null_key = kept && a.key_valid != nullptr && a.key_valid[r] == 0;
    const bool keyed = kept && !null_key;
    const unsigned long long pos = warp_append(keyed, a.count);
    if (keyed) {
      a.out_keys[pos] = sort_key(a, r);
      a.out_codes[pos] = order_code(a, r);
    }
    if (null_key) a.null_codes[atomicAdd(a.null_count, 1ULL)] = order_code(a, r);
  }
}

// Percentiles' picks (common/ordered_pick.hpp) out of each run of sorted
// codes: run r holds lengths[r] codes from starts[r] (lengths == nullptr:
// one run of `single` codes from 0). The positions are the host's, with the
// same arithmetic, so the finalizer finds the values it reads.
__global__ void pick_kernel(const uint64_t* codes, const int* lengths, const int* starts, int single, int runs, const __grid_constant__ PickArgs p,
                            uint64_t* out_codes, uint64_t* out_positions) {
  for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < runs; r += gridDim.x * blockDim.x) {
    const uint64_t n = lengths ? static_cast<uint64_t>(lengths[r]) : static_cast<uint64_t>(single);
    const uint64_t* run = codes + (starts ? starts[r] : 0);
    uint64_t at = static_cast<uint64_t>(r) * static_cast<uint64_t>(p.per);
    for (int i = 0; i < p.count; ++i) {
      uint64_t pos[2];
      const int k = tally::ordered_pick_positions(p.picks[i], n, pos);
      for (int j = 0; j < k; ++j, ++at) {
        out_codes[at] = run[pos[j]];
        out_positions[at] = pos[j];
      }
    }
  }
}

// count(DISTINCT)'s mark of each sorted row: 1 where it starts a value of
// its key (the first row of the key, or a code another value than the row
// before's), so a sum per key counts its distinct values. keys == nullptr:
// one key (the NULL-key group's rows).
__global__ void first_of_value_kernel(const uint64_t* keys, const uint64_t* codes, int n, bool floats, unsigned* marks) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    marks[i] = i == 0 || (keys != nullptr && keys[i] != keys[i - 1]) || !tally::same_order_value(codes[i], codes[i - 1], floats);
  }
}

constexpr int kCollectThreads = 256;
constexpr int64_t kCollectMaxBlocks = 8192;

ColumnKey key_of(const tally::ColumnIdentity& id, ColumnWidth width) {
  return ColumnKey{id.table, id.chunk, id.column, static_cast<uint8_t>(width_bytes(width))};
}

int value_kind(ColumnWidth w) {
  switch (w) {
    case ColumnWidth::int32: return kInt32;
    case ColumnWidth::int64: return kInt64;
    case ColumnWidth::float32: return kFloat32;
    default: return kFloat64;
  }
}

class DeviceOrderedRows final : public tally::OrderedRowsCollector {
 public:
  DeviceOrderedRows(ColumnCache& cache, const tally::AggregationSpec& spec, uint64_t rows)
      : cache_(cache), spec_(spec), rows_bound_(rows) {
    TALLY_CUDA_CHECK(cudaSetDevice(cache.device()));
    TALLY_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    if (spec_.global_aggregate) {
      // One group, key 0: no key is copied up or sorted on.
      key_kind_ = kPacked;
      key_bits_ = 0;
    } else if (!spec_.key_parts.empty()) {
      key_kind_ = kPacked;
      for (const tally::KeyPart& p : spec_.key_parts) key_bits_ = std::max(key_bits_, static_cast<int>(p.offset + p.bits));
    } else {
      key_kind_ = spec_.key_width == ColumnWidth::int32 ? kKeyInt32 : kKeyInt64;
      key_bits_ = key_kind_ == kKeyInt32 ? 32 : 64;
    }
  }

  ~DeviceOrderedRows() override {
    // Destructor: the kernels may still read leased columns; wait, then free.
    (void)cudaStreamSynchronize(stream_);
    for (InFlight& f : in_flight_) (void)cudaEventDestroy(f.done);
    in_flight_.clear();
    slots_.clear();
    tops_.clear();
    scratch_.clear();
    counters_.release();
    packer_.reset();
    where_.reset();
    (void)cudaStreamSynchronize(stream_);
    (void)cudaStreamDestroy(stream_);
  }

  bool hold(const tally::ColumnIdentity& column, ColumnWidth width) override {
    if (!column.known()) return false;
    const ColumnKey key = key_of(column, width);
    auto resident = cache_.find(key);
    if (!resident) return false;
    leases_.emplace_back(key, std::move(resident));
    return true;
  }

  void collect(const tally::ChunkInput& chunk, const std::vector<tally::OrderedRowsSlot>& slots) override;
  void plan_picks(size_t slot, const std::vector<tally::OrderedPick>& picks) override;
  // Where the one slot is a top-codes table: it counts the rows without a
  // value too, so that its keys and counts are the groups' (the GPU run
  // beside it is then not fed).
  bool count_every_row() override {
    if (tops_.size() != 1 || !tops_[0]) return false;
    tops_[0]->count_every_row();
    every_row_ = true;
    return true;
  }
  tally::KeyedSegments sorted(size_t slot) override;
  tally::KeyedPicks picked(size_t slot, const std::vector<tally::OrderedPick>& picks) override;
  tally::KeyedPicks picked_from_table(size_t slot, const std::vector<tally::OrderedPick>& picks);
  tally::KeyedDistinct distinct_counts(size_t slot, bool floats) override;
  std::string name() const override {
    char line[360];
    if (top_slots_ > 0) {
      std::snprintf(line, sizeof line, "GPU: each key's count%s and %d best codes kept on the device (no sort%s), picked and copied back %.3f ms%s",
                    every_row_ ? "s of rows and values" : "", top_k_, top_direct_ > 0 ? ", a direct entry per key of the range" : "", copy_ms_,
                    top_rebuilds_ > 0 ? ", table rebuilt for keys beyond the estimate" : "");
      return line;
    }
    char selected[120] = "", sorts[120] = "";
    if (selected_slots_ > 0)
      std::snprintf(selected, sizeof selected, ", %d ordered input%s selected by value buckets without a sort %.3f ms", selected_slots_,
                    selected_slots_ == 1 ? "" : "s", select_ms_);
    if (sorted_slots_ > 0)
      std::snprintf(sorts, sizeof sorts, ", CUB radix sort by (key, code) %.3f ms, copied back %.3f ms", sort_ms_, copy_ms_);
    std::snprintf(line, sizeof line, "GPU: rows kept on the device%s%s%s%s", selected, sorts,
                  picked_slots_ > 0 ? " (percentiles' and ranks' values picked on the device)" : "",
                  counted_slots_ > 0 ? " (distinct values counted on the device)" : "");
    return line;
  }

 private:
  struct Slot {
    DeviceBuffer keys, codes, nulls;
    uint64_t capacity = 0, null_capacity = 0;  // rows of keys and codes; of nulls
    bool floats = false;  // the codes are order codes of floats
  };
  // One slot's rows sorted by (key, code) on the device: `codes` (n of
  // them) in key runs (run_count keys in `unique`, their lengths in
  // `lengths`), the NULL-key group's null_rows codes in sorted_nulls.
  struct OnDevice {
    Slot slot;
    DeviceBuffer alt_keys, alt_codes, unique, lengths, runs, sorted_nulls;
    const uint64_t* keys = nullptr;  // the sorted keys, beside `codes`
    const uint64_t* codes = nullptr;
    uint64_t n = 0, null_rows = 0;
    int run_count = 0;
  };
  OnDevice sort_slot(size_t slot);
  // Slot s's kept rows: (keyed, NULL-key), once every chunk's kernels are
  // done (their leases then go).
  std::pair<uint64_t, uint64_t> kept_rows(size_t s);
  // The runs' keys (decoded) and, per run, `per_run` (d.lengths: its rows),
  // copied back.
  void copy_keys(const OnDevice& d, const int* per_run, std::vector<int64_t>& keys, std::vector<uint64_t>& counts);
  struct InFlight {
    cudaEvent_t done = nullptr;
    std::vector<std::shared_ptr<const DeviceColumn>> leases;
  };
  // A chunk column on the device: its resident copy (leased into `used`) or
  // its host data copied into scratch buffer `scratch`.
  ColumnPointer on_device(const tally::ColumnView& v, size_t rows, size_t scratch,
                          std::vector<std::shared_ptr<const DeviceColumn>>& used);
  const uint8_t* mask_on_device(const uint8_t* mask, size_t rows, size_t scratch);
  // Makes b hold at least `need` uint64 values, keeping its first `keep`.
  static void grow(DeviceBuffer& b, uint64_t capacity, uint64_t need, uint64_t keep, cudaStream_t stream);
  void retire_finished();

  ColumnCache& cache_;
  tally::AggregationSpec spec_;
  cudaStream_t stream_ = nullptr;
  int key_kind_ = kPacked;
  int key_bits_ = 1;
  std::vector<std::pair<ColumnKey, std::shared_ptr<const DeviceColumn>>> leases_;
  std::deque<InFlight> in_flight_;
  std::vector<Slot> slots_;
  // Per slot: the table that keeps only what its planned picks read
  // (plan_picks; top_codes_table.cuh), or nullptr: every row is kept.
  std::vector<std::unique_ptr<TopCodesTable>> tops_;
  std::vector<std::vector<tally::OrderedPick>> planned_;
  std::vector<DeviceBuffer> scratch_;
  DeviceBuffer counters_;  // per slot: kept keyed rows, kept NULL-key rows
  std::unique_ptr<KeyPacker> packer_;
  // The WHERE on the raw path (spec_.row_filter over the chunk's program
  // columns), evaluated here as the GPU run evaluates it for its own rows.
  std::unique_ptr<DeviceProgramEvaluator> where_;
  uint64_t rows_bound_ = 0;  // the most rows the input may hold
  uint64_t rows_ = 0;  // rows offered so far: a bound on every buffer's rows
  double sort_ms_ = 0, copy_ms_ = 0;  // EXPLAIN ANALYZE: sorts and encodings; copies to the host
  int picked_slots_ = 0, counted_slots_ = 0;
  int selected_slots_ = 0;  // EXPLAIN ANALYZE: slots whose picks were selected, not sorted
  int sorted_slots_ = 0;    // ... and slots sorted
  double select_ms_ = 0;
  int top_slots_ = 0, top_k_ = 0, top_rebuilds_ = 0;  // EXPLAIN ANALYZE: slots answered by a top-codes table
  int top_direct_ = 0;  // ... of them direct (top_codes_table.cuh)
  bool every_row_ = false;  // count_every_row: the one slot's table counts rows without a value
};

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

void DeviceOrderedRows::grow(DeviceBuffer& b, uint64_t capacity, uint64_t need, uint64_t keep, cudaStream_t stream) {
  DeviceBuffer bigger(need * sizeof(uint64_t), stream);
  if (keep > 0) TALLY_CUDA_CHECK(cudaMemcpyAsync(bigger.get(), b.get(), std::min(keep, capacity) * sizeof(uint64_t),
                                                 cudaMemcpyDeviceToDevice, stream));
  b = std::move(bigger);
}

ColumnPointer DeviceOrderedRows::on_device(const tally::ColumnView& v, size_t rows, size_t scratch,
                                           std::vector<std::shared_ptr<const DeviceColumn>>& used) {
  if (v.data == nullptr) {
    const ColumnKey key = key_of(v.identity, v.width);
    const auto it = std::find_if(leases_.begin(), leases_.end(), [&](const auto& l) { return l.first == key; });
    if (it == leases_.end()) throw Error(SqlState::internal_error, "GPU: an ordered aggregate's column came without data and unheld");
    const DeviceColumn& c = *it->second;
    if (c.ready && !c.ready_seen.load(std::memory_order_acquire))
      TALLY_CUDA_CHECK(cudaStreamWaitEvent(stream_, reinterpret_cast<cudaEvent_t>(c.ready), 0));
    used.push_back(it->second);
    return ColumnPointer{c.data, c.validity};
  }
  // Copied from pageable memory: cudaMemcpyAsync returns once the host
  // bytes are staged, so the chunk may go when sink returns.
  const size_t value_bytes = (rows * width_bytes(v.width) + 255) / 256 * 256;
  const size_t bytes = value_bytes + (v.validity ? rows : 0) + 1;
  uint8_t* base = nullptr;
  std::shared_ptr<DeviceColumn> entry;
  if (v.identity.known() && cache_.admits(bytes)) {
    // A stored column only this collector reads (an input of ordered
    // aggregates alone): kept resident, as the chunk pipeline keeps the
    // columns it copies, so that the next query reads none on the host.
    void* mem = nullptr;
    const cudaError_t e = cudaMallocAsync(&mem, bytes, stream_);
    if (e == cudaErrorMemoryAllocation) (void)cudaGetLastError();  // short of memory: a scratch copy instead
    else TALLY_CUDA_CHECK(e);
    if (e == cudaSuccess) {
      entry = std::make_shared<DeviceColumn>();
      entry->data = mem;
      entry->bytes = bytes;
      entry->device = cache_.device();
      base = static_cast<uint8_t*>(mem);
    }
  }
  if (base == nullptr) {
    if (scratch_.size() <= scratch) scratch_.resize(scratch + 1);
    scratch_[scratch].ensure(bytes, stream_);
    base = scratch_[scratch].get<uint8_t>();
  }
  TALLY_CUDA_CHECK(cudaMemcpyAsync(base, v.data, rows * width_bytes(v.width), cudaMemcpyHostToDevice, stream_));
  if (v.validity) TALLY_CUDA_CHECK(cudaMemcpyAsync(base + value_bytes, v.validity, rows, cudaMemcpyHostToDevice, stream_));
  if (entry) {
    entry->validity = v.validity ? base + value_bytes : nullptr;
    TALLY_CUDA_CHECK(cudaEventCreateWithFlags(&entry->ready, cudaEventDisableTiming));
    TALLY_CUDA_CHECK(cudaEventRecord(entry->ready, stream_));
    cache_.insert(key_of(v.identity, v.width), entry);
    used.push_back(std::move(entry));
  }
  return ColumnPointer{base, v.validity ? base + value_bytes : nullptr};
}

const uint8_t* DeviceOrderedRows::mask_on_device(const uint8_t* mask, size_t rows, size_t scratch) {
  if (mask == nullptr) return nullptr;
  if (scratch_.size() <= scratch) scratch_.resize(scratch + 1);
  scratch_[scratch].ensure(rows + 1, stream_);
  TALLY_CUDA_CHECK(cudaMemcpyAsync(scratch_[scratch].get(), mask, rows, cudaMemcpyHostToDevice, stream_));
  return scratch_[scratch].get<const uint8_t>();
}

void DeviceOrderedRows::retire_finished() {
  while (!in_flight_.empty()) {
    const cudaError_t s = cudaEventQuery(in_flight_.front().done);
    if (s == cudaErrorNotReady) return;
    TALLY_CUDA_CHECK(s);
    (void)cudaEventDestroy(in_flight_.front().done);
    in_flight_.pop_front();
  }
}

void DeviceOrderedRows::collect(const tally::ChunkInput& chunk, const std::vector<tally::OrderedRowsSlot>& slots) {
  if (spec_.cancel) spec_.cancel->check();
  if (slots_.empty()) {
    slots_.resize(slots.size());
    counters_ = DeviceBuffer(std::max<size_t>(1, 2 * slots.size()) * sizeof(unsigned long long), stream_);
    TALLY_CUDA_CHECK(cudaMemsetAsync(counters_.get(), 0, counters_.bytes(), stream_));
  }
  if (slots.size() != slots_.size()) throw Error(SqlState::internal_error, "GPU: ordered aggregates changed between chunks");
  const size_t rows = chunk.rows;
  std::vector<std::shared_ptr<const DeviceColumn>> used;
  size_t scratch = 0;
  if (rows > 0) {
    // The key: the packed code of its columns (packed here, as GpuRun packs
    // for its own aggregation), or the key column itself.
    const void* keys = nullptr;
    const uint8_t* key_valid = nullptr;
    int key_wide = 1;
    if (spec_.global_aggregate) {
      // keys stay nullptr: every row's sort key is 0.
    } else if (!spec_.key_parts.empty()) {
      std::vector<ColumnPointer> parts;
      std::vector<uint32_t> widths;
      for (const tally::ColumnView& k : chunk.key_columns) {
        parts.push_back(on_device(k, rows, scratch++, used));
        widths.push_back(width_bytes(k.width));
      }
      if (!packer_) packer_ = std::make_unique<KeyPacker>();
      keys = packer_->pack(spec_.key_parts, parts.data(), widths.data(), static_cast<int64_t>(rows), stream_);
    } else {
      const ColumnPointer k = on_device(chunk.keys, rows, scratch++, used);
      keys = k.data;
      key_valid = k.validity;
      key_wide = chunk.keys.width == ColumnWidth::int64 ? 1 : 0;
    }
    rows_ += rows;
    // The rows the WHERE keeps (errors it raises are the GPU run's to report).
    const uint8_t* kept = nullptr;
    if (!spec_.row_filter.empty()) {
      std::vector<ColumnPointer> columns;
      std::vector<ColumnWidth> widths;
      for (const tally::ColumnView& c : chunk.program_columns) {
        columns.push_back(on_device(c, rows, scratch++, used));
        widths.push_back(c.width);
      }
      if (!where_) {
        where_ = std::make_unique<DeviceProgramEvaluator>();
        where_->set_lookups(spec_.lookup_columns, stream_);
      }
      where_->evaluate(spec_.row_filter, {}, columns, widths, static_cast<int64_t>(rows), stream_,
                       spec_.compile_programs ? ProgramKernel::compile : ProgramKernel::interpret);
      kept = where_->mask();
    }
    auto* counters = counters_.get<unsigned long long>();
    for (size_t s = 0; s < slots.size(); ++s) {
      const tally::ColumnView& in = chunk.values.at(static_cast<size_t>(slots[s].input));
      const ColumnPointer v = on_device(in, rows, scratch++, used);
      Slot& slot = slots_[s];
      // Room for every row offered so far (the kept ones are fewer),
      // grown geometrically: a chunk at a time would copy the rows once per chunk.
      if (rows_ > slot.capacity) {
        const uint64_t want = std::max(rows_, 2 * slot.capacity);
        grow(slot.keys, slot.capacity, want, rows_ - rows, stream_);
        grow(slot.codes, slot.capacity, want, rows_ - rows, stream_);
        slot.capacity = want;
      }
      TopCodesTable* top = s < tops_.size() ? tops_[s].get() : nullptr;
      // `nulls` holds the NULL-key group's codes where the rows are sorted;
      // for a table counting every row, the keys of rows without a value
      // that found no slot.
      const bool bare = top != nullptr && every_row_ && v.validity != nullptr;
      if (((top == nullptr && key_valid != nullptr) || bare) && rows_ > slot.null_capacity) {
        const uint64_t want = std::max(rows_, 2 * slot.null_capacity);
        grow(slot.nulls, slot.null_capacity, want, slot.null_capacity, stream_);
        slot.null_capacity = want;
      }
      CollectArgs a;
      a.keys = keys;
      a.key_valid = key_valid;
      a.key_kind = key_kind_;
      a.key_wide = key_wide;
      a.values = v.data;
      a.value_valid = v.validity;
      if (kept != nullptr && slots[s].filter != nullptr)
        throw Error(SqlState::internal_error, "GPU: an ordered aggregate with a FILTER on the raw path");
      a.filter = kept != nullptr ? kept : mask_on_device(slots[s].filter, rows, scratch++);
      a.value_kind = value_kind(in.width);
      slot.floats = a.value_kind == kFloat32 || a.value_kind == kFloat64;
      a.out_keys = slot.keys.get<uint64_t>();
      a.out_codes = slot.codes.get<uint64_t>();
      a.count = counters + 2 * s;
      a.null_codes = slot.nulls.get<uint64_t>();
      a.null_count = counters + 2 * s + 1;
      if (bare) {
        a.out_bare_keys = slot.nulls.get<uint64_t>();
        a.bare_count = counters + 2 * s + 1;
      }
      if (top != nullptr) {  // its rows whose key finds no slot go to the row buffers
        top->add(a, static_cast<int64_t>(rows), stream_);
        continue;
      }
      const int64_t blocks = std::min<int64_t>((static_cast<int64_t>(rows) + kCollectThreads - 1) / kCollectThreads, kCollectMaxBlocks);
      collect_kernel<<<static_cast<unsigned>(blocks), kCollectThreads, 0, stream_>>>(a, static_cast<int64_t>(rows));
      TALLY_CUDA_CHECK_LAUNCH("collect_kernel");
    }
  }
  // This chunk's leases are kept until its kernels are done; columns held
  // for it but passed with data (another holder refused them) go now.
  InFlight f;
  TALLY_CUDA_CHECK(cudaEventCreateWithFlags(&f.done, cudaEventDisableTiming));
  TALLY_CUDA_CHECK(cudaEventRecord(f.done, stream_));
  f.leases = std::move(used);
  in_flight_.push_back(std::move(f));
  auto of_chunk = [&](const ColumnKey& k) {
    auto same = [&](const tally::ColumnView& v) { return v.identity.table == k.table && v.identity.chunk == k.chunk; };
    return same(chunk.keys) || std::any_of(chunk.key_columns.begin(), chunk.key_columns.end(), same) ||
           std::any_of(chunk.values.begin(), chunk.values.end(), same) ||
           std::any_of(chunk.program_columns.begin(), chunk.program_columns.end(), same);
  };
  std::erase_if(leases_, [&](const auto& l) { return of_chunk(l.first); });
  retire_finished();
}

std::pair<uint64_t, uint64_t> DeviceOrderedRows::kept_rows(size_t s) {
  unsigned long long counts[2] = {0, 0};
  TALLY_CUDA_CHECK(cudaMemcpyAsync(counts, counters_.get<unsigned long long>() + 2 * s, sizeof counts, cudaMemcpyDeviceToHost, stream_));
  TALLY_CUDA_CHECK(cudaStreamSynchronize(stream_));
  while (!in_flight_.empty()) {  // every kernel is done: the leases may go
    (void)cudaEventDestroy(in_flight_.front().done);
    in_flight_.pop_front();
  }
  return {counts[0], counts[1]};
}

DeviceOrderedRows::OnDevice DeviceOrderedRows::sort_slot(size_t s) {
  OnDevice d;
  if (spec_.cancel) spec_.cancel->check();
  std::tie(d.n, d.null_rows) = kept_rows(s);
  if (d.n > static_cast<uint64_t>(INT_MAX) || d.null_rows > static_cast<uint64_t>(INT_MAX))
    throw Error(SqlState::program_limit_exceeded, "GPU: more than 2^31 rows for one ordered aggregate");
  d.slot = std::move(slots_[s]);
  ++sorted_slots_;
  const auto t_sort = std::chrono::steady_clock::now();
  if (d.n > 0) {
    const uint64_t n = d.n;
    d.alt_keys = DeviceBuffer(n * sizeof(uint64_t), stream_);
    d.alt_codes = DeviceBuffer(n * sizeof(uint64_t), stream_);
    cub::DoubleBuffer<uint64_t> keys(d.slot.keys.get<uint64_t>(), d.alt_keys.get<uint64_t>());
    cub::DoubleBuffer<uint64_t> codes(d.slot.codes.get<uint64_t>(), d.alt_codes.get<uint64_t>());
    const int items = static_cast<int>(n);
    // By code over all 64 bits, then stably by key over the key's bits: (key, code) order.
    size_t by_code = 0, by_key = 0, encode = 0;
    TALLY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, by_code, codes, keys, items, 0, 64, stream_));
    if (key_bits_ > 0) TALLY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, by_key, keys, codes, items, 0, key_bits_, stream_));
    d.unique = DeviceBuffer(n * sizeof(uint64_t), stream_);
    d.lengths = DeviceBuffer(n * sizeof(int), stream_);
    d.runs = DeviceBuffer(sizeof(int), stream_);
    TALLY_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(nullptr, encode, keys.Current(), d.unique.get<uint64_t>(),
                                                        d.lengths.get<int>(), d.runs.get<int>(), items, stream_));
    DeviceBuffer temp(std::max({by_code, by_key, encode, size_t{1}}), stream_);
    TALLY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), by_code, codes, keys, items, 0, 64, stream_));
    if (key_bits_ > 0) TALLY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), by_key, keys, codes, items, 0, key_bits_, stream_));
    TALLY_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(temp.get(), encode, keys.Current(), d.unique.get<uint64_t>(),
                                                        d.lengths.get<int>(), d.runs.get<int>(), items, stream_));
    TALLY_CUDA_CHECK(cudaMemcpyAsync(&d.run_count, d.runs.get(), sizeof d.run_count, cudaMemcpyDeviceToHost, stream_));
    TALLY_CUDA_CHECK(cudaStreamSynchronize(stream_));
    d.keys = keys.Current();
    d.codes = codes.Current();
  }
  if (d.null_rows > 0) {
    d.sorted_nulls = DeviceBuffer(d.null_rows * sizeof(uint64_t), stream_);
    size_t bytes = 0;
    const int items = static_cast<int>(d.null_rows);
    TALLY_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, d.slot.nulls.get<const uint64_t>(), d.sorted_nulls.get<uint64_t>(), items, 0, 64, stream_));
    DeviceBuffer temp(std::max<size_t>(bytes, 1), stream_);
    TALLY_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp.get(), bytes, d.slot.nulls.get<const uint64_t>(), d.sorted_nulls.get<uint64_t>(), items, 0, 64, stream_));
  }
  sort_ms_ += ms_since(t_sort);
  return d;
}

void DeviceOrderedRows::copy_keys(const OnDevice& d, const int* per_run, std::vector<int64_t>& keys, std::vector<uint64_t>& counts) {
  std::vector<uint64_t> sort_keys(static_cast<size_t>(d.run_count));
  std::vector<int> lens(static_cast<size_t>(d.run_count));
  if (d.run_count > 0) {
    TALLY_CUDA_CHECK(cudaMemcpyAsync(sort_keys.data(), d.unique.get(), sort_keys.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost, stream_));
    TALLY_CUDA_CHECK(cudaMemcpyAsync(lens.data(), per_run, lens.size() * sizeof(int), cudaMemcpyDeviceToHost, stream_));
    TALLY_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  keys.resize(sort_keys.size());
  counts.resize(sort_keys.size());
  for (size_t i = 0; i < sort_keys.size(); ++i) {
    const uint64_t k = sort_keys[i];
    keys[i] = key_of_sort_key(k, key_kind_);
    counts[i] = static_cast<uint64_t>(lens[i]);
  }
}

void DeviceOrderedRows::plan_picks(size_t slot, const std::vector<tally::OrderedPick>& picks) {
  const auto shape = top_codes_shape(picks);
  if (!shape) return;
  if (tops_.size() <= slot) {
    tops_.resize(slot + 1);
    planned_.resize(slot + 1);
  }
  // The keys' range where statistics know it (single keys, packed codes).
  std::optional<SortKeyRange> keys;
  if (spec_.key_range_known && !spec_.global_aggregate && spec_.key_max >= spec_.key_min)
    keys = SortKeyRange{sort_key_of(spec_.key_min, key_kind_), sort_key_of(spec_.key_max, key_kind_)};
  tops_[slot] = std::make_unique<TopCodesTable>(*shape, spec_.estimated_groups, rows_bound_, stream_, keys);
  planned_[slot] = picks;
}

tally::KeyedSegments DeviceOrderedRows::sorted(size_t s) {
  if (s < tops_.size() && tops_[s]) throw Error(SqlState::internal_error, "GPU: the rows of an ordered aggregate planned for its picks were asked for");
  tally::KeyedSegments out;
  if (s >= slots_.size()) return out;  // no chunk: no row
  OnDevice d = sort_slot(s);
  out.codes.resize(d.n + d.null_rows);
  out.null_key_rows = d.null_rows;
  const auto t_copy = std::chrono::steady_clock::now();
  if (d.n > 0) TALLY_CUDA_CHECK(cudaMemcpyAsync(out.codes.data(), d.codes, d.n * sizeof(uint64_t), cudaMemcpyDeviceToHost, stream_));
  if (d.null_rows > 0)
    TALLY_CUDA_CHECK(cudaMemcpyAsync(out.codes.data() + d.n, d.sorted_nulls.get(), d.null_rows * sizeof(uint64_t), cudaMemcpyDeviceToHost, stream_));
  TALLY_CUDA_CHECK(cudaStreamSynchronize(stream_));
  copy_ms_ += ms_since(t_copy);
  copy_keys(d, d.lengths.get<const int>(), out.keys, out.counts);
  return out;
}

tally::KeyedPicks DeviceOrderedRows::picked(size_t s, const std::vector<tally::OrderedPick>& picks) {
  tally::KeyedPicks out;
  out.per_key = tally::ordered_picks_per_group(picks);
  if (s >= slots_.size()) return out;  // no chunk: no row
  if (s < tops_.size() && tops_[s]) return picked_from_table(s, picks);
  if (picks.size() > static_cast<size_t>(kMaxPicks)) return tally::pick_from_segments(sorted(s), picks);
  PickArgs args;
  args.count = static_cast<int>(picks.size());
  args.per = out.per_key;
  std::copy(picks.begin(), picks.end(), args.picks);
  if (key_kind_ == kPacked && key_bits_ <= kSelectMaxKeyBits) {
    if (spec_.cancel) spec_.cancel->check();
    const auto [keyed, null_keyed] = kept_rows(s);
    if (keyed > 0 && null_keyed == 0) {  // packed keys have no NULL-key rows of their own
      const auto t_select = std::chrono::steady_clock::now();
      std::optional<tally::KeyedPicks> selected =
          select_picks(slots_[s].keys.get<const uint64_t>(), slots_[s].codes.get<const uint64_t>(), keyed, key_bits_, slots_[s].floats, args,
                       stream_);
      select_ms_ += ms_since(t_select);
      if (selected) {
        ++picked_slots_;
        ++selected_slots_;
        return std::move(*selected);
      }
    }
  }
  OnDevice d = sort_slot(s);
  ++picked_slots_;
  out.null_key_rows = d.null_rows;
  const auto t_copy = std::chrono::steady_clock::now();
  // Every key's picks, then the NULL-key group's block: one launch over
  // the runs (their starts an exclusive scan of the lengths), one for it.
  const size_t blocks = static_cast<size_t>(d.run_count) + (d.null_rows > 0 ? 1 : 0);
  const size_t kept = blocks * static_cast<size_t>(out.per_key);
  DeviceBuffer codes(std::max<size_t>(kept, 1) * sizeof(uint64_t), stream_), positions(std::max<size_t>(kept, 1) * sizeof(uint64_t), stream_);
  if (d.run_count > 0) {
    DeviceBuffer starts(static_cast<size_t>(d.run_count) * sizeof(int), stream_);
    size_t bytes = 0;
    TALLY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, d.lengths.get<const int>(), starts.get<int>(), d.run_count, stream_));
    DeviceBuffer temp(std::max<size_t>(bytes, 1), stream_);
    TALLY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), bytes, d.lengths.get<const int>(), starts.get<int>(), d.run_count, stream_));
    const int grid = std::max(1, std::min((d.run_count + kCollectThreads - 1) / kCollectThreads, 4096));
    pick_kernel<<<grid, kCollectThreads, 0, stream_>>>(d.codes, d.lengths.get<const int>(), starts.get<const int>(), 0,
                                                      d.run_count, args, codes.get<uint64_t>(), positions.get<uint64_t>());
    TALLY_CUDA_CHECK_LAUNCH("pick_kernel");
  }
  if (d.null_rows > 0) {
    pick_kernel<<<1, 32, 0, stream_>>>(d.sorted_nulls.get<const uint64_t>(), nullptr, nullptr, static_cast<int>(d.null_rows), 1,
                                       args, codes.get<uint64_t>() + static_cast<size_t>(d.run_count) * out.per_key,
                                       positions.get<uint64_t>() + static_cast<size_t>(d.run_count) * out.per_key);
    TALLY_CUDA_CHECK_LAUNCH("pick_kernel");
  }
  out.codes.resize(kept);
  out.positions.resize(kept);
  if (kept > 0) {
    TALLY_CUDA_CHECK(cudaMemcpyAsync(out.codes.data(), codes.get(), kept * sizeof(uint64_t), cudaMemcpyDeviceToHost, stream_));
    TALLY_CUDA_CHECK(cudaMemcpyAsync(out.positions.data(), positions.get(), kept * sizeof(uint64_t), cudaMemcpyDeviceToHost, stream_));
  }
  copy_keys(d, d.lengths.get<const int>(), out.keys, out.counts);  // synchronizes the stream
  TALLY_CUDA_CHECK(cudaStreamSynchronize(stream_));
  copy_ms_ += ms_since(t_copy);
  return out;
}

tally::KeyedDistinct DeviceOrderedRows::distinct_counts(size_t s, bool floats) {
  if (s < tops_.size() && tops_[s]) throw Error(SqlState::internal_error, "GPU: the rows of an ordered aggregate planned for its picks were counted");
  tally::KeyedDistinct out;
  if (s >= slots_.size()) return out;  // no chunk: no row
  OnDevice d = sort_slot(s);
  ++counted_slots_;
  out.values = d.n + d.null_rows;
  out.null_key_rows = d.null_rows;
  const auto t_copy = std::chrono::steady_clock::now();
  // Each row marked where it starts a value, the marks summed per key: the
  // keys come out as the run-length encoding's (the same sorted keys).
  const uint64_t marked = std::max<uint64_t>(d.n, d.null_rows);
  DeviceBuffer marks(std::max<uint64_t>(marked, 1) * sizeof(unsigned), stream_);
  DeviceBuffer distinct(std::max(d.run_count, 1) * sizeof(int), stream_);
  const auto grid = [](uint64_t n) { return static_cast<unsigned>(std::clamp<uint64_t>((n + kCollectThreads - 1) / kCollectThreads, 1, 8192)); };
  if (d.n > 0) {
    const int items = static_cast<int>(d.n);
    first_of_value_kernel<<<grid(d.n), kCollectThreads, 0, stream_>>>(d.keys, d.codes, items, floats, marks.get<unsigned>());
    TALLY_CUDA_CHECK_LAUNCH("first_of_value_kernel");
    size_t bytes = 0;
    const auto plus = cuda::std::plus<int>{};
    TALLY_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(nullptr, bytes, d.keys, d.unique.get<uint64_t>(), marks.get<const unsigned>(),
                                                    distinct.get<int>(), d.runs.get<int>(), plus, items, stream_));
    DeviceBuffer temp(std::max<size_t>(bytes, 1), stream_);
    TALLY_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(temp.get(), bytes, d.keys, d.unique.get<uint64_t>(), marks.get<const unsigned>(),
                                                    distinct.get<int>(), d.runs.get<int>(), plus, items, stream_));
  }
  copy_keys(d, distinct.get<const int>(), out.keys, out.distinct);  // synchronizes the stream
  if (d.null_rows > 0) {
    const int items = static_cast<int>(d.null_rows);
    first_of_value_kernel<<<grid(d.null_rows), kCollectThreads, 0, stream_>>>(nullptr, d.sorted_nulls.get<const uint64_t>(), items, floats,
                                                                            marks.get<unsigned>());
    TALLY_CUDA_CHECK_LAUNCH("first_of_value_kernel");
    size_t bytes = 0;
    DeviceBuffer sum(sizeof(unsigned), stream_);
    TALLY_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, marks.get<const unsigned>(), sum.get<unsigned>(), items, stream_));
    DeviceBuffer temp(std::max<size_t>(bytes, 1), stream_);
    TALLY_CUDA_CHECK(cub::DeviceReduce::Sum(temp.get(), bytes, marks.get<const unsigned>(), sum.get<unsigned>(), items, stream_));
    unsigned host = 0;
    TALLY_CUDA_CHECK(cudaMemcpyAsync(&host, sum.get(), sizeof host, cudaMemcpyDeviceToHost, stream_));
    TALLY_CUDA_CHECK(cudaStreamSynchronize(stream_));
    out.null_key_distinct = host;
  }
  copy_ms_ += ms_since(t_copy);
  return out;
}

tally::KeyedPicks DeviceOrderedRows::picked_from_table(size_t s, const std::vector<tally::OrderedPick>& picks) {
  auto same = [](const tally::OrderedPick& a, const tally::OrderedPick& b) {
    return a.kind == b.kind && a.fraction == b.fraction && a.descending == b.descending;
  };
  if (!std::equal(picks.begin(), picks.end(), planned_[s].begin(), planned_[s].end(), same))
    throw Error(SqlState::internal_error, "GPU: an ordered aggregate's picks differ from the ones planned");
  if (spec_.cancel) spec_.cancel->check();
  const auto t = std::chrono::steady_clock::now();
  unsigned long long left[2] = {0, 0};  // (key, code) rows; bare keys
  if (s < slots_.size())
    TALLY_CUDA_CHECK(cudaMemcpyAsync(left, counters_.get<unsigned long long>() + 2 * s, sizeof left, cudaMemcpyDeviceToHost, stream_));
  TALLY_CUDA_CHECK(cudaStreamSynchronize(stream_));
  // With every row counted no GPU run saw the rows: the WHERE's errors
  // (an overflow PostgreSQL reports) are this collector's to raise, and
  // the statement runs again on the exact host path.
  if (every_row_ && where_)
    if (const uint32_t flags = where_->errors(stream_)) throw tally::ProgramOverflow{flags};
  const Slot* slot = s < slots_.size() ? &slots_[s] : nullptr;
  TopCodesTable& top = *tops_[s];
  TopCodesOverflow overflow;
  if (slot) {
    overflow = TopCodesOverflow{slot->keys.get<const uint64_t>(), slot->codes.get<const uint64_t>(), left[0],
                                slot->nulls.get<const uint64_t>(), every_row_ ? left[1] : 0};
  }
  tally::KeyedPicks out = top.picked(picks, overflow, key_kind_, stream_);
  ++top_slots_;
  top_k_ = std::max(top_k_, top.shape().k);
  top_rebuilds_ += top.rebuilds();
  top_direct_ += top.made_direct() ? 1 : 0;
  copy_ms_ += ms_since(t);
  return out;
}

}  // namespace

std::unique_ptr<tally::OrderedRowsCollector> make_device_ordered_rows(GpuEngine& engine, const tally::AggregationSpec& spec,
                                                                      uint64_t rows) {
  if (!gpu_usable() || rows > static_cast<uint64_t>(INT_MAX) || spec.key_parts.size() > kMaxDeviceKeyParts) return nullptr;
  if (spec.key_parts.empty() && spec.key_width != ColumnWidth::int32 && spec.key_width != ColumnWidth::int64) return nullptr;
  return std::make_unique<DeviceOrderedRows>(engine.column_cache(), spec, rows);
}

}  // namespace tally::gpu
