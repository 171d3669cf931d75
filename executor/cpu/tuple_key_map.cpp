// TupleKeyMap: see tuple_key_map.hpp. Reading a chunk's tuples and hashing
// them is parallel (the part that touches every column of every row); the
// ids are given on one thread, in row order, so that they are deterministic.
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


uint64_t capacity_for(uint64_t groups) {
  uint64_t c = 1024;
  while (c < groups * 2) c <<= 1;  // at most half full
  return c;
}

}  // namespace

TupleKeyMap::TupleKeyMap(size_t columns, uint64_t expected_groups) : columns_(columns) {
  if (columns == 0 || columns > kMaxColumns)
    throw Error(SqlState::internal_error, "a key tuple of " + std::to_string(columns) + " columns");
  // The estimate sizes the table up to a bound: a high estimate must not
  // allocate gigabytes before a row arrived.
  const uint64_t bounded = std::min<uint64_t>(expected_groups, uint64_t{1} << 24);
  const uint64_t c = capacity_for(bounded);
  slots_.assign(c, 0);
  mask_ = c - 1;
  // Reserved, not touched: the expected tuples' values are appended without
  // the copies of geometric growth.
  codes_.reserve(bounded * columns_);
  nulls_.reserve(bounded);
  hashes_.reserve(bounded);
}

void TupleKeyMap::assign(const ChunkInput& chunk, int64_t* out, int threads) {
  const size_t n = chunk.rows;
  if (chunk.key_columns.size() != columns_)
    throw Error(SqlState::internal_error, "a chunk with " + std::to_string(chunk.key_columns.size()) +
                                              " key columns for a key tuple of " + std::to_string(columns_));
  rows_.resize(n * columns_);
  row_nulls_.assign(n, 0);
  row_hashes_.resize(n);
  const int parts = n >= 2 * kRowsPerThread ? threads : 1;
  parallel_for(parts, n, [&](int, size_t begin, size_t end) {
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
    for (size_t r = begin; r < end; ++r) {
      uint64_t h = row_nulls_[r];
      const int64_t* t = rows_.data() + r * columns_;
      for (size_t c = 0; c < columns_; ++c) h = hll_hash(h ^ static_cast<uint64_t>(t[c])) + c;
      row_hashes_[r] = hll_hash(h);
    }
  });
  // Each row's probe starts at a random slot of a table far larger than
  // the cache: the slots of rows a few ahead are fetched meanwhile (their
  // hashes are known), so the misses overlap instead of adding up.
  for (size_t r = 0; r < n; ++r) {
    if (r + kAhead < n) __builtin_prefetch(slots_.data() + (row_hashes_[r + kAhead] & mask_));
    out[r] = find_or_insert(rows_.data() + r * columns_, row_nulls_[r], row_hashes_[r]);
  }
}

int64_t TupleKeyMap::find_or_insert(const int64_t* tuple, uint32_t nulls, uint64_t hash) {
  const uint64_t tag = hash >> 32 << 32;
  for (uint64_t s = hash & mask_;; s = (s + 1) & mask_) {
    const uint64_t slot = slots_[s];
    if (slot == 0) {
      const auto id = static_cast<int64_t>(nulls_.size());
      codes_.insert(codes_.end(), tuple, tuple + columns_);
      nulls_.push_back(nulls);
      hashes_.push_back(hash);
      slots_[s] = tag | static_cast<uint64_t>(id + 1);
      if (nulls_.size() * 2 > slots_.size()) grow();
      return id;
    }
    if ((slot >> 32 << 32) != tag) continue;
    const auto id = static_cast<int64_t>((slot & 0xffffffffULL) - 1);
    const int64_t* known = codes_.data() + static_cast<size_t>(id) * columns_;
    if (nulls_[static_cast<size_t>(id)] == nulls && std::equal(tuple, tuple + columns_, known)) return id;
  }
}

void TupleKeyMap::grow() {
  if (slots_.size() >= (uint64_t{1} << 33))
    throw Error(SqlState::program_limit_exceeded, "more than 2^32 groups in one GROUP BY");
  slots_.assign(slots_.size() * 2, 0);
  mask_ = slots_.size() - 1;
  for (size_t id = 0; id < hashes_.size(); ++id) {
    const uint64_t hash = hashes_[id];
    uint64_t s = hash & mask_;
    while (slots_[s] != 0) s = (s + 1) & mask_;
    slots_[s] = (hash >> 32 << 32) | static_cast<uint64_t>(id + 1);
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
  const size_t known = nulls_.size();
  parallel_for(n >= 2 * kRowsPerThread ? threads : 1, n, [&](int, size_t begin, size_t end) {
    for (size_t g = begin; g < end; ++g) {
      // The groups come in the engine's order, not the ids': each tuple is
      // a cache miss, so the tuples of groups a few ahead are fetched meanwhile.
      if (g + kAhead < end) {
        const auto ahead = static_cast<size_t>(ids[g + kAhead]);
        if (ahead < known) {
          const int64_t* t = codes_.data() + ahead * columns_;
          __builtin_prefetch(t);
          __builtin_prefetch(t + columns_ - 1);
          __builtin_prefetch(nulls_.data() + ahead);
        }
      }
      const auto id = static_cast<size_t>(ids[g]);
      if (id >= known) throw Error(SqlState::internal_error, "a group of an unknown key tuple");
      const int64_t* t = codes_.data() + id * columns_;
      const uint32_t nulls = nulls_[id];
      for (size_t c = 0; c < columns_; ++c) {
        code_out[c][g] = t[c];
        valid_out[c][g] = static_cast<uint8_t>(((nulls >> c) & 1) == 0);
      }
    }
  });
}

}  // namespace tally::executor::cpu
