#pragma once
// A stored column built from plain values, for tests that assemble in-memory
// tables chunk by chunk: `validity` holds 1 per valid row (0 = NULL); a column
// without a 0 gets no validity bitmap, as storage keeps NOT NULL data.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/sql_type.hpp"
#include "storage/column_vector.hpp"

namespace tally::executor::testing {

template <class T>
storage::ColumnVector column(TypeId id, const std::vector<T>& values, const std::vector<uint8_t>& validity) {
  storage::ColumnVector c;
  c.type = SqlType{id};
  c.rows = values.size();
  c.data.resize(values.size() * sizeof(T));
  std::memcpy(c.data.data(), values.data(), c.data.size());
  if (std::find(validity.begin(), validity.end(), 0) != validity.end()) c.validity = validity;
  return c;
}

}  // namespace tally::executor::testing
