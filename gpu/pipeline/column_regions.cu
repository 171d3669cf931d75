// place_column (column_regions.hpp): device virtual address regions whose
// slots hold consecutive chunks' copies of one stored column, each slot backed
// by its own physical allocation (CUDA virtual memory management, reached
// through the runtime's driver entry points so that no binary links libcuda:
// the CPU-only machines run the same binaries).
#include "gpu/pipeline/column_regions.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

namespace tally::gpu {

namespace {

// Slots per region: as many as 8 GiB of virtual addresses hold, between 64
// and 4096. A second region starts when one is full, and its first chunk is
// then not adjacent to the last one: a table of 2^20-row chunks (4 MiB int4
// copies) fills one region with 2048 chunks, a table of 2^24-row chunks
// (64 MiB) one with 128.
constexpr uint64_t kRegionBytes = uint64_t{8} << 30;
constexpr uint32_t kMinRegionSlots = 64;
constexpr uint32_t kMaxRegionSlots = 4096;

uint32_t region_slots(uint64_t slot_bytes) {
  const uint64_t fit = kRegionBytes / slot_bytes;
  return static_cast<uint32_t>(std::clamp<uint64_t>(fit, kMinRegionSlots, kMaxRegionSlots));
}
// Slots one block maps at most: what a column may hold mapped beyond its
// cached chunks (the cache counts the chunks' bytes only).
constexpr uint32_t kMaxBlockSlots = 16;

struct Driver {
  bool ok = false;
  CUresult (*granularity)(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags) = nullptr;
  CUresult (*reserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long) = nullptr;
  CUresult (*address_free)(CUdeviceptr, size_t) = nullptr;
  CUresult (*create)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*, unsigned long long) = nullptr;
  CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long) = nullptr;
  CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t) = nullptr;
  CUresult (*unmap)(CUdeviceptr, size_t) = nullptr;
  CUresult (*release)(CUmemGenericAllocationHandle) = nullptr;
};

template <class F>
bool entry(const char* name, F& fn) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult status{};
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &status) != cudaSuccess ||
      status != cudaDriverEntryPointSuccess || !p) {
    (void)cudaGetLastError();
    return false;
  }
  fn = reinterpret_cast<F>(p);
  return true;
}

const Driver& driver() {
  static const Driver d = [] {
    Driver x;
    x.ok = entry("cuMemGetAllocationGranularity", x.granularity) && entry("cuMemAddressReserve", x.reserve) &&
           entry("cuMemAddressFree", x.address_free) && entry("cuMemCreate", x.create) && entry("cuMemMap", x.map) &&
           entry("cuMemSetAccess", x.set_access) && entry("cuMemUnmap", x.unmap) && entry("cuMemRelease", x.release);
    return x;
  }();
  return d;
}

CUmemAllocationProp device_prop(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

struct Region;

// The physical memory of a block of consecutive slots, mapped; keeps its
// region's addresses reserved. The columns placed in its slots share it: it
// is freed when the last of them is.
struct Mapping {
  std::shared_ptr<Region> region;
  CUdeviceptr at = 0;
  uint64_t bytes = 0;
  CUmemGenericAllocationHandle handle = 0;
  bool mapped = false;
  ~Mapping();
};

struct Region {
  CUdeviceptr base = 0;
  uint64_t slot_bytes = 0;
  uint32_t slots = 0;
  uint32_t next = 0;  // slots are taken in order and never reused
  // The block that backs slots [next, block_end): mapped ahead, so that a
  // cold read of a column does not pay the mapping calls (creation, map,
  // access: hundreds of microseconds together) once per chunk. Weak: a block
  // whose columns were all evicted is freed, and its untaken slots skipped.
  std::weak_ptr<Mapping> block;
  uint32_t block_end = 0;
  uint32_t block_slots = 1;  // the next block's slots: doubling up to kMaxBlockSlots
  ~Region() {
    if (base) (void)driver().address_free(base, slot_bytes * slots);
  }
};

Mapping::~Mapping() {
  if (mapped) (void)driver().unmap(at, bytes);
  if (handle) (void)driver().release(handle);
}

struct Regions {
  std::mutex mutex;
  std::map<std::tuple<int, uint64_t, uint32_t, uint8_t>, std::shared_ptr<Region>> current;
  std::map<int, uint64_t> granularity;  // per device; 0 = unsupported
};
Regions& regions() {
  static Regions* r = new Regions;  // never destroyed: columns may be freed during static destruction
  return *r;
}

}  // namespace

std::optional<PlacedColumn> place_column(int device, const ColumnKey& key, uint64_t bytes) {
  const Driver& d = driver();
  if (!d.ok || bytes == 0) return std::nullopt;
  Regions& rs = regions();
  std::lock_guard lock(rs.mutex);
  auto g = rs.granularity.find(device);
  if (g == rs.granularity.end()) {
    const CUmemAllocationProp prop = device_prop(device);
    size_t gran = 0;
    if (d.granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) != CUDA_SUCCESS) gran = 0;
    g = rs.granularity.emplace(device, gran).first;
  }
  const uint64_t gran = g->second;
  // Below the granularity a slot would waste most of its memory.
  if (gran == 0 || bytes < gran) return std::nullopt;
  const uint64_t size = (bytes + gran - 1) / gran * gran;
  std::shared_ptr<Region>& region = rs.current[{device, key.table, key.column, key.width_bytes}];
  std::shared_ptr<Mapping> block = region ? region->block.lock() : nullptr;
  // The untaken slots of a block already freed are skipped.
  if (region && !block) region->next = std::max(region->next, region->block_end);
  if (!region || region->next >= region->slots || size > region->slot_bytes) {
    auto fresh = std::make_shared<Region>();
    fresh->slot_bytes = size;
    fresh->slots = region_slots(size);
    if (d.reserve(&fresh->base, size * fresh->slots, 0, 0, 0) != CUDA_SUCCESS) {
      fresh->base = 0;
      return std::nullopt;
    }
    region = std::move(fresh);
    block = nullptr;
  }
  if (!block || region->next >= region->block_end) {
    const uint32_t slots = std::min(region->block_slots, region->slots - region->next);
    auto m = std::make_shared<Mapping>();
    m->region = region;
    m->at = region->base + region->slot_bytes * region->next;
    m->bytes = region->slot_bytes * slots;
    const CUmemAllocationProp prop = device_prop(device);
    if (d.create(&m->handle, m->bytes, &prop, 0) != CUDA_SUCCESS) {
      m->handle = 0;
      return std::nullopt;  // out of device memory: the caller's allocation decides
    }
    if (d.map(m->at, m->bytes, 0, m->handle, 0) != CUDA_SUCCESS) return std::nullopt;
    m->mapped = true;
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (d.set_access(m->at, m->bytes, &access, 1) != CUDA_SUCCESS) return std::nullopt;
    block = std::move(m);
    region->block = block;
    region->block_end = region->next + slots;
    region->block_slots = std::min(2 * region->block_slots, kMaxBlockSlots);
  }
  const CUdeviceptr at = region->base + region->slot_bytes * region->next;
  ++region->next;
  PlacedColumn out;
  out.data = reinterpret_cast<void*>(at);
  out.backing = std::move(block);
  return out;
}

}  // namespace tally::gpu
