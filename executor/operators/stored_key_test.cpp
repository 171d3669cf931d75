// The key test on stored values: see stored_key_test.hpp.
#include "executor/operators/stored_key_test.hpp"

#include <algorithm>
#include <memory>

#include "executor/cancel_point.hpp"
#include "executor/operators/key_chains.hpp"

namespace tally::executor {

namespace {

// Rows per block: a block's keys (8 bytes a row) and hashes stay in L1/L2.
constexpr size_t kBlockRows = 4096;

// Rows [from, from + n) (through `stored`) of an integer-like stored column
// into `out`'s ints and nulls, as vector_from_storage (storage_vectors.hpp) converts them.
template <class T>
void load_block(const storage::ColumnVector& column, const uint32_t* stored, size_t from, size_t n, Vector& out) {
  const T* v = column.values<T>();
  int64_t* ints = out.ints.data();
  if (stored != nullptr) {
    for (size_t i = 0; i < n; ++i) ints[i] = v[stored[from + i]];
  } else {
    for (size_t i = 0; i < n; ++i) ints[i] = v[from + i];
  }
  if (!column.has_nulls()) return;
  uint8_t* nulls = out.nulls.data();
  for (size_t i = 0; i < n; ++i) nulls[i] = column.validity[stored ? stored[from + i] : from + i] ? 0 : 1;
}

// The rows whose stored value has its bit set in the chains' exact bitmap
// (KeyChains::matching_rows_by_bits, without the values converted first).
template <class T>
void bits_on_stored(const KeyChains& chains, const storage::ColumnVector& column, const uint32_t* stored,
                    size_t count, std::vector<uint32_t>& keep) {
  const T* v = column.values<T>();
  const uint8_t* valid = column.has_nulls() ? column.validity.data() : nullptr;
  const uint64_t* bits = chains.bits.data();
  const auto min = static_cast<uint64_t>(chains.bits_min);
  // Every row is written (branch-free) and counted where it passes, into a
  // buffer not cleared first: a chunk's million rows would otherwise be
  // zeroed for the few a selective test keeps.
  const auto out = std::make_unique_for_overwrite<uint32_t[]>(count);
  size_t n = 0;
  for (size_t r = 0; r < count; ++r) {
    const size_t row = stored != nullptr ? stored[r] : r;
    uint64_t at = static_cast<uint64_t>(static_cast<int64_t>(v[row])) - min;
    at = at < chains.bits_span ? at : chains.bits_span;  // past the span: the zero word's bit
    uint64_t in = (bits[at >> 6] >> (at & 63)) & 1;
    if (valid != nullptr) in &= static_cast<uint64_t>(valid[row] != 0);
    out[n] = static_cast<uint32_t>(r);
    n += in;
  }
  keep.insert(keep.end(), out.get(), out.get() + n);
}

}  // namespace

const ColumnExpr* stored_integer_key(const Expr& key) {
  switch (key.type.id) {
    case TypeId::int2:
    case TypeId::int4:
    case TypeId::date:
    case TypeId::int8:
    case TypeId::timestamp:
    case TypeId::timestamptz: return dynamic_cast<const ColumnExpr*>(&key);
    default: return nullptr;
  }
}

void test_stored_keys(const decltype(KeyTest::test)& test, const KeyChains* chains,
                      const std::vector<const storage::ColumnVector*>& columns, const std::vector<SqlType>& types,
                      const uint32_t* stored, size_t count, std::vector<uint32_t>& keep) {
  if (chains != nullptr && !chains->bits.empty() && chains->bits_shift == 0 && columns.size() == 1) {
    switch (storage_width(types[0].id)) {
      case 2: bits_on_stored<int16_t>(*chains, *columns[0], stored, count, keep); return;
      case 4: bits_on_stored<int32_t>(*chains, *columns[0], stored, count, keep); return;
      default: bits_on_stored<int64_t>(*chains, *columns[0], stored, count, keep); return;
    }
  }
  std::vector<Vector> keys;
  for (size_t k = 0; k < columns.size(); ++k) {
    Vector v(types[k]);
    v.ints.resize(kBlockRows);
    if (columns[k]->has_nulls()) v.nulls.resize(kBlockRows);
    keys.push_back(std::move(v));
  }
  std::vector<uint32_t> passed;
  for (size_t from = 0; from < count; from += kBlockRows) {
    check_cancel_point();
    const size_t n = std::min(kBlockRows, count - from);
    for (size_t k = 0; k < columns.size(); ++k) {
      const storage::ColumnVector& column = *columns[k];
      keys[k].count = n;
      switch (storage_width(types[k].id)) {
        case 2: load_block<int16_t>(column, stored, from, n, keys[k]); break;
        case 4: load_block<int32_t>(column, stored, from, n, keys[k]); break;
        default: load_block<int64_t>(column, stored, from, n, keys[k]); break;
      }
    }
    passed.clear();
    test(keys, n, passed);
    for (const uint32_t r : passed) keep.push_back(static_cast<uint32_t>(from + r));
  }
}

}  // namespace tally::executor
