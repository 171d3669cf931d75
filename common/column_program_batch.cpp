#include "common/column_program_batch.hpp"

#include <memory>

#include "common/column_program_comparisons.hpp"

namespace tally {

namespace {

// Rows per block: a stack slot's integers fill 4 KiB, so the few slots a
// program touches stay in the first-level cache.
constexpr size_t kBlockRows = 256;

// How a step changes the stack's depth (run_program_row's switch).
int depth_change(ProgramOp op) {
  switch (op) {
    case ProgramOp::load:
    case ProgramOp::const_int:
    case ProgramOp::const_float:
    case ProgramOp::const_null: return 1;
    case ProgramOp::neg_int:
    case ProgramOp::neg_float:
    case ProgramOp::scale_int:
    case ProgramOp::check_range:
    case ProgramOp::int_to_float:
    case ProgramOp::not_:
    case ProgramOp::is_null:
    case ProgramOp::is_not_null:
    case ProgramOp::skip_if_false:
    case ProgramOp::skip_if_true:
    case ProgramOp::in_list:
    case ProgramOp::lookup:
    case ProgramOp::year_of:
    case ProgramOp::date_field:
    case ProgramOp::floor_to: return 0;
    case ProgramOp::choose: return -2;
    default: return -1;
  }
}

// Steps [from, to) starting at `depth`: the depth after them, or -1 where a
// step lacks operands, the stack grows past its bound, or a short circuit's
// steps leave [from, to) or change the depth.
int checked_depth(const std::vector<ProgramStep>& steps, int from, int to, int depth) {
  for (int s = from; s < to; ++s) {
    const ProgramStep& step = steps[s];
    const int change = depth_change(step.op);
    const int needs = change == 1 ? 0 : change == 0 ? 1 : 1 - change;
    if (depth < needs) return -1;
    if (step.op == ProgramOp::skip_if_false || step.op == ProgramOp::skip_if_true) {
      if (step.arg < 0 || s + 1 + step.arg > to) return -1;
      if (checked_depth(steps, s + 1, s + 1 + step.arg, depth) != depth) return -1;
      s += step.arg;
      continue;
    }
    if (step.op == ProgramOp::in_list) {  // its data: `arg` const_int steps
      if (step.arg < 0 || s + 1 + step.arg > to) return -1;
      for (int d = s + 1; d <= s + step.arg; ++d) {
        if (steps[d].op != ProgramOp::const_int) return -1;
      }
      s += step.arg;
      continue;
    }
    depth += change;
    if (depth > kProgramStackDepth) return -1;
  }
  return depth;
}

// The rows of a block a step runs over: positions 0 .. n-1, or the n listed.
struct Selection {
  const uint16_t* rows = nullptr;
  size_t n = 0;
};

template <class F>
inline void each_row(const Selection& sel, F&& f) {
  if (sel.rows == nullptr) {
    for (size_t k = 0; k < sel.n; ++k) f(k);
  } else {
    for (size_t j = 0; j < sel.n; ++j) f(sel.rows[j]);
  }
}

// One block's stack: slot t of row k is (i[t][k], f[t][k], null[t][k]).
struct BlockStack {
  __int128 i[kProgramStackDepth][kBlockRows];
  double f[kProgramStackDepth][kBlockRows];
  uint8_t null[kProgramStackDepth][kBlockRows];
};

class BlockRun {
 public:
  BlockRun(const ColumnProgram& program, const std::vector<ProgramColumn>& columns)
      : steps_(program.steps), columns_(columns), stack_(std::make_unique<BlockStack>()) {}

  // Runs steps [from, to) over `sel` of the block starting at row `base`,
  // with `top` the top slot; returns the top slot after them.
  int run(int from, int to, const Selection& sel, size_t base, int top) {
    BlockStack& st = *stack_;
    for (int s = from; s < to; ++s) {
      const ProgramStep step = steps_[s];
      if ((step.op == ProgramOp::load || step.op == ProgramOp::const_int) && s + 2 < to &&
          column_constant(s, sel, base, top + 1)) {
        ++top;
        s += 2;
        continue;
      }
      if (step.op == ProgramOp::load && s + 1 < to && steps_[s + 1].op == ProgramOp::lookup &&
          load_lookup(columns_[step.arg], columns_[steps_[s + 1].arg], sel, base, top + 1)) {
        ++top;
        ++s;
        continue;
      }
      switch (step.op) {
        case ProgramOp::load: load(columns_[step.arg], sel, base, ++top); break;
        case ProgramOp::const_int:
        case ProgramOp::const_float:
        case ProgramOp::const_null: {
          ++top;
          const __int128 iv = step.op == ProgramOp::const_int ? step.value : 0;
          const double fv = step.op == ProgramOp::const_float ? step.fvalue : 0;
          const uint8_t nv = step.op == ProgramOp::const_null ? 1 : 0;
          each_row(sel, [&](size_t k) { st.i[top][k] = iv; st.f[top][k] = fv; st.null[top][k] = nv; });
          no_nulls_[top] = nv == 0 && sel.rows == nullptr;
          break;
        }
        case ProgramOp::skip_if_false:
        case ProgramOp::skip_if_true: {
          // The rows whose top does not decide go through the skipped steps.
          const bool on_true = step.op == ProgramOp::skip_if_true;
          uint16_t rest[kBlockRows];
          size_t n = 0;
          each_row(sel, [&](size_t k) {
            const bool skips = !st.null[top][k] && (st.i[top][k] != 0) == on_true;
            rest[n] = static_cast<uint16_t>(k);
            n += skips ? 0 : 1;
          });
          if (n > 0) run(s + 1, s + 1 + step.arg, Selection{rest, n}, base, top);
          if (n > 0) no_nulls_[top] = false;
          s += step.arg;
          break;
        }
        case ProgramOp::in_list: {
          const ProgramStep* values = steps_.data() + s + 1;
          each_row(sel, [&](size_t k) {
            if (!st.null[top][k]) st.i[top][k] = program_detail::in_sorted_steps(values, step.arg, st.i[top][k]) ? 1 : 0;
          });
          s += step.arg;
          break;
        }
        case ProgramOp::lookup: {
          const ProgramColumn& c = columns_[step.arg];
          each_row(sel, [&](size_t k) {
            const ProgramSlot v = program_detail::lookup_value(c, ProgramSlot{st.i[top][k], 0, st.null[top][k] != 0});
            st.i[top][k] = v.i;
            st.f[top][k] = v.f;
            st.null[top][k] = v.null ? 1 : 0;
          });
          no_nulls_[top] = false;
          break;
        }
        case ProgramOp::choose: {
          const int otherwise = top--;
          const int then = top--;
          each_row(sel, [&](size_t k) {
            const int from = (!st.null[top][k] && st.i[top][k] != 0) ? then : otherwise;
            st.i[top][k] = st.i[from][k];
            st.f[top][k] = st.f[from][k];
            st.null[top][k] = st.null[from][k];
          });
          no_nulls_[top] = false;
          break;
        }
        case ProgramOp::and_:
        case ProgramOp::or_: {
          const int b = top--;
          const int64_t decides = step.op == ProgramOp::and_ ? 0 : 1;
          each_row(sel, [&](size_t k) {
            const bool a_decides = !st.null[top][k] && (st.i[top][k] != 0 ? 1 : 0) == decides;
            const bool b_decides = !st.null[b][k] && (st.i[b][k] != 0 ? 1 : 0) == decides;
            const bool any_null = st.null[top][k] || st.null[b][k];
            st.i[top][k] = (a_decides || b_decides) ? decides : any_null ? 0 : 1 - decides;
            st.f[top][k] = 0;
            st.null[top][k] = !(a_decides || b_decides) && any_null;
          });
          no_nulls_[top] = false;
          break;
        }
        default:
          if (depth_change(step.op) == 0) {
            unary(step, sel, top);
          } else {
            binary(step.op, sel, top - 1, top);
            --top;
          }
          break;
      }
    }
    return top;
  }

  uint32_t error = 0;
  BlockStack& stack() { return *stack_; }

 private:
  // A stored integer column and a constant under one operator (`load;
  // const_int; op` or `const_int; load; op`, op a comparison, +, - or *:
  // most of a filter's and an input's steps) in one pass into slot t: the
  // column is read where it is, not loaded into the stack and combined
  // there with a constant filled in for every row. False where steps s..
  // are not that.
  bool column_constant(int s, const Selection& sel, size_t base, int t) {
    const ProgramStep& first = steps_[s];
    const ProgramStep& second = steps_[s + 1];
    const ProgramOp op = steps_[s + 2].op;
    const bool column_first = first.op == ProgramOp::load && second.op == ProgramOp::const_int;
    if (!column_first && !(first.op == ProgramOp::const_int && second.op == ProgramOp::load)) return false;
    const bool compare = op >= ProgramOp::eq_int && op <= ProgramOp::ge_int;
    if (!compare && op != ProgramOp::add_int && op != ProgramOp::sub_int && op != ProgramOp::mul_int) return false;
    const ProgramColumn& c = columns_[column_first ? first.arg : second.arg];
    const int64_t value = column_first ? second.value : first.value;
    const auto width = static_cast<ColumnWidth>(c.width);
    if (width == ColumnWidth::int32) {
      combine_rows(static_cast<const int32_t*>(c.data) + base, c, sel, base, t, op, value, column_first);
    } else if (width == ColumnWidth::int64) {
      combine_rows(static_cast<const int64_t*>(c.data) + base, c, sel, base, t, op, value, column_first);
    } else {
      return false;
    }
    return true;
  }

  template <class T>
  void combine_rows(const T* d, const ProgramColumn& c, const Selection& sel, size_t base, int t, ProgramOp op,
                    int64_t value, bool column_first) {
    BlockStack& st = *stack_;
    __int128* out = st.i[t];
    uint8_t* nulls = st.null[t];
    const uint8_t* valid = c.validity != nullptr ? c.validity + base : nullptr;
    const auto v = static_cast<__int128>(value);
    // The operands in the program's order: the column's value x and v.
    auto rows = [&](auto f) {
      if (column_first) each_row(sel, [&](size_t k) { out[k] = f(static_cast<__int128>(d[k]), v); });
      else each_row(sel, [&](size_t k) { out[k] = f(v, static_cast<__int128>(d[k])); });
    };
    switch (op) {
      case ProgramOp::eq_int: rows([](__int128 a, __int128 b) -> __int128 { return a == b; }); break;
      case ProgramOp::ne_int: rows([](__int128 a, __int128 b) -> __int128 { return a != b; }); break;
      case ProgramOp::lt_int: rows([](__int128 a, __int128 b) -> __int128 { return a < b; }); break;
      case ProgramOp::le_int: rows([](__int128 a, __int128 b) -> __int128 { return a <= b; }); break;
      case ProgramOp::gt_int: rows([](__int128 a, __int128 b) -> __int128 { return a > b; }); break;
      case ProgramOp::ge_int: rows([](__int128 a, __int128 b) -> __int128 { return a >= b; }); break;
      // Integers of 64 bits cannot leave 128 bits by a sum (binary's check
      // of 125 bits always passes for them).
      case ProgramOp::add_int: rows([](__int128 a, __int128 b) { return a + b; }); break;
      case ProgramOp::sub_int: rows([](__int128 a, __int128 b) { return a - b; }); break;
      default: {
        // A product flags an operand of 2^63 or more (INT64_MIN), as binary
        // does, leaving that row's left operand (NULL rows are not tested).
        uint32_t err = 0;
        rows([&err](__int128 a, __int128 b) {
          if (program_detail::big(a, 63) || program_detail::big(b, 63)) {
            err |= kProgramOverflow;
            return a;
          }
          return a * b;
        });
        if (err != 0 && valid != nullptr) {
          err = 0;
          each_row(sel, [&](size_t k) {
            const __int128 x = d[k];
            if (valid[k] != 0 && (program_detail::big(x, 63) || program_detail::big(v, 63))) err |= kProgramOverflow;
          });
        }
        error |= err;
        break;
      }
    }
    // A NULL value gives NULL (as binary_rows leaves it: 0 in i).
    no_nulls_[t] = valid == nullptr && sel.rows == nullptr;
    if (valid == nullptr) {
      each_row(sel, [&](size_t k) { nulls[k] = 0; });
    } else {
      each_row(sel, [&](size_t k) {
        nulls[k] = valid[k] == 0 ? 1 : 0;
        if (nulls[k]) out[k] = 0;
      });
    }
  }

  // A load of an int32 column (a text column's codes) and a lookup of its
  // value in an int32 array by it (a text condition's verdict or a
  // function's value per code), in one pass: no slot holds the codes.
  bool load_lookup(const ProgramColumn& c, const ProgramColumn& by, const Selection& sel, size_t base, int t) {
    if (static_cast<ColumnWidth>(c.width) != ColumnWidth::int32 || by.hashed || by.data == nullptr ||
        static_cast<ColumnWidth>(by.width) != ColumnWidth::int32) {
      return false;
    }
    BlockStack& st = *stack_;
    const int32_t* d = static_cast<const int32_t*>(c.data) + base;
    const uint8_t* valid = c.validity != nullptr ? c.validity + base : nullptr;
    const auto* values = static_cast<const int32_t*>(by.data);
    const uint8_t* present = by.validity;
    const auto lo = by.base;
    const uint64_t size = by.size;
    each_row(sel, [&](size_t k) {
      const uint64_t at = static_cast<uint64_t>(static_cast<int64_t>(d[k]) - lo);
      const bool null = (valid != nullptr && valid[k] == 0) || at >= size || (present != nullptr && present[at] == 0);
      st.i[t][k] = null ? 0 : values[at];
      st.null[t][k] = null ? 1 : 0;
    });
    no_nulls_[t] = false;
    return true;
  }

  void load(const ProgramColumn& c, const Selection& sel, size_t base, int t) {
    BlockStack& st = *stack_;
    const uint8_t* valid = c.validity != nullptr ? c.validity + base : nullptr;
    if (valid != nullptr) {
      each_row(sel, [&](size_t k) { st.null[t][k] = valid[k] == 0 ? 1 : 0; });
    } else {
      each_row(sel, [&](size_t k) { st.null[t][k] = 0; });
    }
    no_nulls_[t] = valid == nullptr && sel.rows == nullptr;
    // A slot holds an integer or a float, as the compiler typed its step:
    // no step reads the other half, so a load writes only its own.
    switch (static_cast<ColumnWidth>(c.width)) {
      case ColumnWidth::int32: {
        const int32_t* d = static_cast<const int32_t*>(c.data) + base;
        each_row(sel, [&](size_t k) { st.i[t][k] = d[k]; });
        break;
      }
      case ColumnWidth::int64: {
        const int64_t* d = static_cast<const int64_t*>(c.data) + base;
        each_row(sel, [&](size_t k) { st.i[t][k] = d[k]; });
        break;
      }
      case ColumnWidth::float32: {
        const float* d = static_cast<const float*>(c.data) + base;
        each_row(sel, [&](size_t k) { st.f[t][k] = d[k]; });
        break;
      }
      case ColumnWidth::float64: {
        const double* d = static_cast<const double*>(c.data) + base;
        each_row(sel, [&](size_t k) { st.f[t][k] = d[k]; });
        break;
      }
      default: each_row(sel, [&](size_t k) { st.i[t][k] = 0; st.f[t][k] = 0; }); break;
    }
  }

  void unary(const ProgramStep& step, const Selection& sel, int t) {
    using namespace program_detail;
    BlockStack& st = *stack_;
    __int128* iv = st.i[t];
    double* fv = st.f[t];
    uint8_t* nv = st.null[t];
    uint32_t err = 0;
    switch (step.op) {
      case ProgramOp::neg_int: each_row(sel, [&](size_t k) { iv[k] = -iv[k]; }); break;
      case ProgramOp::neg_float: each_row(sel, [&](size_t k) { fv[k] = -fv[k]; }); break;
      case ProgramOp::scale_int: {
        const __int128 factor = pow10_i128(step.arg);
        each_row(sel, [&](size_t k) {
          if (nv[k]) return;
          if (big(iv[k], 80)) err |= kProgramOverflow;
          else iv[k] *= factor;
        });
        break;
      }
      case ProgramOp::check_range:
        each_row(sel, [&](size_t k) {
          if (!nv[k] && big(iv[k] + (iv[k] < 0 ? 1 : 0), step.arg - 1)) err |= kProgramOverflow;
        });
        break;
      case ProgramOp::int_to_float:
        each_row(sel, [&](size_t k) { fv[k] = static_cast<double>(static_cast<int64_t>(iv[k])); });
        break;
      case ProgramOp::not_: each_row(sel, [&](size_t k) { iv[k] = iv[k] == 0 ? 1 : 0; }); break;
      case ProgramOp::year_of:
      case ProgramOp::date_field:
      case ProgramOp::floor_to:
        each_row(sel, [&](size_t k) {
          ProgramSlot slot{iv[k], 0, nv[k] != 0};
          if (step.op == ProgramOp::year_of) program_detail::year_of_slot(step.arg, slot, &err);
          else if (step.op == ProgramOp::date_field) program_detail::date_field_slot(step.arg, slot, &err);
          else program_detail::floor_to_slot(step.value, slot, &err);
          iv[k] = slot.i;
        });
        break;
      case ProgramOp::is_null:
      case ProgramOp::is_not_null: {
        const uint8_t want = step.op == ProgramOp::is_null ? 1 : 0;
        each_row(sel, [&](size_t k) {
          iv[k] = nv[k] == want ? 1 : 0;
          nv[k] = 0;
        });
        no_nulls_[t] = no_nulls_[t] || sel.rows == nullptr;
        break;
      }
      default: break;
    }
    error |= err;
  }

  // Applies `op` to rows of slots a and b, NULL in, NULL out; the result in a.
  // Where both operands are non-NULL on every row of the whole block (a
  // load of a column without NULLs, a constant, arithmetic over those), the
  // rows skip the NULL tests and the result keeps no NULL.
  template <class F>
  void binary_rows(const Selection& sel, int a, int b, F&& f) {
    BlockStack& st = *stack_;
    if (sel.rows == nullptr && no_nulls_[a] && no_nulls_[b]) {
      for (size_t k = 0; k < sel.n; ++k) f(k);
      return;
    }
    no_nulls_[a] = false;
    each_row(sel, [&](size_t k) {
      const bool n = st.null[a][k] || st.null[b][k];
      st.null[a][k] = n ? 1 : 0;
      if (n) {
        st.i[a][k] = 0;
        return;
      }
      f(k);
    });
  }

  void binary(ProgramOp op, const Selection& sel, int a, int b) {
    using namespace program_detail;
    BlockStack& st = *stack_;
    __int128* ai = st.i[a];
    const __int128* bi = st.i[b];
    double* af = st.f[a];
    const double* bf = st.f[b];
    uint32_t err = 0;
    switch (op) {
      case ProgramOp::add_int:
      case ProgramOp::sub_int: {
        const bool add = op == ProgramOp::add_int;
        binary_rows(sel, a, b, [&](size_t k) {
          if (big(ai[k], 125) || big(bi[k], 125)) err |= kProgramOverflow;
          ai[k] = add ? ai[k] + bi[k] : ai[k] - bi[k];
        });
        break;
      }
      case ProgramOp::mul_int:
        binary_rows(sel, a, b, [&](size_t k) {
          // Both operands fit an int64 past the check: one 64x64->128-bit multiply.
          if (big(ai[k], 63) || big(bi[k], 63)) err |= kProgramOverflow;
          else ai[k] = static_cast<__int128>(static_cast<int64_t>(ai[k])) * static_cast<int64_t>(bi[k]);
        });
        break;
      case ProgramOp::add_float:
      case ProgramOp::sub_float:
      case ProgramOp::mul_float:
        binary_rows(sel, a, b, [&](size_t k) {
          const double r = op == ProgramOp::add_float ? af[k] + bf[k]
                           : op == ProgramOp::sub_float ? af[k] - bf[k] : af[k] * bf[k];
          if (is_inf(r) && !is_inf(af[k]) && !is_inf(bf[k])) err |= kProgramOverflow;
          if (op == ProgramOp::mul_float && r == 0 && af[k] != 0 && bf[k] != 0) err |= kProgramOverflow;
          af[k] = r;
        });
        break;
      case ProgramOp::eq_int: binary_rows(sel, a, b, [&](size_t k) { ai[k] = ai[k] == bi[k]; }); break;
      case ProgramOp::ne_int: binary_rows(sel, a, b, [&](size_t k) { ai[k] = ai[k] != bi[k]; }); break;
      case ProgramOp::lt_int: binary_rows(sel, a, b, [&](size_t k) { ai[k] = ai[k] < bi[k]; }); break;
      case ProgramOp::le_int: binary_rows(sel, a, b, [&](size_t k) { ai[k] = ai[k] <= bi[k]; }); break;
      case ProgramOp::gt_int: binary_rows(sel, a, b, [&](size_t k) { ai[k] = ai[k] > bi[k]; }); break;
      case ProgramOp::ge_int: binary_rows(sel, a, b, [&](size_t k) { ai[k] = ai[k] >= bi[k]; }); break;
      case ProgramOp::eq_float: binary_rows(sel, a, b, [&](size_t k) { ai[k] = float_equal(af[k], bf[k]); }); break;
      case ProgramOp::ne_float: binary_rows(sel, a, b, [&](size_t k) { ai[k] = !float_equal(af[k], bf[k]); }); break;
      case ProgramOp::lt_float: binary_rows(sel, a, b, [&](size_t k) { ai[k] = float_less(af[k], bf[k]); }); break;
      case ProgramOp::le_float: binary_rows(sel, a, b, [&](size_t k) { ai[k] = !float_less(bf[k], af[k]); }); break;
      case ProgramOp::gt_float: binary_rows(sel, a, b, [&](size_t k) { ai[k] = float_less(bf[k], af[k]); }); break;
      case ProgramOp::ge_float: binary_rows(sel, a, b, [&](size_t k) { ai[k] = !float_less(af[k], bf[k]); }); break;
      default: binary_rows(sel, a, b, [](size_t) {}); break;
    }
    error |= err;
  }

  const std::vector<ProgramStep>& steps_;
  const std::vector<ProgramColumn>& columns_;
  std::unique_ptr<BlockStack> stack_;
  // Per slot: every row of the block is non-NULL there (its NULL flags all
  // 0), as the step that wrote it over the whole block left it.
  bool no_nulls_[kProgramStackDepth] = {};
};

// The row-by-row form, for programs the block evaluator does not take.
uint32_t evaluate_one_by_one(const ColumnProgram& program, const std::vector<ProgramColumn>& cols, size_t begin,
                             size_t end, uint8_t* mask, void* values, uint8_t* validity) {
  const uint8_t* skip = program.result == ProgramResult::boolean ? nullptr : mask;
  const ProgramStep* steps = program.steps.data();
  const int count = static_cast<int>(program.steps.size());
  uint32_t error = 0;
  for (size_t r = begin; r < end; ++r) {
    if (skip != nullptr && skip[r] == 0) {
      static_cast<int64_t*>(values)[r] = 0;
      validity[r] = 0;
      continue;
    }
    const ProgramSlot v = run_program_row(steps, count, cols.data(), r, &error);
    switch (program.result) {
      case ProgramResult::boolean: mask[r] = program_passes(v) ? 1 : 0; break;
      case ProgramResult::int64: static_cast<int64_t*>(values)[r] = program_int64(v, &error); validity[r] = !v.null; break;
      case ProgramResult::float64: static_cast<double*>(values)[r] = v.f; validity[r] = !v.null; break;
    }
  }
  return error;
}

}  // namespace

bool program_runs_in_blocks(const ColumnProgram& program) {
  const int count = static_cast<int>(program.steps.size());
  return count > 0 && checked_depth(program.steps, 0, count, 0) >= 1;
}

uint32_t evaluate_program_rows(const ColumnProgram& program, const std::vector<ProgramColumn>& columns, size_t begin,
                               size_t end, uint8_t* mask, void* values, uint8_t* validity) {
  if (begin >= end) return 0;
  std::vector<ColumnComparison> comparisons;
  if (comparison_conjunction(program, columns, comparisons)) {
    evaluate_comparisons(comparisons, columns, begin, end, mask);
    return 0;
  }
  if (!program_runs_in_blocks(program)) {
    return evaluate_one_by_one(program, columns, begin, end, mask, values, validity);
  }
  // An input program reads `mask` as the row filter's result: rows it
  // dropped are left NULL and not computed.
  const uint8_t* skip = program.result == ProgramResult::boolean ? nullptr : mask;
  const int count = static_cast<int>(program.steps.size());
  BlockRun block(program, columns);
  BlockStack& st = block.stack();
  uint16_t kept[kBlockRows];
  for (size_t base = begin; base < end; base += kBlockRows) {
    const size_t n = std::min(kBlockRows, end - base);
    Selection sel{nullptr, n};   // the rows whose values are written
    Selection eval{nullptr, n};  // the rows evaluated
    if (skip != nullptr) {
      size_t m = 0;
      for (size_t k = 0; k < n; ++k) {
        kept[m] = static_cast<uint16_t>(k);
        m += skip[base + k] != 0 ? 1 : 0;
      }
      if (m < n) {
        for (size_t k = 0; k < n; ++k) {
          if (skip[base + k] == 0) {
            static_cast<int64_t*>(values)[base + k] = 0;
            validity[base + k] = 0;
          }
        }
        sel = Selection{kept, m};
      }
      if (m == 0) continue;
      // A block that keeps most of its rows is evaluated whole, in the
      // loops without a row list or NULL tests, and its dropped rows'
      // values are discarded; where that raised an error (possibly a
      // dropped row's, which PostgreSQL never computes) the block runs
      // again over its kept rows alone.
      if (m == n || 8 * m < 7 * n) eval = sel;
    }
    const uint32_t error_before = block.error;
    int top = block.run(0, count, eval, base, -1);
    if (eval.rows == nullptr && sel.rows != nullptr && block.error != error_before) {
      block.error = error_before;
      top = block.run(0, count, sel, base, -1);
    }
    const __int128* iv = st.i[top];
    const uint8_t* nv = st.null[top];
    switch (program.result) {
      case ProgramResult::boolean:
        for (size_t k = 0; k < n; ++k) mask[base + k] = (!nv[k] && iv[k] != 0) ? 1 : 0;
        break;
      case ProgramResult::int64: {
        int64_t* out = static_cast<int64_t*>(values) + base;
        uint32_t err = 0;
        each_row(sel, [&](size_t k) {
          if (!nv[k] && (iv[k] > INT64_MAX || iv[k] < INT64_MIN)) err |= kProgramOverflow;
          out[k] = static_cast<int64_t>(iv[k]);
          validity[base + k] = !nv[k];
        });
        block.error |= err;
        break;
      }
      case ProgramResult::float64: {
        double* out = static_cast<double*>(values) + base;
        const double* fv = st.f[top];
        each_row(sel, [&](size_t k) {
          out[k] = fv[k];
          validity[base + k] = !nv[k];
        });
        break;
      }
    }
  }
  return block.error;
}

}  // namespace tally
