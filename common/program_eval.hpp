#pragma once
// How one row of a column program (common/column_program.hpp) is evaluated:
// the steps, the stack's values and the arithmetic of each step, written
// once as inline functions that the host compiler, nvcc and NVRTC all build.
// The CPU engine and the GPU's interpreting kernel run a program step by step
// (run_program_row, run_step's switch); a compiled kernel
// (gpu/pipeline/program_source.hpp) calls op_step with each step's
// operation as a template argument and its operands as constants, so that
// the same code specializes to straight-line code over registers. One
// definition of each step keeps the three evaluations identical.
//
// Self-contained on purpose: NVRTC compiles it with no standard library
// (gpu/pipeline/program_compiler.cu gives it <cstdint>'s names).
#include <cstddef>
#include <cstdint>

#include "common/column_width.hpp"
#include "common/host_device.hpp"

namespace tally {

enum class ProgramOp : uint8_t {
  load,         // push column `arg` of program_columns (int32/int64 as int, float32/float64 as float)
  const_int,    // push `value` (a scaled integer)
  const_float,  // push `fvalue`
  const_null,   // push NULL
  add_int, sub_int, mul_int, neg_int,  // int128, NULL if either is NULL
  scale_int,    // multiply by 10^arg (a numeric to a larger scale; an integer to numeric)
  check_range,  // error unless the value fits a signed int of `arg` bits (int2/int4/int8 results)
  add_float, sub_float, mul_float, neg_float,  // error on a finite -> infinite result, as float8pl
  int_to_float,  // an integer (scale 0) to double, as PostgreSQL's int -> float8 cast
  eq_int, ne_int, lt_int, le_int, gt_int, ge_int,
  eq_float, ne_float, lt_float, le_float, gt_float, ge_float,  // PostgreSQL order: NaN greatest, NaN = NaN
  and_, or_, not_,      // SQL three-valued logic
  is_null, is_not_null,
  // Short circuits, before an AND's (OR's) right operand: when the value on
  // top is false (true), which decides the AND (OR), the next `arg` steps
  // (the right operand and the and_/or_) are skipped and it stays on top.
  // The rows a selective first condition drops cost one comparison.
  skip_if_false, skip_if_true,
  // x IN (constants): replaces x on top with whether it is one of the `arg`
  // integers held in the `value` of the next `arg` steps (data, ascending,
  // never run as steps), NULL where x is NULL. One search per row, where an
  // OR of comparisons costs four steps per constant. The compiler emits it
  // for a list of non-NULL integer constants (a list with a NULL is the OR).
  in_list,
  // A joined relation's value by the integer on top (its join key): the
  // value replaces the key, read at row (key - base) of lookup column `arg`
  // (a ProgramColumn with `size` rows, one per key of [base, base + size)).
  // NULL where the key is NULL, outside that range, or has no row there. A
  // lookup column without data is a presence test: true where the key has
  // a row, NULL where it has none (an inner join's condition).
  lookup,
  // CASE WHEN c THEN a ELSE b: pops b, a and c (c deepest) and pushes a
  // where c is true (not NULL), else b. Both values are computed for every
  // row: an error flag raised by the one not chosen only sends the
  // statement to its exact host path, which computes as PostgreSQL does.
  choose,
  // extract(year from x): the calendar year of the value on top, a date's
  // days (arg 0) or a timestamp's microseconds (arg 1) since 2000-01-01, as
  // PostgreSQL counts years (no year 0: 1 BC is -1). An infinite value
  // raises the error flag (the host path answers it).
  year_of,
  // extract(field from x) for the other whole-number fields (DateField, in
  // arg / 2; the unit, as year_of's, in arg % 2), as PostgreSQL computes
  // them. An infinite value raises the error flag.
  date_field,
  // date_trunc to `value` microseconds (a second, minute, hour or day) of
  // a timestamp: the largest multiple of it not above the value. An
  // infinite value raises the error flag (PostgreSQL keeps it infinite).
  floor_to,
};

// How a step changes the depth of the stack, as op_step moves its top:
// pushes +1, binary operators -1, choose -2, the others 0 (what a compiled
// kernel's writer tracks, gpu/pipeline/program_source.cpp).
constexpr int step_stack_change(ProgramOp op) {
  switch (op) {
    case ProgramOp::load: case ProgramOp::const_int: case ProgramOp::const_float: case ProgramOp::const_null:
      return 1;
    case ProgramOp::add_int: case ProgramOp::sub_int: case ProgramOp::mul_int:
    case ProgramOp::add_float: case ProgramOp::sub_float: case ProgramOp::mul_float:
    case ProgramOp::eq_int: case ProgramOp::ne_int: case ProgramOp::lt_int: case ProgramOp::le_int:
    case ProgramOp::gt_int: case ProgramOp::ge_int:
    case ProgramOp::eq_float: case ProgramOp::ne_float: case ProgramOp::lt_float: case ProgramOp::le_float:
    case ProgramOp::gt_float: case ProgramOp::ge_float:
    case ProgramOp::and_: case ProgramOp::or_:
      return -1;
    case ProgramOp::choose: return -2;
    default: return 0;
  }
}

// The fields ProgramOp::date_field computes.
enum class DateField : int32_t { month, day, hour, minute, quarter, dow, doy };

struct ProgramStep {
  ProgramOp op = ProgramOp::const_null;
  int32_t arg = 0;
  int64_t value = 0;
  double fvalue = 0;
};

// Deepest stack a program may use (the compiler refuses deeper ones): a
// fixed array per row, in registers or local memory on the device.
constexpr int kProgramStackDepth = 16;

// A column a program reads, as the evaluator sees it (host or device memory).
// A lookup column (ProgramOp::lookup) is indexed by a key, not by the row:
// entry k holds the value of key base + k, for `size` keys. A hashed one
// (keys too sparse for an array by key: a composite key packed into one
// integer, wide ids) holds `size` LookupSlots (a power of two), found by
// hash_lookup_key and linear probing.
struct ProgramColumn {
  const void* data = nullptr;
  const uint8_t* validity = nullptr;  // 1 = valid; nullptr = no NULLs
  uint8_t width = 0;                  // ColumnWidth
  int64_t base = 0;
  uint64_t size = 0;
  bool hashed = false;
};

// One entry of a hashed lookup column: a key and its build row (-1: empty).
struct LookupSlot {
  int64_t key;
  int64_t row;
};

// The first slot of `key` in a hashed lookup column of `size` slots.
TALLY_HD uint64_t hash_lookup_key(int64_t key, uint64_t size) {
  uint64_t h = static_cast<uint64_t>(key);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h & (size - 1);
}

// What a compiled kernel fixes of a column it reads, as one template
// argument: its width, and for a lookup column whether it is hashed and
// whether it is a presence test (no data). Its validity stays a run-time
// test (chunks differ). The interpreters read all of it from the column.
constexpr int kShapeAtRunTime = -1;
constexpr int kShapeHashed = 4;
constexpr int kShapePresence = 8;

TALLY_HD constexpr int column_shape(const ProgramColumn& c) {
  return static_cast<int>(c.width) | (c.hashed ? kShapeHashed : 0) | (c.data == nullptr ? kShapePresence : 0);
}

TALLY_HD constexpr ColumnWidth shape_width(int shape) { return static_cast<ColumnWidth>(shape & 3); }

struct ProgramSlot {
  __int128 i;
  double f;
  bool null;
};

// Error flags a program raises (ORed over the rows).
constexpr uint32_t kProgramOverflow = 1;

namespace program_detail {

TALLY_HD __int128 pow10_i128(int32_t k) {
  __int128 p = 1;
  for (int32_t j = 0; j < k; ++j) p *= 10;
  return p;
}

// Magnitudes past which a product or sum could leave int128: such values
// never come from 18-digit columns, and flagging them keeps the arithmetic exact.
TALLY_HD bool big(__int128 v, int bits) {
  const __int128 limit = static_cast<__int128>(1) << bits;
  return v >= limit || v <= -limit;
}

TALLY_HD bool float_less(double a, double b) {
  // PostgreSQL's float order: NaN is greater than every other value, NaNs equal.
  const bool an = a != a, bn = b != b;
  if (an || bn) return !an && bn;
  return a < b;
}

TALLY_HD bool float_equal(double a, double b) {
  const bool an = a != a, bn = b != b;
  if (an || bn) return an && bn;
  return a == b;
}

TALLY_HD bool is_inf(double v) { return v - v != v - v && v == v; }

// Whether x is among the `count` ascending values of steps[0, count) (an
// in_list step's data).
TALLY_HD bool in_sorted_steps(const ProgramStep* values, int32_t count, __int128 x) {
  int32_t lo = 0, hi = count;
  while (lo < hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (values[mid].value < x) lo = mid + 1;
    else hi = mid;
  }
  return lo < count && values[lo].value == x;
}

// The proleptic Gregorian date of `days` since 2000-01-01 (H. Hinnant's
// civil_from_days): year (with a year 0), month 1-12, day 1-31.
TALLY_HD void civil_of_days(int64_t days, int64_t& year, int64_t& month, int64_t& day) {
  const int64_t z = days + 10957 + 719468;  // since 0000-03-01
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  day = doy - (153 * mp + 2) / 5 + 1;
  month = mp < 10 ? mp + 3 : mp - 9;
  year = yoe + era * 400 + (month <= 2 ? 1 : 0);
}

// Days since 2000-01-01 of a proleptic Gregorian date (days_from_civil).
TALLY_HD int64_t days_of_civil(int64_t year, int64_t month, int64_t day) {
  year -= month <= 2 ? 1 : 0;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t yoe = year - era * 400;
  const int64_t doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468 - 10957;
}

// The calendar year of `days` since 2000-01-01, PostgreSQL's: year 0 is
// 1 BC, shown -1.
TALLY_HD int64_t year_of_days(int64_t days) {
  int64_t year = 0, month = 0, day = 0;
  civil_of_days(days, year, month, day);
  return year <= 0 ? year - 1 : year;
}

constexpr int64_t kMicrosPerDay = 86400000000LL;

TALLY_HD int64_t floor_div(int64_t x, int64_t d) { return x >= 0 ? x / d : -((-x - 1) / d) - 1; }

// Whether a date's days (unit 0) or a timestamp's microseconds (unit 1) is
// one of the infinities.
TALLY_HD bool infinite_time(int32_t unit, __int128 v) {
  return unit == 0 ? (v == INT32_MIN || v == INT32_MAX) : (v == INT64_MIN || v == INT64_MAX);
}

// ProgramOp::year_of on one value (arg: 0 days, 1 microseconds).
TALLY_HD void year_of_slot(int32_t arg, ProgramSlot& slot, uint32_t* error) {
  if (slot.null) return;
  if (infinite_time(arg, slot.i)) {
    *error |= kProgramOverflow;
    return;
  }
  const int64_t x = static_cast<int64_t>(slot.i);
  slot.i = year_of_days(arg == 0 ? x : floor_div(x, kMicrosPerDay));
}

// ProgramOp::date_field on one value.
TALLY_HD void date_field_slot(int32_t arg, ProgramSlot& slot, uint32_t* error) {
  if (slot.null) return;
  const int32_t unit = arg % 2;
  if (infinite_time(unit, slot.i)) {
    *error |= kProgramOverflow;
    return;
  }
  const int64_t x = static_cast<int64_t>(slot.i);
  const int64_t days = unit == 0 ? x : floor_div(x, kMicrosPerDay);
  const int64_t micros_of_day = unit == 0 ? 0 : x - days * kMicrosPerDay;
  int64_t year = 0, month = 0, day = 0;
  civil_of_days(days, year, month, day);
  int64_t field = 0;
  switch (static_cast<DateField>(arg / 2)) {
    case DateField::month: field = month; break;
    case DateField::day: field = day; break;
    case DateField::hour: field = micros_of_day / 3600000000LL; break;
    case DateField::minute: field = micros_of_day / 60000000LL % 60; break;
    case DateField::quarter: field = (month - 1) / 3 + 1; break;
    case DateField::dow: field = (days % 7 + 7 + 6) % 7; break;  // 2000-01-01 was a Saturday (6)
    case DateField::doy: field = days - days_of_civil(year, 1, 1) + 1; break;
  }
  slot.i = field;
}

// ProgramOp::floor_to on one value: `unit` microseconds.
TALLY_HD void floor_to_slot(int64_t unit, ProgramSlot& slot, uint32_t* error) {
  if (slot.null) return;
  if (infinite_time(1, slot.i)) {
    *error |= kProgramOverflow;
    return;
  }
  slot.i = floor_div(static_cast<int64_t>(slot.i), unit) * unit;
}

// Entry `at` of column c, NULL where its validity says so; its width read
// from c, or fixed by Shape (a compiled kernel's column_shape).
template <int Shape = kShapeAtRunTime>
TALLY_HD ProgramSlot column_value(const ProgramColumn& c, size_t at) {
  ProgramSlot v{0, 0, c.validity != nullptr && c.validity[at] == 0};
  const auto width = Shape == kShapeAtRunTime ? static_cast<ColumnWidth>(c.width) : shape_width(Shape);
  switch (width) {
    case ColumnWidth::int32: v.i = static_cast<const int32_t*>(c.data)[at]; break;
    case ColumnWidth::int64: v.i = static_cast<const int64_t*>(c.data)[at]; break;
    case ColumnWidth::float32: v.f = static_cast<const float*>(c.data)[at]; break;
    case ColumnWidth::float64: v.f = static_cast<const double*>(c.data)[at]; break;
  }
  return v;
}

// The lookup step's value of `key` in lookup column c (its form read from
// c, or fixed by Shape).
template <int Shape = kShapeAtRunTime>
TALLY_HD ProgramSlot lookup_value(const ProgramColumn& c, const ProgramSlot& key) {
  const bool hashed = Shape == kShapeAtRunTime ? c.hashed : (Shape & kShapeHashed) != 0;
  if (hashed) {
    // The build row of the key; NULL where none has it (or it is NULL, or
    // outside int64, which no stored key is).
    if (key.null || key.i != static_cast<int64_t>(key.i)) return ProgramSlot{0, 0, true};
    const auto k = static_cast<int64_t>(key.i);
    const auto* slots = static_cast<const LookupSlot*>(c.data);
    for (uint64_t at = hash_lookup_key(k, c.size);; at = (at + 1) & (c.size - 1)) {
      if (slots[at].row < 0) return ProgramSlot{0, 0, true};
      if (slots[at].key == k) return ProgramSlot{slots[at].row, 0, false};
    }
  }
  if (key.null || key.i < c.base || key.i - c.base >= static_cast<__int128>(c.size)) return ProgramSlot{0, 0, true};
  const size_t at = static_cast<size_t>(key.i - c.base);
  const bool presence = Shape == kShapeAtRunTime ? c.data == nullptr : (Shape & kShapePresence) != 0;
  if (presence) return ProgramSlot{1, 0, c.validity != nullptr && c.validity[at] == 0};
  return column_value<Shape>(c, at);
}

}  // namespace program_detail

// Whether a row filter passes the row: true, not NULL.
TALLY_HD bool program_passes(const ProgramSlot& v) { return !v.null && v.i != 0; }

// Runs one step of operation Op (its arg, value and fvalue) over `stack`
// (its top at index `top`) for row `row` of `columns`, ORing error flags
// into `*error`; `next` is the step after it (an in_list step's data).
// Returns how many of the following steps to pass over: a short circuit
// taken, an in_list's data; else 0. A template over the operation, so that
// a compiled kernel instantiates only the code of the steps it has, and
// over the shape of the column a load or lookup reads (column_shape), so
// that it holds one width's read, not a switch over all four: about half
// of NVRTC's time, where a statement reads several columns.
template <ProgramOp Op, int Shape = kShapeAtRunTime>
TALLY_HD int op_step(int32_t arg, int64_t value, double fvalue, const ProgramStep* next, ProgramSlot* stack, int& top,
                     const ProgramColumn* columns, size_t row, uint32_t* error) {
  using namespace program_detail;
  if constexpr (Op == ProgramOp::load) {
    stack[++top] = column_value<Shape>(columns[arg], row);
  } else if constexpr (Op == ProgramOp::lookup) {
    stack[top] = lookup_value<Shape>(columns[arg], stack[top]);
  } else if constexpr (Op == ProgramOp::const_int) {
    stack[++top] = ProgramSlot{value, 0, false};
  } else if constexpr (Op == ProgramOp::const_float) {
    stack[++top] = ProgramSlot{0, fvalue, false};
  } else if constexpr (Op == ProgramOp::const_null) {
    stack[++top] = ProgramSlot{0, 0, true};
  } else if constexpr (Op == ProgramOp::neg_int) {
    stack[top].i = -stack[top].i;
  } else if constexpr (Op == ProgramOp::neg_float) {
    stack[top].f = -stack[top].f;
  } else if constexpr (Op == ProgramOp::scale_int) {
    if (!stack[top].null) {
      if (big(stack[top].i, 80)) *error |= kProgramOverflow;
      else stack[top].i *= pow10_i128(arg);
    }
  } else if constexpr (Op == ProgramOp::check_range) {
    if (!stack[top].null && big(stack[top].i + (stack[top].i < 0 ? 1 : 0), arg - 1)) *error |= kProgramOverflow;
  } else if constexpr (Op == ProgramOp::year_of) {
    year_of_slot(arg, stack[top], error);
  } else if constexpr (Op == ProgramOp::date_field) {
    date_field_slot(arg, stack[top], error);
  } else if constexpr (Op == ProgramOp::floor_to) {
    floor_to_slot(value, stack[top], error);
  } else if constexpr (Op == ProgramOp::int_to_float) {
    stack[top].f = static_cast<double>(static_cast<int64_t>(stack[top].i));
  } else if constexpr (Op == ProgramOp::not_) {
    stack[top].i = stack[top].i == 0 ? 1 : 0;
  } else if constexpr (Op == ProgramOp::skip_if_false || Op == ProgramOp::skip_if_true) {
    if (!stack[top].null && (stack[top].i != 0) == (Op == ProgramOp::skip_if_true)) return arg;
  } else if constexpr (Op == ProgramOp::in_list) {
    if (!stack[top].null) stack[top].i = in_sorted_steps(next, arg, stack[top].i) ? 1 : 0;
    return arg;
  } else if constexpr (Op == ProgramOp::is_null || Op == ProgramOp::is_not_null) {
    stack[top].i = (stack[top].null == (Op == ProgramOp::is_null)) ? 1 : 0;
    stack[top].null = false;
  } else if constexpr (Op == ProgramOp::choose) {
    const ProgramSlot otherwise = stack[top--];
    const ProgramSlot then = stack[top--];
    ProgramSlot& condition = stack[top];
    condition = program_passes(condition) ? then : otherwise;
  } else if constexpr (Op == ProgramOp::and_ || Op == ProgramOp::or_) {
    const ProgramSlot b = stack[top--];
    ProgramSlot& a = stack[top];
    // The value that decides (false for AND, true for OR) wins over NULL.
    const int64_t decides = Op == ProgramOp::and_ ? 0 : 1;
    const bool a_decides = !a.null && (a.i != 0 ? 1 : 0) == decides;
    const bool b_decides = !b.null && (b.i != 0 ? 1 : 0) == decides;
    if (a_decides || b_decides) a = ProgramSlot{decides, 0, false};
    else if (a.null || b.null) a = ProgramSlot{0, 0, true};
    else a = ProgramSlot{1 - decides, 0, false};
  } else {
    // Binary operators: NULL in, NULL out.
    const ProgramSlot b = stack[top--];
    ProgramSlot& a = stack[top];
    a.null = a.null || b.null;
    if (a.null) {
      a.i = 0;
    } else if constexpr (Op == ProgramOp::add_int || Op == ProgramOp::sub_int) {
      if (big(a.i, 125) || big(b.i, 125)) *error |= kProgramOverflow;
      a.i = Op == ProgramOp::add_int ? a.i + b.i : a.i - b.i;
    } else if constexpr (Op == ProgramOp::mul_int) {
      if (big(a.i, 63) || big(b.i, 63)) *error |= kProgramOverflow;
      else a.i = a.i * b.i;
    } else if constexpr (Op == ProgramOp::add_float || Op == ProgramOp::sub_float || Op == ProgramOp::mul_float) {
      const double r = Op == ProgramOp::add_float ? a.f + b.f : Op == ProgramOp::sub_float ? a.f - b.f : a.f * b.f;
      if (is_inf(r) && !is_inf(a.f) && !is_inf(b.f)) *error |= kProgramOverflow;
      // float8mul: an underflow to zero from nonzero operands is an error too.
      if (Op == ProgramOp::mul_float && r == 0 && a.f != 0 && b.f != 0) *error |= kProgramOverflow;
      a.f = r;
    } else if constexpr (Op == ProgramOp::eq_int) {
      a.i = a.i == b.i;
    } else if constexpr (Op == ProgramOp::ne_int) {
      a.i = a.i != b.i;
    } else if constexpr (Op == ProgramOp::lt_int) {
      a.i = a.i < b.i;
    } else if constexpr (Op == ProgramOp::le_int) {
      a.i = a.i <= b.i;
    } else if constexpr (Op == ProgramOp::gt_int) {
      a.i = a.i > b.i;
    } else if constexpr (Op == ProgramOp::ge_int) {
      a.i = a.i >= b.i;
    } else if constexpr (Op == ProgramOp::eq_float) {
      a.i = float_equal(a.f, b.f);
    } else if constexpr (Op == ProgramOp::ne_float) {
      a.i = !float_equal(a.f, b.f);
    } else if constexpr (Op == ProgramOp::lt_float) {
      a.i = float_less(a.f, b.f);
    } else if constexpr (Op == ProgramOp::le_float) {
      a.i = !float_less(b.f, a.f);
    } else if constexpr (Op == ProgramOp::gt_float) {
      a.i = float_less(b.f, a.f);
    } else if constexpr (Op == ProgramOp::ge_float) {
      a.i = !float_less(a.f, b.f);
    }
  }
  return 0;
}

// op_step of `step`'s operation: what the interpreters run.
TALLY_HD int run_step(const ProgramStep& step, const ProgramStep* next, ProgramSlot* stack, int& top,
                      const ProgramColumn* columns, size_t row, uint32_t* error) {
#define TALLY_OP(name)                                                                                           \
  case ProgramOp::name:                                                                                          \
    return op_step<ProgramOp::name>(step.arg, step.value, step.fvalue, next, stack, top, columns, row, error);
  switch (step.op) {
    TALLY_OP(load) TALLY_OP(const_int) TALLY_OP(const_float) TALLY_OP(const_null)
    TALLY_OP(add_int) TALLY_OP(sub_int) TALLY_OP(mul_int) TALLY_OP(neg_int) TALLY_OP(scale_int) TALLY_OP(check_range)
    TALLY_OP(add_float) TALLY_OP(sub_float) TALLY_OP(mul_float) TALLY_OP(neg_float) TALLY_OP(int_to_float)
    TALLY_OP(eq_int) TALLY_OP(ne_int) TALLY_OP(lt_int) TALLY_OP(le_int) TALLY_OP(gt_int) TALLY_OP(ge_int)
    TALLY_OP(eq_float) TALLY_OP(ne_float) TALLY_OP(lt_float) TALLY_OP(le_float) TALLY_OP(gt_float) TALLY_OP(ge_float)
    TALLY_OP(and_) TALLY_OP(or_) TALLY_OP(not_) TALLY_OP(is_null) TALLY_OP(is_not_null)
    TALLY_OP(skip_if_false) TALLY_OP(skip_if_true) TALLY_OP(in_list) TALLY_OP(lookup) TALLY_OP(choose)
    TALLY_OP(year_of) TALLY_OP(date_field) TALLY_OP(floor_to)
  }
#undef TALLY_OP
  return 0;
}

// Evaluates `steps` over row `row` of `columns`; the result is the top of
// the stack. ORs error flags into `*error`.
TALLY_HD ProgramSlot run_program_row(const ProgramStep* steps, int count, const ProgramColumn* columns, size_t row,
                                     uint32_t* error) {
  ProgramSlot stack[kProgramStackDepth];
  int top = -1;
  for (int s = 0; s < count; ++s) s += run_step(steps[s], steps + s + 1, stack, top, columns, row, error);
  return top >= 0 ? stack[top] : ProgramSlot{0, 0, true};
}

// An int64 result: error when it leaves the 18 digits an engine input holds
// (the same bound as the host's evaluated inputs, engine_aggregator_sink.cpp).
TALLY_HD int64_t program_int64(const ProgramSlot& v, uint32_t* error) {
  if (!v.null && (v.i > INT64_MAX || v.i < INT64_MIN)) *error |= kProgramOverflow;
  return static_cast<int64_t>(v.i);
}

}  // namespace tally
