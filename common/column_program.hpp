#pragma once
// A column program: a small postfix bytecode over one chunk's stored columns
// (ChunkInput::program_columns), evaluated one row at a time. It carries a
// WHERE clause (AggregationSpec::row_filter) or an aggregate's input
// expression (AggregationSpec::value_programs) to where the columns are, so
// that an engine computes them itself: the GPU engine on the device over its
// resident columns, the CPU engine on the host. The evaluation code
// (common/program_eval.hpp) is written once, as inline functions the host
// compiler, nvcc and NVRTC build, so that the CPU tests exercise the very
// code the GPU runs.
//
// Values on the stack are scaled integers (int128: integers, dates, booleans,
// numerics at a scale the compiler tracks statically, as PostgreSQL's
// dscale) or doubles, each with a NULL flag. Arithmetic that PostgreSQL
// would reject (an int4 result outside int4, a float overflow) or that
// leaves what int128 holds sets the error flag: the planner then runs the
// statement on its exact host path, which answers as PostgreSQL does.
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "common/column_width.hpp"
#include "common/program_eval.hpp"
#include "common/text_match.hpp"

namespace tally {

// The step that computes extract(unit from x) of a whole-number unit (lower
// case) over a date's days (`micros` 0) or a timestamp's microseconds (1):
// year_of, or date_field with its DateField; none for another unit.
inline std::optional<ProgramStep> extract_step(std::string_view unit, int32_t micros) {
  if (unit == "year") return ProgramStep{ProgramOp::year_of, micros, 0, 0};
  const std::pair<std::string_view, DateField> fields[] = {
      {"month", DateField::month}, {"day", DateField::day}, {"hour", DateField::hour},  {"minute", DateField::minute},
      {"quarter", DateField::quarter}, {"dow", DateField::dow}, {"doy", DateField::doy}};
  for (const auto& [name, field] : fields) {
    if (unit == name) return ProgramStep{ProgramOp::date_field, static_cast<int32_t>(field) * 2 + micros, 0, 0};
  }
  return std::nullopt;
}

// What a program yields: a boolean (a row filter: the row passes when it is
// true, not NULL), an int64 (integer, or a numeric scaled to `scale`), or a double.
enum class ProgramResult : uint8_t { boolean, int64, float64 };

struct ColumnProgram {
  std::vector<ProgramStep> steps;
  ProgramResult result = ProgramResult::boolean;
  int32_t scale = 0;  // int64 results: the numeric scale of the value
  bool empty() const { return steps.empty(); }
};

// Bytes of a lookup column's data (what a device copy carries).
inline uint64_t lookup_column_bytes(const ProgramColumn& c) {
  if (c.hashed) return c.size * sizeof(LookupSlot);
  const bool narrow = c.width == static_cast<uint8_t>(ColumnWidth::int32) ||
                      c.width == static_cast<uint8_t>(ColumnWidth::float32);
  return c.size * (narrow ? 4 : 8);
}

// A lookup column as an engine receives it (AggregationSpec::lookup_columns):
// its array by key, or, for a joined relation's build rows by key whose keys
// ascend (so each has one row), those keys, from which the engine makes the
// array where it runs the programs: the GPU scatters them in device memory,
// so that neither the host makes nor the bus carries an array the size of
// the key range (sixty million orders keys for a few million orders).
//
// Or a text condition's verdict by dictionary code (`text`: int32, 1 = the
// entry matches, column.size entries), which the engine makes where it
// runs the programs: the GPU matches the dictionary's bytes it keeps.
struct LookupColumn {
  ProgramColumn column;                // data null: made from `keys` or `text`
  const int64_t* keys = nullptr;       // one per build row, ascending (NULL ones aside)
  const uint8_t* key_nulls = nullptr;  // 1 = a NULL key (no entry); nullptr = none
  size_t key_count = 0;
  std::shared_ptr<const TextVerdicts> text;
  bool from_keys() const { return column.data == nullptr && keys != nullptr; }
  bool from_text() const { return column.data == nullptr && text != nullptr; }
};

// The verdicts of `text` by code, made on the host (on `threads` threads).
void match_text_entries(const TextVerdicts& text, int32_t* verdicts, int threads);

// The array by key of build rows that `keys` make: entry k holds the row of
// key base + k (int32), present[k] whether one has it. False where a key
// repeats (each fact row could join several rows).
inline bool scatter_lookup_keys(const LookupColumn& c, int32_t* rows, uint8_t* present) {
  for (uint64_t k = 0; k < c.column.size; ++k) present[k] = 0;
  for (size_t r = 0; r < c.key_count; ++r) {
    if (c.key_nulls != nullptr && c.key_nulls[r] != 0) continue;
    const uint64_t at = static_cast<uint64_t>(c.keys[r]) - static_cast<uint64_t>(c.column.base);
    if (at >= c.column.size) continue;
    if (present[at] != 0) return false;
    rows[at] = static_cast<int32_t>(r);
    present[at] = 1;
  }
  return true;
}

}  // namespace tally
