#pragma once
// The sort a window needs: its input rows ordered by PARTITION BY (ascending,
// NULLs last, as PostgreSQL sorts them) then ORDER BY, with the partition
// and peer-group boundaries found once for every window of the same
// PARTITION BY and ORDER BY. Keys that are all integers, booleans or floats
// sort as normalized 64-bit words, one per column (a counting sort on the
// first when its range is small, as integer partition keys are); any other
// key kind compares values.
#include <cstdint>
#include <vector>

#include "executor/value.hpp"

namespace tally::executor {

struct WindowSortColumn {
  const Vector* values = nullptr;
  bool descending = false;
  bool nulls_first = false;
};

struct WindowOrdering {
  std::vector<uint32_t> rows;        // sorted position -> input row
  std::vector<uint32_t> partitions;  // first position of each partition, then the row count
  std::vector<uint32_t> groups;      // first position of each peer group, then the row count
  std::vector<uint32_t> group_of;    // sorted position -> its peer group
};

// Value a of `va` against value b of `vb` (same type) in a window's order:
// -1, 0 or 1, DESC inverted, NULL placed by `nulls_first`; text bytewise.
int compare_window_values(const Vector& va, size_t a, const Vector& vb, size_t b, bool descending, bool nulls_first);

// Ties keep input order, so the result does not depend on the sort's whims
// nor on `threads`, the workers the sort may use (executor/cpu/parallel.hpp).
WindowOrdering sort_window_rows(size_t rows, const std::vector<WindowSortColumn>& partition,
                                const std::vector<WindowSortColumn>& order, int threads = 1);

}  // namespace tally::executor
