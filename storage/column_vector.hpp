#pragma once
// The in-memory form of one column of one chunk: what storage/ reads, what the
// CPU engine computes on and what gpu/ copies to the device. Fixed-width values
// are stored natively (see common/sql_type.hpp: storage_width); text kinds hold
// int32 codes into a per-column dictionary shared by every chunk of the table,
// so a text GROUP BY key is an integer key.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/sql_type.hpp"
#include "storage/column_bytes.hpp"
#include "storage/string_dictionary.hpp"

namespace tally::storage {

struct ColumnVector {
  SqlType type;
  size_t rows = 0;
  // rows * storage_width(type.id) bytes, native byte order.
  ColumnBytes data;
  // One byte per row, 1 = non-NULL. Empty means the column has no NULLs.
  ColumnBytes validity;
  // Text kinds only: the table column's dictionary (codes in data are int32).
  std::shared_ptr<const StringDictionary> dictionary;

  template <class T>
  const T* values() const { return reinterpret_cast<const T*>(data.data()); }
  template <class T>
  T* mutable_values() { return reinterpret_cast<T*>(data.data()); }
  bool has_nulls() const { return !validity.empty(); }
  // Shares the bytes read-only from here on: copies of the vector cost nothing.
  void freeze() {
    data.freeze();
    validity.freeze();
  }
  bool is_null(size_t row) const { return !validity.empty() && validity[row] == 0; }
};

// One chunk's columns (all of the table's, or the projection a scan asked for).
struct ChunkBatch {
  size_t rows = 0;
  std::vector<ColumnVector> columns;
};

}  // namespace tally::storage
