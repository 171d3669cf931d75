#pragma once
// The widths an engine takes a column at (common/aggregate_engine.hpp,
// common/column_program.hpp).
#include <cstdint>

namespace tally {

enum class ColumnWidth : uint8_t { int32, int64, float32, float64 };

}  // namespace tally
