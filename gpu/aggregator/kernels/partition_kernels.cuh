#pragma once
// PARTITIONED variant, after the rows are sorted on the top key bits (CUB radix
// sort on `bits` bits, so each partition is a contiguous run of rows): every
// block owns whole partitions, aggregates one in shared memory and writes its
// groups out. Partitions hold disjoint keys, so when the aggregator was empty
// the groups go straight to a compact output (DirectRef) with no global-table
// merge; otherwise (later chunks of a stream) each partition is merged into the
// global table, where the order-preserving range hash keeps it in one region.
#include <cstdint>
#include <type_traits>

#include "gpu/aggregator/kernels/aggregate_kernels.cuh"
#include "gpu/aggregator/kernels/shared_table.cuh"
#include "gpu/aggregator/kernels/views.cuh"
#include "gpu/warp_append.cuh"

namespace tally::gpu::kernels {

// The radix digit CUB sorted on: key bits [begin, begin + log2(mask + 1)),
// with the sign bit flipped as CUB does for signed keys.
template <class K>
__device__ __forceinline__ uint32_t partition_digit(K key, int begin, uint32_t mask) {
  using U = std::make_unsigned_t<K>;
  const U u = static_cast<U>(key) ^ (U{1} << (8 * sizeof(K) - 1));
  return static_cast<uint32_t>(u >> begin) & mask;
}

// starts[p] = first row of partition p in the sorted rows, starts[parts] = n
// (binary search: digits are non-decreasing along the sorted rows, NULL-key
// rows included, since CUB sorted every row on those bits).
template <class K>
__global__ void partition_bounds_kernel(const K* keys, int64_t n, int begin, uint32_t parts, int64_t* starts) {
  const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p > parts) return;
  if (p == parts) {
    starts[p] = n;
    return;
  }
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (partition_digit(keys[mid], begin, parts - 1) < p) lo = mid + 1;
    else hi = mid;
  }
  starts[p] = lo;
}

// Work items: a partition of at most `piece_rows` rows is one item (its block
// owns it outright); a larger one (few groups, or skew) is cut into
// ceil(rows / piece_rows) items whose blocks flush into the global table, so
// no block is left with most of the rows. pieces[p] for p < parts, 0 at parts;
// an exclusive scan turns it into each partition's first item.
// (A template only so that the two key-width translation units that include
// this header do not both define it.)
template <class K>
__global__ void partition_pieces_kernel(const int64_t* starts, uint32_t parts, int64_t piece_rows, uint32_t* pieces) {
  const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p > parts) return;
  if (p == parts) {
    pieces[p] = 0;
    return;
  }
  const int64_t len = starts[p + 1] - starts[p];
  pieces[p] = static_cast<uint32_t>((len + piece_rows - 1) / piece_rows);
}

// One work item: rows [begin, begin + rows) of one partition; `whole` when it
// is the whole partition (its block may then own the groups outright).
struct __align__(16) PartitionItem {
  int64_t begin;
  uint32_t rows;  // at most piece_rows (< 2^32: a launch holds < 2^32 rows)
  uint32_t whole;
};

// items[i] = work item i, computed once here so that an aggregation block
// starts an item with one 16-byte load, issued while it still works on the
// previous item (three dependent loads and a 64-bit division per item
// otherwise stalled the whole block at every item start).
template <class K>
__global__ void partition_items_kernel(const uint32_t* first_item, const int64_t* starts, uint32_t parts,
                                       PartitionItem* items) {
  const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= parts) return;
  const uint32_t first = first_item[p];
  const int64_t pieces = first_item[p + 1] - first;
  const int64_t start = starts[p];
  const int64_t len = starts[p + 1] - start;
  for (int64_t k = 0; k < pieces; ++k) {
    const int64_t b = len * k / pieces, e = len * (k + 1) / pieces;
    items[first + k] = PartitionItem{start + b, static_cast<uint32_t>(e - b), pieces == 1 ? 1u : 0u};
  }
}

// The block's items in turn (grid-stride): thread 0 holds the next item in
// registers, loaded one item ahead.
struct ItemCursor {
  const PartitionItem* items;
  uint32_t count;
  PartitionItem next;

  __device__ ItemCursor(const PartitionItem* items_in, uint32_t count_in) : items(items_in), count(count_in), next{} {
    if (threadIdx.x == 0 && blockIdx.x < count) next = items[blockIdx.x];
  }
  // Thread 0 only: the item to start now (`item`), and the load of the one after.
  __device__ __forceinline__ PartitionItem take(uint32_t item) {
    const PartitionItem now = next;
    if (item + gridDim.x < count) next = items[item + gridDim.x];
    return now;
  }
};

// Writes the shared table's ordinary groups to `out` (one global atomic per
// block for the base, one shared atomic per warp for the position) and merges
// the two special slots (NULL key, empty-marker key) into the global table:
// the NULL group spans partitions. Every thread of the block calls it.
template <class K>
__device__ void partition_flush_direct(const SharedTable& t, const SharedLayout& lay, const LaneSet& ls,
                                       const SharedParams& p, const GlobalTableRef<K>& table, const SpillRef& spill,
                                       const DirectRef& out, ull* base, uint32_t* cursor) {
  const K* keys = reinterpret_cast<const K*>(t.base + lay.keys_offset);
  const uint32_t* occupied = reinterpret_cast<const uint32_t*>(t.base + lay.counter_offset);
  if (threadIdx.x == 0) {
    *base = atomicAdd(out.count, static_cast<ull>(*occupied));
    *cursor = 0;
  }
  __syncthreads();
  const unsigned lane = threadIdx.x & 31u;
  for (uint32_t s0 = threadIdx.x & ~31u; s0 < t.total_slots; s0 += blockDim.x) {
    const uint32_t s = s0 + lane;
    const bool has = s < t.total_slots && t.u32(lay, 0)[s] != 0;
    const bool special = s >= p.slots;
    if (has && special) {
      ull vals[kMaxLanes];
      for (int l = 0; l < ls.count; ++l) vals[l] = shared_lane_value(t, lay, ls.lane[l], l, s);
      table.add_partial(ls, spill, KeyTraits<K>::empty, s == p.slots, vals);
    }
    const bool mine = has && !special;
    const uint32_t position = warp_append(mine, cursor);
    if (mine) {
      const ull i = *base + position;
      if (i < out.capacity) {
        out.keys[i] = static_cast<int64_t>(keys[s]);
        for (int l = 0; l < ls.count; ++l)
          out.lanes[static_cast<uint64_t>(l) * out.capacity + i] = shared_lane_value(t, lay, ls.lane[l], l, s);
      } else {
        atomicAdd(out.lost, 1ull);
      }
    }
  }
}

// One block per partition at a time (grid-stride over partitions). A partition
// whose groups outgrow the table (estimate too low) flushes into the global
// table when the occupancy passes p.flush_threshold (0: never) at a tile start,
// and rows that find no room go to the global table; either way that
// partition's remaining groups go to the global table too, so a key is never
// both in `out` and in the table. Any lane set; count(*) + sum(int4 NOT NULL)
// runs partition_count_sum_kernel instead.
template <class K, int R>
__global__ void partition_aggregate_kernel(const __grid_constant__ ChunkRef<K> c, const __grid_constant__ LaneSet ls, const __grid_constant__ SharedLayout lay, SharedParams p,
                                           const PartitionItem* work, const uint32_t* item_count, bool direct,
                                           GlobalTableRef<K> table, SpillRef spill, DirectRef out) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ int to_global;
  __shared__ int64_t item_begin, item_end;
  __shared__ ull out_base;
  __shared__ uint32_t out_cursor;
  const SharedTable t{smem, p.slots + 2};
  K* skeys = reinterpret_cast<K*>(smem + lay.keys_offset);
  uint32_t* occupied = reinterpret_cast<uint32_t*>(smem + lay.counter_offset);
  const int64_t tile = static_cast<int64_t>(blockDim.x) * R;
  const bool v0_present = ls.count > 0 && c.columns[0].data != nullptr;

  const uint32_t items = *item_count;
  ItemCursor cursor(work, items);
  for (uint32_t item = blockIdx.x; item < items; item += gridDim.x) {
    if (threadIdx.x == 0) {
      const PartitionItem w = cursor.take(item);
      item_begin = w.begin;
      item_end = w.begin + w.rows;
      to_global = direct && w.whole ? 0 : 1;
    }
    shared_init<K>(t, lay, ls, true);
    __syncthreads();
    const int64_t begin = item_begin;
    const int64_t end = item_end;
    for (int64_t tile_begin = begin; tile_begin < end; tile_begin += tile) {
      if (p.flush_threshold > 0) {
        __syncthreads();
        const bool full = *occupied > p.flush_threshold;
        __syncthreads();  // every thread has read the same value before any inserts again
        if (full) {
          shared_flush<K, false>(t, lay, ls, p, table, spill);
          if (threadIdx.x == 0) to_global = 1;
          __syncthreads();
          shared_init<K>(t, lay, ls, true);
          __syncthreads();
        }
      }
      K key[R];
      bool knull[R];
      int64_t v0[R];
      bool v0_valid[R];
      const int64_t base = tile_begin + threadIdx.x;
#pragma unroll
      for (int j = 0; j < R; ++j) {
        const int64_t row = base + static_cast<int64_t>(j) * blockDim.x;
        const bool in = row < end;
        key[j] = in ? c.keys[row] : K{};
        knull[j] = in && c.key_null(row);
        v0[j] = (in && v0_present) ? c.value(0, row) : 0;
        v0_valid[j] = in && v0_present && c.valid(0, row);
      }
#pragma unroll
      for (int j = 0; j < R; ++j) {
        const int64_t row = base + static_cast<int64_t>(j) * blockDim.x;
        int64_t s = -2;  // -2: no row, -1: no room, to the global table
        if (row < end) {
          if (knull[j]) {
            s = p.slots;
          } else if (key[j] == KeyTraits<K>::empty) {
            s = p.slots + 1;
          } else {
            s = shared_find_or_insert_bucketed(skeys, occupied, p, p.insert_limit, key[j]);
          }
        }
        if (s >= 0) {
          shared_add_row(t, lay, ls, c, static_cast<uint32_t>(s), row, v0[j], v0_valid[j]);
        } else if (s == -1) {
          table.add_row(c, ls, spill, row, key[j], false, v0[j]);
          to_global = 1;
        }
        __syncwarp();  // regroup after divergent probe loops
      }
    }
    __syncthreads();
    if (to_global) {
      shared_flush<K, false>(t, lay, ls, p, table, spill);
    } else {
      partition_flush_direct<K>(t, lay, ls, p, table, spill, out, &out_base, &out_cursor);
    }
    __syncthreads();  // the table is reused by the next partition
  }
}

}  // namespace tally::gpu::kernels
