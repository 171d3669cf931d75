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
#include <unordered_map>
#include <vector>

#include "common/sql_type.hpp"

namespace tally::storage {

// Code -> string for one text column. Codes are dense, assigned in first-seen
// order and never change, so codes from different chunks compare equal.
class StringDictionary {
 public:
  int32_t size() const { return static_cast<int32_t>(values_.size()); }
  std::string_view at(int32_t code) const { return values_[static_cast<size_t>(code)]; }
  // Returns the code of value, adding it if new.
  int32_t intern(std::string_view value) {
    auto it = index_.find(value);
    if (it != index_.end()) return it->second;
    const auto code = static_cast<int32_t>(values_.size());
    values_.emplace_back(value);
    index_.emplace(values_.back(), code);
    return code;
  }
  // The code of value, or -1 when absent.
  int32_t find(std::string_view value) const {
    auto it = index_.find(value);
    return it == index_.end() ? -1 : it->second;
  }
  const std::vector<std::string>& values() const { return values_; }

 private:
  // Heterogeneous lookup: intern/find take a string_view without allocating
  // (COPY interns every text value it loads).
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> values_;
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> index_;
};

struct ColumnVector {
  SqlType type;
  size_t rows = 0;
  // rows * storage_width(type.id) bytes, native byte order.
  std::vector<uint8_t> data;
  // One byte per row, 1 = non-NULL. Empty means the column has no NULLs.
  std::vector<uint8_t> validity;
  // Text kinds only: the table column's dictionary (codes in data are int32).
  std::shared_ptr<const StringDictionary> dictionary;

  template <class T>
  const T* values() const { return reinterpret_cast<const T*>(data.data()); }
  template <class T>
  T* mutable_values() { return reinterpret_cast<T*>(data.data()); }
  bool has_nulls() const { return !validity.empty(); }
  bool is_null(size_t row) const { return !validity.empty() && validity[row] == 0; }
};

// One chunk's columns (all of the table's, or the projection a scan asked for).
struct ChunkBatch {
  size_t rows = 0;
  std::vector<ColumnVector> columns;
};

}  // namespace tally::storage
