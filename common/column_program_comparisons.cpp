// Conjunctions of column-with-constant comparisons: see column_program_comparisons.hpp.
#include "common/column_program_comparisons.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "common/column_program_batch.hpp"
#include "common/column_width.hpp"

namespace tally {

namespace {

bool is_int_comparison(ProgramOp op) { return op >= ProgramOp::eq_int && op <= ProgramOp::ge_int; }
bool is_float_comparison(ProgramOp op) { return op >= ProgramOp::eq_float && op <= ProgramOp::ge_float; }

// `constant op column` as `column op' constant`.
ProgramOp mirrored(ProgramOp op) {
  switch (op) {
    case ProgramOp::lt_int: return ProgramOp::gt_int;
    case ProgramOp::le_int: return ProgramOp::ge_int;
    case ProgramOp::gt_int: return ProgramOp::lt_int;
    case ProgramOp::ge_int: return ProgramOp::le_int;
    case ProgramOp::lt_float: return ProgramOp::gt_float;
    case ProgramOp::le_float: return ProgramOp::ge_float;
    case ProgramOp::gt_float: return ProgramOp::lt_float;
    case ProgramOp::ge_float: return ProgramOp::le_float;
    default: return op;  // eq and ne are symmetric
  }
}

// One operand of a comparison at steps[s]: a column's load, or a constant
// (an integer constant may be scaled to the column's numeric scale, as
// `l_quantity < 24` compiles for a numeric(15,2) column). Returns the steps
// it takes, 0 when it is neither.
struct Operand {
  bool column = false;
  int32_t index = 0;  // the column
  bool integer = false;
  int64_t value = 0;
  double fvalue = 0;
};

size_t operand_at(const std::vector<ProgramStep>& steps, size_t s, Operand& out) {
  if (s >= steps.size()) return 0;
  const ProgramStep& step = steps[s];
  if (step.op == ProgramOp::load) {
    out.column = true;
    out.index = step.arg;
    return 1;
  }
  if (step.op == ProgramOp::const_float) {
    out.fvalue = step.fvalue;
    return 1;
  }
  if (step.op != ProgramOp::const_int) return 0;
  out.integer = true;
  out.value = step.value;
  if (s + 1 >= steps.size() || steps[s + 1].op != ProgramOp::scale_int) return 1;
  // The scaled constant must stay an int64 (the program's slot is int128).
  const int32_t k = steps[s + 1].arg;
  if (k < 0 || k > 18) return 0;
  const __int128 scaled = static_cast<__int128>(step.value) * program_detail::pow10_i128(k);
  if (scaled > INT64_MAX || scaled < INT64_MIN) return 0;
  out.value = static_cast<int64_t>(scaled);
  return 2;
}

// A few values are compared one by one (no branch per value); more, over a
// span of at most kBitmapInSpan values, by a bit per value (a load per
// row); others by a binary search.
constexpr size_t kLinearInValues = 8;
constexpr uint64_t kBitmapInSpan = uint64_t{1} << 16;

// The bitmap of an IN list's ascending values (ColumnComparison::bits),
// made once where the program is recognized; empty where the list is short
// or its span wide.
std::vector<uint64_t> in_list_bits(const std::vector<int64_t>& values) {
  if (values.size() <= kLinearInValues) return {};
  const uint64_t span = static_cast<uint64_t>(values.back()) - static_cast<uint64_t>(values.front());
  if (span >= kBitmapInSpan) return {};
  std::vector<uint64_t> bits(span / 64 + 2, 0);  // bit span + 1 stays clear: where values past the span look
  for (const int64_t v : values) {
    const uint64_t at = static_cast<uint64_t>(v) - static_cast<uint64_t>(values.front());
    bits[at >> 6] |= uint64_t{1} << (at & 63);
  }
  return bits;
}

// The comparison at steps[s] (a column and a constant of the comparison's
// kind, in either order, then the comparison): the steps it takes, or 0.
size_t comparison_at(const std::vector<ProgramStep>& steps, size_t s, const std::vector<ProgramColumn>& columns,
                     ColumnComparison& out) {
  if (steps[s].op == ProgramOp::load && s + 1 < steps.size() && steps[s + 1].op == ProgramOp::in_list) {
    // `column IN (integers)`: the load, the in_list and its data steps.
    const int32_t index = steps[s].arg;
    const int32_t count = steps[s + 1].arg;
    if (index < 0 || static_cast<size_t>(index) >= columns.size() || count < 0 ||
        s + 2 + static_cast<size_t>(count) > steps.size())
      return 0;
    const auto width = static_cast<ColumnWidth>(columns[static_cast<size_t>(index)].width);
    if (width != ColumnWidth::int32 && width != ColumnWidth::int64) return 0;
    out.op = ProgramOp::in_list;
    out.column = index;
    out.values.clear();
    for (size_t d = s + 2; d < s + 2 + static_cast<size_t>(count); ++d) out.values.push_back(steps[d].value);
    out.bits = in_list_bits(out.values);
    return 2 + static_cast<size_t>(count);
  }
  Operand a, b;
  const size_t na = operand_at(steps, s, a);
  if (na == 0) return 0;
  const size_t nb = operand_at(steps, s + na, b);
  if (nb == 0 || s + na + nb >= steps.size()) return 0;
  const ProgramOp op = steps[s + na + nb].op;
  const bool int_op = is_int_comparison(op), float_op = is_float_comparison(op);
  if (!int_op && !float_op) return 0;
  if (a.column && b.column) {
    // Two columns stored alike (two dates, two numerics of one scale: the
    // compiler scales one of two different scales, which is no load).
    if (a.index < 0 || b.index < 0 || static_cast<size_t>(std::max(a.index, b.index)) >= columns.size()) return 0;
    const auto width = static_cast<ColumnWidth>(columns[static_cast<size_t>(a.index)].width);
    if (width != static_cast<ColumnWidth>(columns[static_cast<size_t>(b.index)].width)) return 0;
    if (int_op != (width == ColumnWidth::int32 || width == ColumnWidth::int64)) return 0;
    out.op = op;
    out.column = a.index;
    out.column2 = b.index;
    return na + nb + 1;
  }
  if (a.column == b.column) return 0;
  const Operand& load = a.column ? a : b;
  const Operand& constant = a.column ? b : a;
  if (constant.integer != int_op) return 0;
  out.op = a.column ? op : mirrored(op);
  if (load.index < 0 || static_cast<size_t>(load.index) >= columns.size()) return 0;
  const auto width = static_cast<ColumnWidth>(columns[static_cast<size_t>(load.index)].width);
  const bool int_column = width == ColumnWidth::int32 || width == ColumnWidth::int64;
  if (int_op != int_column) return 0;  // a load reads an integer column as int, a float one as float
  out.column = load.index;
  out.value = constant.value;
  out.fvalue = constant.fvalue;
  return na + nb + 1;
}

template <class T, class Compare>
void and_rows(const ProgramColumn& c, size_t begin, size_t end, uint8_t* mask, bool first, Compare holds) {
  const T* d = static_cast<const T*>(c.data);
  const uint8_t* valid = c.validity;
  if (valid == nullptr) {
    if (first) {
      for (size_t r = begin; r < end; ++r) mask[r] = holds(d[r]) ? 1 : 0;
    } else {
      for (size_t r = begin; r < end; ++r) mask[r] &= holds(d[r]) ? 1 : 0;
    }
  } else if (first) {
    for (size_t r = begin; r < end; ++r) mask[r] = (valid[r] != 0) & (holds(d[r]) ? 1 : 0);
  } else {
    for (size_t r = begin; r < end; ++r) mask[r] &= (valid[r] != 0) & (holds(d[r]) ? 1 : 0);
  }
}

template <class T>
void and_int_rows(const ColumnComparison& k, const ProgramColumn& c, size_t begin, size_t end, uint8_t* mask,
                  bool first) {
  const int64_t v = k.value;
  if constexpr (sizeof(T) < sizeof(int64_t)) {
    // Compared at the column's own width: x86-64's baseline (SSE2) has no
    // 64-bit compare, so widened values were compared one by one (a
    // quarter of TPC-H Q6's time on the CPU engine). A constant outside the
    // column's range gives every value the same answer.
    constexpr int64_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    if (v < lo || v > hi) {
      const bool below = v < lo;  // every value is above the constant, or else below it
      bool all = false;
      switch (k.op) {
        case ProgramOp::eq_int: all = false; break;
        case ProgramOp::ne_int: all = true; break;
        case ProgramOp::lt_int:
        case ProgramOp::le_int: all = !below; break;
        default: all = below; break;  // gt, ge
      }
      and_rows<T>(c, begin, end, mask, first, [all](T) { return all; });
      return;
    }
    const T w = static_cast<T>(v);
    switch (k.op) {
      case ProgramOp::eq_int: and_rows<T>(c, begin, end, mask, first, [w](T x) { return x == w; }); break;
      case ProgramOp::ne_int: and_rows<T>(c, begin, end, mask, first, [w](T x) { return x != w; }); break;
      case ProgramOp::lt_int: and_rows<T>(c, begin, end, mask, first, [w](T x) { return x < w; }); break;
      case ProgramOp::le_int: and_rows<T>(c, begin, end, mask, first, [w](T x) { return x <= w; }); break;
      case ProgramOp::gt_int: and_rows<T>(c, begin, end, mask, first, [w](T x) { return x > w; }); break;
      default: and_rows<T>(c, begin, end, mask, first, [w](T x) { return x >= w; }); break;
    }
    return;
  }
  switch (k.op) {
    case ProgramOp::eq_int: and_rows<T>(c, begin, end, mask, first, [v](T x) { return int64_t{x} == v; }); break;
    case ProgramOp::ne_int: and_rows<T>(c, begin, end, mask, first, [v](T x) { return int64_t{x} != v; }); break;
    case ProgramOp::lt_int: and_rows<T>(c, begin, end, mask, first, [v](T x) { return int64_t{x} < v; }); break;
    case ProgramOp::le_int: and_rows<T>(c, begin, end, mask, first, [v](T x) { return int64_t{x} <= v; }); break;
    case ProgramOp::gt_int: and_rows<T>(c, begin, end, mask, first, [v](T x) { return int64_t{x} > v; }); break;
    default: and_rows<T>(c, begin, end, mask, first, [v](T x) { return int64_t{x} >= v; }); break;
  }
}

template <class T>
void and_in_rows(const ColumnComparison& k, const ProgramColumn& c, size_t begin, size_t end, uint8_t* mask, bool first) {
  const int64_t* v = k.values.data();
  const size_t n = k.values.size();
  if (n == 0) {
    and_rows<T>(c, begin, end, mask, first, [](T) { return false; });
    return;
  }
  if (!k.bits.empty()) {
    const uint64_t span = static_cast<uint64_t>(v[n - 1]) - static_cast<uint64_t>(v[0]);  // ascending values
    const uint64_t* words = k.bits.data();
    const int64_t lo = v[0];
    and_rows<T>(c, begin, end, mask, first, [words, lo, span](T x) {
      uint64_t at = static_cast<uint64_t>(int64_t{x}) - static_cast<uint64_t>(lo);
      at = at <= span ? at : span + 1;
      return ((words[at >> 6] >> (at & 63)) & 1) != 0;
    });
    return;
  }
  if (n <= kLinearInValues) {
    and_rows<T>(c, begin, end, mask, first, [v, n](T x) {
      bool in = false;
      for (size_t i = 0; i < n; ++i) in |= int64_t{x} == v[i];
      return in;
    });
  } else {
    and_rows<T>(c, begin, end, mask, first, [v, n](T x) { return std::binary_search(v, v + n, int64_t{x}); });
  }
}

template <class T>
void and_float_rows(const ColumnComparison& k, const ProgramColumn& c, size_t begin, size_t end, uint8_t* mask,
                    bool first) {
  using program_detail::float_equal;
  using program_detail::float_less;
  const double v = k.fvalue;
  switch (k.op) {
    case ProgramOp::eq_float: and_rows<T>(c, begin, end, mask, first, [v](T x) { return float_equal(x, v); }); break;
    case ProgramOp::ne_float: and_rows<T>(c, begin, end, mask, first, [v](T x) { return !float_equal(x, v); }); break;
    case ProgramOp::lt_float: and_rows<T>(c, begin, end, mask, first, [v](T x) { return float_less(x, v); }); break;
    case ProgramOp::le_float: and_rows<T>(c, begin, end, mask, first, [v](T x) { return !float_less(v, x); }); break;
    case ProgramOp::gt_float: and_rows<T>(c, begin, end, mask, first, [v](T x) { return float_less(v, x); }); break;
    default: and_rows<T>(c, begin, end, mask, first, [v](T x) { return !float_less(x, v); }); break;
  }
}

// mask &= (a op b) over two columns of type T, a NULL on either side failing.
// The validity pointers are read once: the mask is bytes, which may alias
// anything, so a loop reading them through `a` would reload them per row
// and not vectorize.
template <class T, class Compare>
void and_pair_rows(const ProgramColumn& a, const ProgramColumn& b, size_t begin, size_t end, uint8_t* mask, bool first,
                   Compare holds) {
  const T* x = static_cast<const T*>(a.data);
  const T* y = static_cast<const T*>(b.data);
  const uint8_t* valid_a = a.validity;
  const uint8_t* valid_b = b.validity;
  if (first) {
    for (size_t r = begin; r < end; ++r) mask[r] = holds(x[r], y[r]) ? 1 : 0;
  } else {
    for (size_t r = begin; r < end; ++r) mask[r] &= holds(x[r], y[r]) ? 1 : 0;
  }
  if (valid_a != nullptr)
    for (size_t r = begin; r < end; ++r) mask[r] &= static_cast<uint8_t>(valid_a[r] != 0);
  if (valid_b != nullptr)
    for (size_t r = begin; r < end; ++r) mask[r] &= static_cast<uint8_t>(valid_b[r] != 0);
}

template <class T>
void and_pair_int_rows(ProgramOp op, const ProgramColumn& a, const ProgramColumn& b, size_t begin, size_t end,
                       uint8_t* mask, bool first) {
  switch (op) {
    case ProgramOp::eq_int: and_pair_rows<T>(a, b, begin, end, mask, first, [](T x, T y) { return x == y; }); break;
    case ProgramOp::ne_int: and_pair_rows<T>(a, b, begin, end, mask, first, [](T x, T y) { return x != y; }); break;
    case ProgramOp::lt_int: and_pair_rows<T>(a, b, begin, end, mask, first, [](T x, T y) { return x < y; }); break;
    case ProgramOp::le_int: and_pair_rows<T>(a, b, begin, end, mask, first, [](T x, T y) { return x <= y; }); break;
    case ProgramOp::gt_int: and_pair_rows<T>(a, b, begin, end, mask, first, [](T x, T y) { return x > y; }); break;
    default: and_pair_rows<T>(a, b, begin, end, mask, first, [](T x, T y) { return x >= y; }); break;
  }
}

template <class T>
void and_pair_float_rows(ProgramOp op, const ProgramColumn& a, const ProgramColumn& b, size_t begin, size_t end,
                         uint8_t* mask, bool first) {
  using program_detail::float_equal;
  using program_detail::float_less;
  auto go = [&](auto holds) { and_pair_rows<T>(a, b, begin, end, mask, first, holds); };
  switch (op) {
    case ProgramOp::eq_float: go([](T x, T y) { return float_equal(x, y); }); break;
    case ProgramOp::ne_float: go([](T x, T y) { return !float_equal(x, y); }); break;
    case ProgramOp::lt_float: go([](T x, T y) { return float_less(x, y); }); break;
    case ProgramOp::le_float: go([](T x, T y) { return !float_less(y, x); }); break;
    case ProgramOp::gt_float: go([](T x, T y) { return float_less(y, x); }); break;
    default: go([](T x, T y) { return !float_less(x, y); }); break;
  }
}

}  // namespace

bool comparison_conjunction(const ColumnProgram& program, const std::vector<ProgramColumn>& columns,
                            std::vector<ColumnComparison>& out) {
  out.clear();
  if (program.result != ProgramResult::boolean || !program_runs_in_blocks(program)) return false;
  const auto& steps = program.steps;
  for (size_t s = 0; s < steps.size();) {
    if (steps[s].op == ProgramOp::skip_if_false || steps[s].op == ProgramOp::and_) {
      ++s;
      continue;
    }
    ColumnComparison k;
    const size_t taken = comparison_at(steps, s, columns, k);
    if (taken == 0) return false;
    out.push_back(k);
    s += taken;
  }
  return !out.empty();
}

// Built twice, for x86-64's baseline and for AVX2, the copy chosen when the
// program loads (GCC's target_clones): 64-bit integer and double compares
// (numeric values at their scale, timestamps) have no SSE2 instruction, so
// the baseline copy compares them one row at a time; `flatten` puts every
// comparison loop inside each copy.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default"), flatten))
#endif
void rows_of_mask(const uint8_t* mask, size_t begin, size_t end, std::vector<uint32_t>& rows) {
  // Eight mask bytes of 0 or 1 as one word: their sum is its top byte once
  // multiplied by 0x0101...01.
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  auto word_at = [mask](size_t r) {
    uint64_t word;
    std::memcpy(&word, mask + r, sizeof word);
    return word;
  };
  const size_t whole = begin + (end - begin) / 8 * 8;
  size_t count = 0;
  for (size_t r = begin; r < whole; r += 8) count += (word_at(r) * kOnes) >> 56;
  for (size_t r = whole; r < end; ++r) count += mask[r];
  // Each row of a word with a passing row is written, and counted where it
  // passes (branch-free); the last may write up to seven places past count.
  rows.resize(count + 8);
  size_t n = 0;
  for (size_t r = begin; r < whole; r += 8) {
    if (word_at(r) == 0) continue;
    for (size_t j = r; j < r + 8; ++j) {
      rows[n] = static_cast<uint32_t>(j - begin);
      n += mask[j];
    }
  }
  for (size_t r = whole; r < end; ++r) {
    rows[n] = static_cast<uint32_t>(r - begin);
    n += mask[r];
  }
  rows.resize(n);
}

void evaluate_comparisons(const std::vector<ColumnComparison>& comparisons, const std::vector<ProgramColumn>& columns,
                          size_t begin, size_t end, uint8_t* mask) {
  // A block's mask stays in the first-level cache while every comparison
  // narrows it.
  constexpr size_t kBlockRows = 4096;
  for (size_t block = begin; block < end; block += kBlockRows) {
    const size_t block_end = std::min(end, block + kBlockRows);
    bool first = true;
    for (const ColumnComparison& k : comparisons) {
      const ProgramColumn& c = columns[static_cast<size_t>(k.column)];
      if (k.column2 >= 0) {
        const ProgramColumn& c2 = columns[static_cast<size_t>(k.column2)];
        switch (static_cast<ColumnWidth>(c.width)) {
          case ColumnWidth::int32: and_pair_int_rows<int32_t>(k.op, c, c2, block, block_end, mask, first); break;
          case ColumnWidth::int64: and_pair_int_rows<int64_t>(k.op, c, c2, block, block_end, mask, first); break;
          case ColumnWidth::float32: and_pair_float_rows<float>(k.op, c, c2, block, block_end, mask, first); break;
          case ColumnWidth::float64: and_pair_float_rows<double>(k.op, c, c2, block, block_end, mask, first); break;
        }
        first = false;
        continue;
      }
      if (k.op == ProgramOp::in_list) {
        if (static_cast<ColumnWidth>(c.width) == ColumnWidth::int32) and_in_rows<int32_t>(k, c, block, block_end, mask, first);
        else and_in_rows<int64_t>(k, c, block, block_end, mask, first);
        first = false;
        continue;
      }
      switch (static_cast<ColumnWidth>(c.width)) {
        case ColumnWidth::int32: and_int_rows<int32_t>(k, c, block, block_end, mask, first); break;
        case ColumnWidth::int64: and_int_rows<int64_t>(k, c, block, block_end, mask, first); break;
        case ColumnWidth::float32: and_float_rows<float>(k, c, block, block_end, mask, first); break;
        case ColumnWidth::float64: and_float_rows<double>(k, c, block, block_end, mask, first); break;
      }
      first = false;
    }
  }
}

namespace {

// Whether some x in [a.min, a.max] and y in [b.min, b.max] (both non-empty)
// have `x op y`.
bool ranges_may_compare(ProgramOp op, const ValueRange& a, const ValueRange& b) {
  switch (op) {
    case ProgramOp::eq_int: return a.min <= b.max && b.min <= a.max;
    case ProgramOp::ne_int: return !(a.min == a.max && b.min == b.max && a.min == b.min);
    case ProgramOp::lt_int: return a.min < b.max;
    case ProgramOp::le_int: return a.min <= b.max;
    case ProgramOp::gt_int: return a.max > b.min;
    case ProgramOp::ge_int: return a.max >= b.min;
    default: return true;
  }
}

}  // namespace

bool comparisons_may_pass(const std::vector<ColumnComparison>& comparisons, const std::vector<ValueRange>& ranges) {
  auto range = [&ranges](int32_t column) -> const ValueRange* {
    if (column < 0 || static_cast<size_t>(column) >= ranges.size() || !ranges[static_cast<size_t>(column)].known)
      return nullptr;
    return &ranges[static_cast<size_t>(column)];
  };
  auto empty = [](const ValueRange& r) { return r.min > r.max; };
  for (const ColumnComparison& k : comparisons) {
    if (k.op != ProgramOp::in_list && !is_int_comparison(k.op)) continue;
    const ValueRange* a = range(k.column);
    if (a != nullptr && empty(*a)) return false;
    const ValueRange* b = k.column2 >= 0 ? range(k.column2) : nullptr;
    if (b != nullptr && empty(*b)) return false;
    if (a == nullptr || (k.column2 >= 0 && b == nullptr)) continue;
    if (k.op == ProgramOp::in_list) {
      const auto at = std::lower_bound(k.values.begin(), k.values.end(), a->min);
      if (at == k.values.end() || *at > a->max) return false;
      continue;
    }
    const ValueRange constant{true, k.value, k.value};
    if (!ranges_may_compare(k.op, *a, b != nullptr ? *b : constant)) return false;
  }
  return true;
}

}  // namespace tally
