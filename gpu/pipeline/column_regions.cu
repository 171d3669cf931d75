// place_column (column_regions.hpp): device virtual address regions that
// hold consecutive chunks' copies of one stored column (or of its validity)
// back to back, backed by blocks of physical memory (CUDA virtual memory
// management, reached through the runtime's driver entry points so that no
// binary links libcuda: the CPU-only machines run the same binaries).
#include "gpu/pipeline/column_regions.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

namespace tally::gpu {

namespace {

// A region reserves the virtual addresses of this many bytes of columns,
// and of at least 64 and at most 4096 columns of the size of its first one.
// A second region starts when one is full, and its first chunk is then not
// adjacent to the last one: a table of 2^20-row chunks (4 MiB int4 copies)
// fills one region with 2048 chunks, a table of 2^24-row chunks (64 MiB)
// one with 128.
constexpr uint64_t kRegionBytes = uint64_t{8} << 30;
constexpr uint64_t kMinRegionColumns = 64;
constexpr uint64_t kMaxRegionColumns = 4096;
// Placements start on 256-byte boundaries (coalesced, vector loads): a
// chunk whose bytes are a multiple of it is adjacent to the next.
constexpr uint64_t kPlacementAlignment = 256;
// Columns one block maps at most: what a column may hold mapped beyond its
// cached chunks (the cache counts the chunks' bytes only).
constexpr uint64_t kMaxBlockColumns = 16;

uint64_t round_up(uint64_t bytes, uint64_t unit) { return (bytes + unit - 1) / unit * unit; }

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

// The physical memory of a block of a region's addresses, mapped; keeps the
// region's addresses reserved. The columns placed in it share it: it is
// freed when the last of them is.
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
  uint64_t bytes = 0;  // reserved
  uint64_t next = 0;   // where the next column goes; addresses are never reused
  // The block that backs the addresses up to block_end: mapped ahead, so that a
  // cold read of a column does not pay the mapping calls (creation, map,
  // access: hundreds of microseconds together) once per chunk. Weak: a block
  // whose columns were all evicted is freed, and its unplaced bytes skipped.
  std::weak_ptr<Mapping> block;
  uint64_t block_end = 0;
  uint64_t block_columns = 1;  // the next block's columns: doubling up to kMaxBlockColumns
  ~Region() {
    if (base) (void)driver().address_free(base, bytes);
  }
};

Mapping::~Mapping() {
  if (mapped) (void)driver().unmap(at, bytes);
  if (handle) (void)driver().release(handle);
}

// Maps `bytes` (whole granules) of `region` at offset `at`; nullptr when
// the device has no memory for it.
std::shared_ptr<Mapping> map_block(const std::shared_ptr<Region>& region, int device, uint64_t at, uint64_t bytes) {
  const Driver& d = driver();
  auto m = std::make_shared<Mapping>();
  m->region = region;
  m->at = region->base + at;
  m->bytes = bytes;
  const CUmemAllocationProp prop = device_prop(device);
  if (d.create(&m->handle, m->bytes, &prop, 0) != CUDA_SUCCESS) {
    m->handle = 0;
    return nullptr;  // out of device memory: the caller's allocation decides
  }
  if (d.map(m->at, m->bytes, 0, m->handle, 0) != CUDA_SUCCESS) return nullptr;
  m->mapped = true;
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (d.set_access(m->at, m->bytes, &access, 1) != CUDA_SUCCESS) return nullptr;
  return m;
}

struct Regions {
  std::mutex mutex;
  std::map<std::tuple<int, uint64_t, uint32_t, uint8_t, ColumnPart>, std::shared_ptr<Region>> current;
  std::map<int, uint64_t> granularity;  // per device; 0 = unsupported
};
Regions& regions() {
  static Regions* r = new Regions;  // never destroyed: columns may be freed during static destruction
  return *r;
}

}  // namespace

std::shared_ptr<void> both_backings(std::shared_ptr<void> first, std::shared_ptr<void> second) {
  return std::make_shared<std::pair<std::shared_ptr<void>, std::shared_ptr<void>>>(std::move(first), std::move(second));
}

std::optional<PlacedColumn> place_column(int device, const ColumnKey& key, ColumnPart part, uint64_t bytes) {
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
  if (gran == 0) return std::nullopt;
  const uint64_t size = round_up(bytes, kPlacementAlignment);
  std::shared_ptr<Region>& region = rs.current[{device, key.table, key.column, key.width_bytes, part}];
  std::shared_ptr<Mapping> block = region ? region->block.lock() : nullptr;
  // The unplaced bytes of a block already freed are skipped.
  if (region && !block) region->next = std::max(region->next, region->block_end);
  if (!region || region->next + size > region->bytes) {
    auto fresh = std::make_shared<Region>();
    fresh->bytes = round_up(std::clamp(kRegionBytes, size * kMinRegionColumns, size * kMaxRegionColumns), gran);
    if (d.reserve(&fresh->base, fresh->bytes, 0, 0, 0) != CUDA_SUCCESS) {
      fresh->base = 0;
      return std::nullopt;
    }
    region = std::move(fresh);
    block = nullptr;
  }
  const uint64_t at = region->next;
  PlacedColumn out;
  out.data = reinterpret_cast<void*>(region->base + at);
  if (block && at + size <= region->block_end) {
    out.backing = std::move(block);
  } else {
    // A new block from where the mapped addresses end (granule-aligned: a
    // fresh region's start, or the end of the block before), holding the
    // rest of this column and, ahead, the next ones'.
    const uint64_t start = block ? region->block_end : at;
    const uint64_t want = std::max(at + size - start, region->block_columns * size);
    const uint64_t mapped = std::min(round_up(want, gran), region->bytes - start);
    std::shared_ptr<Mapping> fresh = map_block(region, device, start, mapped);
    if (!fresh) return std::nullopt;
    region->block = fresh;
    region->block_end = start + mapped;
    region->block_columns = std::min(2 * region->block_columns, kMaxBlockColumns);
    out.backing = block && at < start ? both_backings(std::move(block), std::move(fresh)) : std::move(fresh);
  }
  region->next = at + size;
  return out;
}

}  // namespace tally::gpu
