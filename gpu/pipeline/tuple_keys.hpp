#pragma once
// A key tuple on the device (AggregationSpec::key_tuple): key columns whose
// ranges do not pack into 63 bits. Each row's tuple of column values (a
// NULL its own value per column) is hashed and looked up in an open-
// addressing table in device memory whose slots hold tuple ids; an id's
// column values are kept once, per column, and compared column by column,
// so the grouping is exact. The rows' ids (int64, dense from 0) are the key
// the aggregation variants run over, and at the end the groups' ids are
// turned back into their column values on the device and copied back once.
// Host-only header: builds without CUDA (gpu_stub.cpp throws).
#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/group_by.hpp"

namespace tally::gpu {

class TupleKeyTable {
 public:
  // `columns` key columns (at most kMaxDeviceKeyParts); `expected_groups`
  // sizes the first table (0 = unknown; it grows with the tuples).
  TupleKeyTable(size_t columns, uint64_t expected_groups);
  ~TupleKeyTable();
  TupleKeyTable(const TupleKeyTable&) = delete;
  TupleKeyTable& operator=(const TupleKeyTable&) = delete;

  // Enqueues on `stream` the lookup (and insertion) of `rows` rows of the
  // device columns columns[0, columns) (widths[i]: 4 or 8 bytes per value)
  // and returns the device array of their tuple ids. As KeyPacker::pack:
  // one array serves every call, read on `stream` before the next call.
  // Before the rows may outgrow the table, it waits for `stream` to learn
  // the tuple count and grows the table in place.
  const int64_t* assign(const ColumnPointer* columns, const uint32_t* widths, int64_t rows, StreamHandle stream);

  // Per key column, the values and validity (0 = NULL) of the tuples
  // ids[0, n) (host memory): gathered on the device behind the work on
  // `stream`, copied back once; waits for `stream`. The ids are read where
  // `on_device` says they also are in device memory (at most two regions,
  // together n ids; GroupByResult::device_keys), else copied up. A column c
  // with bit c of narrow_mask set comes back in values32[c] (its values cut
  // to 32 bits: text codes), the others in values[c]; the unused one is left
  // empty. Arrays already of n entries (size_values) are written as they are.
  void values_of(const int64_t* ids, size_t n, const std::vector<GroupByResult::DeviceKeys>& on_device,
                 uint32_t narrow_mask, std::vector<std::vector<int64_t>>& values,
                 std::vector<std::vector<int32_t>>& values32, std::vector<std::vector<uint8_t>>& valid,
                 StreamHandle stream);

  // Sizes values (values32 for a column with its narrow_mask bit set) for
  // `columns` key columns of n groups, zeroed, each array on a thread of its
  // own: values_of() writes into arrays of its group count as they are. A
  // caller that knows the count ahead (an estimate) has these gigabytes'
  // pages faulted in while the device still works.
  static void size_values(size_t columns, size_t n, uint32_t narrow_mask, std::vector<std::vector<int64_t>>& values,
                          std::vector<std::vector<int32_t>>& values32);

  // Distinct tuples as of the last wait (EXPLAIN ANALYZE).
  uint64_t tuples() const;
  // Times the table grew.
  int growths() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tally::gpu
