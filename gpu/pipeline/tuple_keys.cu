// The device side of TupleKeyTable (tuple_keys.hpp). A slot holds a tuple
// id, or kEmpty, or kBusy while the thread that claimed it writes the new
// tuple's values; a thread that meets kBusy waits for the id (the writer
// publishes it after a fence), so every thread compares against complete
// values and a tuple is inserted once. Values are read around L1 (__ldcg):
// another SM wrote them after this SM may have cached their line.
#include "gpu/pipeline/tuple_keys.hpp"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "common/hll_hash.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/pipeline/key_packing.hpp"
#include "gpu/pageable_copy.cuh"

namespace tally::gpu {

namespace {

constexpr uint32_t kEmpty = 0xffffffffu;
constexpr uint32_t kBusy = 0xfffffffeu;
// Ids stay below kBusy; a table of more tuples is refused.
constexpr uint64_t kMaxTuples = uint64_t{1} << 31;

struct TupleColumns {
  int count = 0;
  const void* data[kMaxDeviceKeyParts];
  const uint8_t* valid[kMaxDeviceKeyParts];  // nullptr: no NULL in this column
  uint8_t wide[kMaxDeviceKeyParts];          // int64 values (else int32)
};

// The table as kernels see it (not owning).
struct TableView {
  uint32_t* slots = nullptr;
  uint64_t mask = 0;  // slots - 1 (a power of two)
  int count = 0;      // key columns
  int64_t* values[kMaxDeviceKeyParts];  // per column, by id
  uint32_t* nulls = nullptr;            // per id: bit c = column c NULL
  unsigned long long* tuples = nullptr; // ids given
};

__device__ __forceinline__ uint64_t tuple_hash(const int64_t* v, int count, uint32_t nulls) {
  uint64_t h = nulls;
  for (int c = 0; c < count; ++c) h = hll_hash(h ^ static_cast<uint64_t>(v[c])) + static_cast<uint64_t>(c);
  return hll_hash(h);
}

__device__ __forceinline__ uint32_t load_slot(const uint32_t* slot) { return *static_cast<const volatile uint32_t*>(slot); }

__global__ void assign_kernel(const __grid_constant__ TupleColumns in, TableView t, int64_t rows, int64_t* out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += stride) {
    int64_t v[kMaxDeviceKeyParts];
    uint32_t nulls = 0;
    for (int c = 0; c < in.count; ++c) {
      v[c] = in.wide[c] ? static_cast<const int64_t*>(in.data[c])[r]
                        : static_cast<int64_t>(static_cast<const int32_t*>(in.data[c])[r]);
      if (in.valid[c] != nullptr && in.valid[c][r] == 0) {
        v[c] = 0;  // a NULL's stored value is arbitrary
        nulls |= 1u << c;
      }
    }
    uint64_t s = tuple_hash(v, in.count, nulls) & t.mask;
    for (;;) {
      uint32_t id = load_slot(t.slots + s);
      if (id == kEmpty) {
        const uint32_t prev = atomicCAS(t.slots + s, kEmpty, kBusy);
        if (prev == kEmpty) {
          const auto fresh = static_cast<uint32_t>(atomicAdd(t.tuples, 1ULL));
          for (int c = 0; c < in.count; ++c) t.values[c][fresh] = v[c];
          t.nulls[fresh] = nulls;
          __threadfence();
          atomicExch(t.slots + s, fresh);
          out[r] = fresh;
          break;
        }
        id = prev;
      }
      while (id == kBusy) id = load_slot(t.slots + s);
      bool same = __ldcg(t.nulls + id) == nulls;
      for (int c = 0; c < in.count && same; ++c) same = __ldcg(t.values[c] + id) == v[c];
      if (same) {
        out[r] = id;
        break;
      }
      s = (s + 1) & t.mask;
    }
  }
}

// Re-inserts ids [0, tuples) into an empty table (growth): each is known
// distinct, so a free slot is all it needs.
__global__ void rehash_kernel(TableView t, uint64_t tuples) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t id = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; id < tuples; id += stride) {
    int64_t v[kMaxDeviceKeyParts];
    for (int c = 0; c < t.count; ++c) v[c] = t.values[c][id];
    const uint32_t nulls = t.nulls[id];
    uint64_t s = tuple_hash(v, t.count, nulls) & t.mask;
    while (atomicCAS(t.slots + s, kEmpty, static_cast<uint32_t>(id)) != kEmpty) s = (s + 1) & t.mask;
  }
}

// Where values_kernel writes each column's values: wide ones (int64) at
// wide + at[c] * n, narrow ones (bit c of narrow_mask: int32) at
// narrow + at[c] * n.
struct ValuesOut {
  int64_t* wide = nullptr;
  int32_t* narrow = nullptr;
  uint32_t narrow_mask = 0;
  uint8_t at[kMaxDeviceKeyParts];
};

// Per group: its tuple's values per column and their validity.
// Also ORs the NULL bits of every group into *any_null (bit c: column c
// has a NULL group): a column without one needs no validity copied back.
// blockDim is a multiple of 32, and every lane reaches the warp's reduction.
// The groups' ids are ids[0, first) then more_ids[0, n - first).
__global__ void values_kernel(TableView t, const int64_t* ids, uint64_t first, const int64_t* more_ids, uint64_t n,
                              ValuesOut out, uint8_t* valid, uint32_t* any_null) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  uint32_t seen = 0;
  for (uint64_t g = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < n; g += stride) {
    const auto id = static_cast<uint64_t>(g < first ? ids[g] : more_ids[g - first]);
    const uint32_t nulls = t.nulls[id];
    seen |= nulls;
    for (int c = 0; c < t.count; ++c) {
      const uint64_t at = static_cast<uint64_t>(out.at[c]) * n + g;
      if ((out.narrow_mask >> c) & 1u) out.narrow[at] = static_cast<int32_t>(t.values[c][id]);
      else out.wide[at] = t.values[c][id];
      valid[static_cast<uint64_t>(c) * n + g] = static_cast<uint8_t>(((nulls >> c) & 1u) == 0);
    }
  }
  seen = __reduce_or_sync(0xffffffffu, seen);
  if ((threadIdx.x & 31u) == 0 && seen != 0) atomicOr(any_null, seen);
}

constexpr int kThreads = 256;
// Blocks per launch at most: grid-stride loops, sized to fill the device.
constexpr uint64_t kMaxBlocks = 8192;

unsigned blocks_for(uint64_t n) {
  return static_cast<unsigned>(std::max<uint64_t>(1, std::min<uint64_t>((n + kThreads - 1) / kThreads, kMaxBlocks)));
}

// Slots for `tuples` at most half full: probes stay short.
uint64_t slots_for(uint64_t tuples) {
  uint64_t s = uint64_t{1} << 10;
  while (s < tuples * 2) s <<= 1;
  return s;
}

}  // namespace

struct TupleKeyTable::Impl {
  size_t columns = 0;
  uint64_t expected = 0;
  DeviceBuffer slots, nulls, tuples, ids;
  DeviceBuffer values[kMaxDeviceKeyParts];
  uint64_t slot_count = 0;
  uint64_t known = 0;   // tuples as of the last wait
  uint64_t unread = 0;  // rows assigned since (each may be a new tuple)
  int growths = 0;

  TableView view() const {
    TableView t;
    t.slots = slots.get<uint32_t>();
    t.mask = slot_count - 1;
    t.count = static_cast<int>(columns);
    for (size_t c = 0; c < columns; ++c) t.values[c] = values[c].get<int64_t>();
    t.nulls = nulls.get<uint32_t>();
    t.tuples = tuples.get<unsigned long long>();
    return t;
  }
  uint64_t capacity() const { return slot_count / 2; }

  void read_count(StreamHandle stream) {
    unsigned long long n = 0;
    TALLY_CUDA_CHECK(cudaMemcpyAsync(&n, tuples.get(), sizeof n, cudaMemcpyDeviceToHost, stream));
    TALLY_CUDA_CHECK(cudaStreamSynchronize(stream));
    known = n;
    unread = 0;
  }

  // A table of `slots_wanted` slots holding the tuples so far (known exact).
  void resize(uint64_t slots_wanted, StreamHandle stream) {
    const uint64_t ids_wanted = slots_wanted / 2;
    for (size_t c = 0; c < columns; ++c) {
      DeviceBuffer bigger(ids_wanted * sizeof(int64_t), stream);
      if (known > 0)
        TALLY_CUDA_CHECK(cudaMemcpyAsync(bigger.get(), values[c].get(), known * sizeof(int64_t),
                                         cudaMemcpyDeviceToDevice, stream));
      values[c] = std::move(bigger);
    }
    DeviceBuffer bigger_nulls(ids_wanted * sizeof(uint32_t), stream);
    if (known > 0)
      TALLY_CUDA_CHECK(cudaMemcpyAsync(bigger_nulls.get(), nulls.get(), known * sizeof(uint32_t),
                                       cudaMemcpyDeviceToDevice, stream));
    nulls = std::move(bigger_nulls);
    slots = DeviceBuffer(slots_wanted * sizeof(uint32_t), stream);
    TALLY_CUDA_CHECK(cudaMemsetAsync(slots.get(), 0xff, slots_wanted * sizeof(uint32_t), stream));
    slot_count = slots_wanted;
    if (known > 0) {
      rehash_kernel<<<blocks_for(known), kThreads, 0, stream>>>(view(), known);
      TALLY_CUDA_CHECK_LAUNCH("rehash_kernel");
    }
  }
};

TupleKeyTable::TupleKeyTable(size_t columns, uint64_t expected_groups) : impl_(std::make_unique<Impl>()) {
  if (columns == 0 || columns > kMaxDeviceKeyParts)
    throw Error(SqlState::internal_error, "GPU: a key tuple of " + std::to_string(columns) + " columns");
  impl_->columns = columns;
  impl_->expected = expected_groups;
}

TupleKeyTable::~TupleKeyTable() = default;

const int64_t* TupleKeyTable::assign(const ColumnPointer* columns, const uint32_t* widths, int64_t rows,
                                     StreamHandle stream) {
  Impl& m = *impl_;
  const auto n = static_cast<uint64_t>(std::max<int64_t>(rows, 0));
  if (m.slot_count == 0) {
    // The first table from the estimate, bounded: a high estimate must not
    // take gigabytes before the tuples are seen (growth follows them, and a
    // low estimate grows it at the first chunk).
    m.tuples = DeviceBuffer(sizeof(unsigned long long), stream);
    TALLY_CUDA_CHECK(cudaMemsetAsync(m.tuples.get(), 0, sizeof(unsigned long long), stream));
    m.resize(slots_for(std::min<uint64_t>(m.expected, uint64_t{1} << 26)), stream);
  }
  if (m.known + m.unread + n > m.capacity()) {
    // The rows may outgrow the table: count what it holds, and grow it
    // until every row could be a new tuple (room for two such chunks, so
    // that few tuples over many chunks wait for the count every other chunk).
    m.read_count(stream);
    if (m.known + n > kMaxTuples)
      throw Error(SqlState::program_limit_exceeded, "GPU: more than 2^31 groups of a key tuple");
    if (m.known + n > m.capacity()) {
      m.resize(slots_for(std::max(m.known + 2 * n, 2 * m.capacity())), stream);
      ++m.growths;
    }
  }
  m.ids.ensure(std::max<uint64_t>(n, 1) * sizeof(int64_t), stream);
  TupleColumns in;
  in.count = static_cast<int>(m.columns);
  for (size_t c = 0; c < m.columns; ++c) {
    in.data[c] = columns[c].data;
    in.valid[c] = columns[c].validity;
    in.wide[c] = widths[c] == 8 ? 1 : 0;
  }
  int64_t* out = m.ids.get<int64_t>();
  if (n > 0) {
    assign_kernel<<<blocks_for(n), kThreads, 0, stream>>>(in, m.view(), rows, out);
    TALLY_CUDA_CHECK_LAUNCH("tuple_assign_kernel");
  }
  m.unread += n;
  return out;
}

void TupleKeyTable::values_of(const int64_t* ids, size_t n, const std::vector<GroupByResult::DeviceKeys>& on_device,
                              uint32_t narrow_mask, std::vector<std::vector<int64_t>>& values,
                              std::vector<std::vector<int32_t>>& values32, std::vector<std::vector<uint8_t>>& valid,
                              StreamHandle stream) {
  Impl& m = *impl_;
  valid.assign(m.columns, {});  // empty: no NULL in the column (AggregationResult::key_code_valid)
  ValuesOut out;
  size_t wide_columns = 0, narrow_columns = 0;
  for (size_t c = 0; c < m.columns; ++c) {
    const bool narrow = ((narrow_mask >> c) & 1u) != 0;
    out.at[c] = static_cast<uint8_t>(narrow ? narrow_columns++ : wide_columns++);
  }
  out.narrow_mask = narrow_mask;
  const size_t rows = std::max<size_t>(n, 1);
  uint64_t on_device_ids = 0;
  for (const GroupByResult::DeviceKeys& k : on_device) on_device_ids += k.count;
  const bool read_there = on_device.size() <= 2 && on_device_ids == n && n > 0;
  DeviceBuffer device_ids(read_there ? 0 : rows * sizeof(int64_t), stream);
  DeviceBuffer device_values(rows * std::max<size_t>(wide_columns, 1) * sizeof(int64_t), stream);
  DeviceBuffer device_values32(rows * std::max<size_t>(narrow_columns, 1) * sizeof(int32_t), stream);
  DeviceBuffer device_valid(rows * m.columns, stream);
  DeviceBuffer device_any_null(sizeof(uint32_t), stream);
  out.wide = device_values.get<int64_t>();
  out.narrow = device_values32.get<int32_t>();
  const bool gather = n > 0 && m.slot_count > 0;
  // The arrays sized while the ids go up and the kernel runs.
  std::thread sizing([&] { size_values(m.columns, n, narrow_mask, values, values32); });
  try {
    if (gather) {
      TALLY_CUDA_CHECK(cudaMemsetAsync(device_any_null.get(), 0, sizeof(uint32_t), stream));
      const int64_t* first = nullptr;
      const int64_t* more = nullptr;
      uint64_t first_count = n;
      if (read_there) {
        first = on_device[0].keys;
        first_count = on_device[0].count;
        if (on_device.size() > 1) more = on_device[1].keys;
      } else {
        // Staged on several threads: the driver's own copy from pageable
        // memory moved the 800 MB of 1e8 ids on one.
        copy_from_pageable({HostCopy{device_ids.get(), ids, n * sizeof(int64_t)}}, stream);
        first = device_ids.get<int64_t>();
      }
      values_kernel<<<blocks_for(n), kThreads, 0, stream>>>(m.view(), first, first_count, more, n, out,
                                                            device_valid.get<uint8_t>(), device_any_null.get<uint32_t>());
      TALLY_CUDA_CHECK_LAUNCH("tuple_values_kernel");
    }
  } catch (...) {
    sizing.join();
    throw;
  }
  sizing.join();
  if (!gather) {
    for (auto& v : valid) v.assign(n, 0);  // no tuple known: every group's value reads as NULL
    return;
  }
  uint32_t any_null = 0;
  TALLY_CUDA_CHECK(cudaMemcpyAsync(&any_null, device_any_null.get(), sizeof any_null, cudaMemcpyDeviceToHost, stream));
  TALLY_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<HostCopy> copies;
  for (size_t c = 0; c < m.columns; ++c) {
    const size_t at = static_cast<size_t>(out.at[c]) * n;
    if ((narrow_mask >> c) & 1u)
      copies.push_back(HostCopy{values32[c].data(), out.narrow + at, n * sizeof(int32_t)});
    else
      copies.push_back(HostCopy{values[c].data(), out.wide + at, n * sizeof(int64_t)});
    if (((any_null >> c) & 1u) == 0) continue;
    valid[c].resize(n);
    copies.push_back(HostCopy{valid[c].data(), device_valid.get<uint8_t>() + c * n, n});
  }
  copy_to_pageable(copies, stream);
  m.read_count(stream);
}

uint64_t TupleKeyTable::tuples() const { return impl_->known; }
int TupleKeyTable::growths() const { return impl_->growths; }

}  // namespace tally::gpu
