#pragma once
// Sorting rows by key columns, for ORDER BY and for windows (their input
// rows ordered by PARTITION BY, ascending with NULLs last as PostgreSQL
// sorts them, then ORDER BY, with the partition and peer-group boundaries
// found once for every window of the same PARTITION BY and ORDER BY).
//
// Each key column becomes an order-preserving unsigned image: integers and
// booleans as they are, floats by their bits, text by its rank among the
// column's distinct values (a dictionary-coded column ranks its codes, not
// its rows' strings); DESC inverts it and NULL takes the image below or
// above every value. The images are packed by their ranges into at most
// four 64-bit words, so that a sort by several columns compares a word or
// two held beside the row number instead of following each row into every
// column; the rows sort on every worker (a counting sort on the first word
// when its range is small). Keys of other kinds (numeric, interval, padded
// character, arrays) or wider than four words compare values.
#include <cstdint>
#include <vector>

#include "executor/value.hpp"

namespace tally::executor {

struct SortColumn {
  const Vector* values = nullptr;
  bool descending = false;
  bool nulls_first = false;
};

struct RowOrdering {
  std::vector<uint32_t> rows;        // sorted position -> input row
  // Only when sort_rows is asked for them:
  std::vector<uint32_t> partitions;  // first position of each partition, then the row count
  std::vector<uint32_t> groups;      // first position of each peer group, then the row count
  std::vector<uint32_t> group_of;    // sorted position -> its peer group
};

// Value a of `va` against value b of `vb` (same type) in a sort's order:
// -1, 0 or 1, DESC inverted, NULL placed by `nulls_first`; text bytewise.
int compare_sort_values(const Vector& va, size_t a, const Vector& vb, size_t b, bool descending, bool nulls_first);

// Rows [0, rows) ordered by `partition` then `order`. Ties keep input order,
// so the result does not depend on the sort's whims nor on `threads`, the
// workers the sort may use (executor/cpu/parallel.hpp). `boundaries` asks
// for the partitions and peer groups as well (windows).
RowOrdering sort_rows(size_t rows, const std::vector<SortColumn>& partition, const std::vector<SortColumn>& order,
                      int threads = 1, bool boundaries = true);

}  // namespace tally::executor
