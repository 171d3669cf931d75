#pragma once
// Read-only runs of zeros shared by the whole process: the key column of a
// global aggregate (every row's key is 0) and its rows' group ids (all 0).
// Made once and kept, rather than a chunk's worth of zeros allocated and
// cleared per query or per slice: 8 MB for chunks of a million rows, most of
// the set-up of a check query over such a table.
#include <cstddef>
#include <cstdint>

namespace tally {

// At least n zeros, valid for the life of the process.
const int64_t* shared_zeros(size_t n);
const uint32_t* shared_zero_ids(size_t n);

}  // namespace tally
