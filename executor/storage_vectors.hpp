#pragma once
// Stored chunk columns (storage/column_vector.hpp: narrow integers, scaled
// numerics, dictionary codes) as Vectors of their SQL type: every row, or
// the rows a filter or an engine's selection kept.
#include <cstdint>
#include <vector>

#include "executor/value.hpp"
#include "storage/column_vector.hpp"

namespace tally::executor {

// Appends a stored chunk column to `out` (of the column's type): one
// conversion, no intermediate Vector.
void append_from_storage(Vector& out, const storage::ColumnVector& column, SqlType type);
Vector vector_from_storage(const storage::ColumnVector& column, SqlType type);
// Rows `rows` of a stored column, gathered and converted in one pass over
// them (not copied as stored first, then converted).
Vector vector_from_stored_rows(const storage::ColumnVector& column, const std::vector<uint32_t>& rows, SqlType type);

}  // namespace tally::executor
