// TupleKeyMap: see tuple_key_map.hpp. Reading a chunk's tuples and hashing
// them is parallel (the part that touches every column of every row), and
// so is giving the ids: one task per partition, each in row order, so that
// they are deterministic.
#include "executor/cpu/tuple_key_map.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "common/hll_hash.hpp"
#include "executor/cpu/parallel.hpp"

namespace tally::executor::cpu {

namespace {

// Rows a thread takes at least before the work is split.
constexpr size_t kRowsPerThread = 16384;
// Rows (or groups) ahead whose random memory is fetched before it is read.
constexpr size_t kAhead = 16;


// A partition's table starts small: a GROUP BY of a few tuples must not
// zero 64 large tables.
uint64_t capacity_for(uint64_t groups) {
  uint64_t c = 64;
  while (c < groups * 2) c <<= 1;  // at most half full
  return c;
}

}  // namespace

TupleKeyMap::TupleKeyMap(size_t columns, uint64_t expected_groups) : columns_(columns), partitions_(kPartitions) {
  if (columns == 0 || columns > kMaxColumns)
    throw Error(SqlState::internal_error, "a key tuple of " + std::to_string(columns) + " columns");
  // The estimate sizes the tables up to a bound: a high estimate must not
  // allocate gigabytes before a row arrived.
  const uint64_t bounded = std::min<uint64_t>(expected_groups, uint64_t{1} << 24) / kPartitions;
  for (Partition& p : partitions_) {
    const uint64_t c = capacity_for(bounded);
    p.slots.assign(c, 0);
    p.mask = c - 1;
    // Reserved, not touched: the expected tuples' values are appended
    // without the copies of geometric growth.
    p.codes.reserve(bounded * columns_);
    p.nulls.reserve(bounded);
    p.hashes.reserve(bounded);
  }
}

size_t TupleKeyMap::size() const {
  size_t n = 0;
  for (const Partition& p : partitions_) n += p.nulls.size();
  return n;
}

std::vector<int64_t> TupleKeyMap::ids() const {
  std::vector<int64_t> out;
  out.reserve(size());
  for (size_t part = 0; part < kPartitions; ++part)
    for (size_t local = 0; local < partitions_[part].nulls.size(); ++local)
      out.push_back(static_cast<int64_t>(local * kPartitions + part));
  return out;
}

void TupleKeyMap::assign(const ChunkInput& chunk, int64_t* out, int threads) {
  const size_t n = chunk.rows;
  if (chunk.key_columns.size() != columns_)
    throw Error(SqlState::internal_error, "a chunk with " + std::to_string(chunk.key_columns.size()) +
                                              " key columns for a key tuple of " + std::to_string(columns_));
  if (n > UINT32_MAX) throw Error(SqlState::internal_error, "a chunk of more than 2^32 rows for a key tuple");
  rows_.resize(n * columns_);
  row_nulls_.assign(n, 0);
  row_hashes_.resize(n);
  const int parts = n >= 2 * kRowsPerThread ? std::max(threads, 1) : 1;
  // Rows per partition in each part's rows, for a stable grouping by partition.
  std::vector<std::vector<size_t>> counts(static_cast<size_t>(parts), std::vector<size_t>(kPartitions, 0));
  parallel_for(parts, n, [&](int part, size_t begin, size_t end) {
    for (size_t c = 0; c < columns_; ++c) {
      const ColumnView& col = chunk.key_columns[c];
      int64_t* dst = rows_.data() + c;
      if (col.width == ColumnWidth::int32) {
        const auto* v = static_cast<const int32_t*>(col.data);
        for (size_t r = begin; r < end; ++r) dst[r * columns_] = v[r];
      } else {
        const auto* v = static_cast<const int64_t*>(col.data);
        for (size_t r = begin; r < end; ++r) dst[r * columns_] = v[r];
      }
      if (col.validity == nullptr) continue;
      for (size_t r = begin; r < end; ++r) {
        if (col.validity[r]) continue;
        dst[r * columns_] = 0;  // a NULL's stored value is arbitrary
        row_nulls_[r] |= uint32_t{1} << c;
      }
    }
    std::vector<size_t>& count = counts[static_cast<size_t>(part)];
    for (size_t r = begin; r < end; ++r) {
      uint64_t h = row_nulls_[r];
      const int64_t* t = rows_.data() + r * columns_;
      for (size_t c = 0; c < columns_; ++c) h = hll_hash(h ^ static_cast<uint64_t>(t[c])) + c;
      row_hashes_[r] = hll_hash(h);
      ++count[partition_of(row_hashes_[r])];
    }
  });
  // Where each (partition, part)'s rows start: partitions in order, and
  // within one the parts in row order, so each partition's rows ascend.
  std::vector<size_t> partition_start(kPartitions + 1, 0);
  std::vector<std::vector<size_t>> at(static_cast<size_t>(parts), std::vector<size_t>(kPartitions, 0));
  size_t next = 0;
  for (size_t p = 0; p < kPartitions; ++p) {
    partition_start[p] = next;
    for (size_t t = 0; t < static_cast<size_t>(parts); ++t) {
      at[t][p] = next;
      next += counts[t][p];
    }
  }
  partition_start[kPartitions] = next;
  by_partition_.resize(n);
  parallel_for(parts, n, [&](int part, size_t begin, size_t end) {
    std::vector<size_t>& pos = at[static_cast<size_t>(part)];
    for (size_t r = begin; r < end; ++r) by_partition_[pos[partition_of(row_hashes_[r])]++] = static_cast<uint32_t>(r);
  });
  // The partitions give ids on every thread; each reads and writes only
  // its own table and its own rows' ids.
  parallel_tasks(parts, kPartitions, [&](int, size_t p) {
    const size_t first = partition_start[p];
    assign_partition(p, by_partition_.data() + first, partition_start[p + 1] - first, out);
  });
}

void TupleKeyMap::assign_partition(size_t part, const uint32_t* rows, size_t count, int64_t* out) {
  Partition& p = partitions_[part];
  // Each row's probe starts at a random slot of a table larger than the
  // cache: the slots of rows a few ahead are fetched meanwhile (their
  // hashes are known), so the misses overlap instead of adding up.
  for (size_t i = 0; i < count; ++i) {
    if (i + kAhead < count) __builtin_prefetch(p.slots.data() + (row_hashes_[rows[i + kAhead]] & p.mask));
    const size_t r = rows[i];
    const int64_t local = find_or_insert(p, rows_.data() + r * columns_, row_nulls_[r], row_hashes_[r]);
    out[r] = local * static_cast<int64_t>(kPartitions) + static_cast<int64_t>(part);
  }
}

int64_t TupleKeyMap::find_or_insert(Partition& p, const int64_t* tuple, uint32_t nulls, uint64_t hash) const {
  const uint64_t tag = hash >> 32 << 32;
  for (uint64_t s = hash & p.mask;; s = (s + 1) & p.mask) {
    const uint64_t slot = p.slots[s];
    if (slot == 0) {
      const auto id = static_cast<int64_t>(p.nulls.size());
      p.codes.insert(p.codes.end(), tuple, tuple + columns_);
      p.nulls.push_back(nulls);
      p.hashes.push_back(hash);
      p.slots[s] = tag | static_cast<uint64_t>(id + 1);
      if (p.nulls.size() * 2 > p.slots.size()) grow(p);
      return id;
    }
    if ((slot >> 32 << 32) != tag) continue;
    const auto id = static_cast<int64_t>((slot & 0xffffffffULL) - 1);
    const int64_t* known = p.codes.data() + static_cast<size_t>(id) * columns_;
    if (p.nulls[static_cast<size_t>(id)] == nulls && std::equal(tuple, tuple + columns_, known)) return id;
  }
}

void TupleKeyMap::grow(Partition& p) const {
  if (p.slots.size() >= (uint64_t{1} << 33))
    throw Error(SqlState::program_limit_exceeded, "more than 2^32 groups of one key tuple partition in one GROUP BY");
  p.slots.assign(p.slots.size() * 2, 0);
  p.mask = p.slots.size() - 1;
  for (size_t id = 0; id < p.hashes.size(); ++id) {
    const uint64_t hash = p.hashes[id];
    uint64_t s = hash & p.mask;
    while (p.slots[s] != 0) s = (s + 1) & p.mask;
    p.slots[s] = (hash >> 32 << 32) | static_cast<uint64_t>(id + 1);
  }
}

void TupleKeyMap::codes_of(const int64_t* ids, size_t n, std::vector<std::vector<int64_t>>& codes,
                           std::vector<std::vector<uint8_t>>& valid, int threads) const {
  codes.assign(columns_, std::vector<int64_t>(n));
  valid.assign(columns_, std::vector<uint8_t>(n));
  std::vector<int64_t*> code_out(columns_);
  std::vector<uint8_t*> valid_out(columns_);
  for (size_t c = 0; c < columns_; ++c) {
    code_out[c] = codes[c].data();
    valid_out[c] = valid[c].data();
  }
  parallel_for(n >= 2 * kRowsPerThread ? threads : 1, n, [&](int, size_t begin, size_t end) {
    for (size_t g = begin; g < end; ++g) {
      // The groups come in the engine's order, not the ids': each tuple is
      // a cache miss, so the tuples of groups a few ahead are fetched meanwhile.
      if (g + kAhead < end) {
        const auto ahead = static_cast<uint64_t>(ids[g + kAhead]);
        const Partition& p = partitions_[ahead % kPartitions];
        const size_t local = ahead / kPartitions;
        if (local < p.nulls.size()) {
          const int64_t* t = p.codes.data() + local * columns_;
          __builtin_prefetch(t);
          __builtin_prefetch(t + columns_ - 1);
          __builtin_prefetch(p.nulls.data() + local);
        }
      }
      const auto id = static_cast<uint64_t>(ids[g]);
      const Partition& p = partitions_[id % kPartitions];
      const size_t local = id / kPartitions;
      if (local >= p.nulls.size()) throw Error(SqlState::internal_error, "a group of an unknown key tuple");
      const int64_t* t = p.codes.data() + local * columns_;
      const uint32_t nulls = p.nulls[local];
      for (size_t c = 0; c < columns_; ++c) {
        code_out[c][g] = t[c];
        valid_out[c][g] = static_cast<uint8_t>(((nulls >> c) & 1) == 0);
      }
    }
  });
}

}  // namespace tally::executor::cpu
