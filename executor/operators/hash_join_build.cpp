#include "executor/operators/hash_join_build.hpp"

#include <algorithm>
#include <set>

#include "executor/cpu/parallel.hpp"
#include "executor/operators/table_scan.hpp"
#include "executor/plan_expressions.hpp"

namespace tally::executor {

HeldSide hold_side(const PhysicalOperator& op, const std::vector<ExprPtr>& keys, size_t space_width,
                   ExecContext& context) {
  HeldSide side;
  {
    BuildSink sink(op.columns(), worker_threads(context));
    run_operator(op, context, sink);
    side.rows = sink.take();
    side.memory = sink.take_reservation();
    // The chains (two row numbers per row, with buckets) count too.
    side.memory.grow(side.rows.rows * 3 * sizeof(uint32_t));
  }
  if (keys.empty()) return side;
  const size_t rows = side.rows.rows;
  side.keys = evaluate_all(keys, space_input(side.rows, op.layout(), space_width, context.parameters));
  side.chains.build_hashed(side.keys, rows, rows >= 2 * kMinRowsPerPart ? worker_threads(context) : 1);
  side.memory.grow(side.chains.bits_bytes());  // the keys' bitmaps, if made
  return side;
}

namespace {

bool integer_column_type(TypeId id) { return id == TypeId::int2 || id == TypeId::int4 || id == TypeId::int8; }

int comparison_op(const std::string& name) {
  static const char* const kOps[] = {"=", "<>", "<", "<=", ">", ">="};
  for (int op = 0; op < 6; ++op) {
    if (name == kOps[op]) return op;
  }
  return name == "!=" ? 1 : -1;
}

// The column of `layout` that `e` reads where it is a bare column; -1 otherwise.
int column_of(const Expr& e, const std::vector<int>& layout) {
  const auto* c = dynamic_cast<const ColumnExpr*>(&e);
  if (c == nullptr) return -1;
  const auto at = std::find(layout.begin(), layout.end(), c->index);
  return at == layout.end() ? -1 : static_cast<int>(at - layout.begin());
}

}  // namespace

ResidualTest::ResidualTest(const std::vector<ExprPtr>& residual, const PhysicalOperator& first,
                           const PhysicalOperator& second, size_t space_width)
    : residual_(residual), space_width_(space_width) {
  if (residual_.size() == 1) {
    const auto* f = dynamic_cast<const FunctionExpr*>(residual_[0].get());
    const int op = f != nullptr && f->args.size() == 2 ? comparison_op(f->name) : -1;
    if (op >= 0 && integer_column_type(f->args[0]->type.id) && integer_column_type(f->args[1]->type.id)) {
      const int a_first = column_of(*f->args[0], first.layout()), a_second = column_of(*f->args[0], second.layout());
      const int b_first = column_of(*f->args[1], first.layout()), b_second = column_of(*f->args[1], second.layout());
      if (a_first >= 0 && b_second >= 0 && a_second < 0 && b_first < 0) {
        comparison_ = ColumnComparison{static_cast<size_t>(a_first), static_cast<size_t>(b_second), true, op};
      } else if (a_second >= 0 && b_first >= 0 && a_first < 0 && b_second < 0) {
        comparison_ = ColumnComparison{static_cast<size_t>(b_first), static_cast<size_t>(a_second), false, op};
      }
    }
  }
  std::set<int> refs;
  for (const auto& e : residual_) collect_refs(*e, refs);
  for (size_t c = 0; c < first.layout().size(); ++c) {
    if (refs.count(first.layout()[c])) columns_.emplace_back(false, c), layout_.push_back(first.layout()[c]);
  }
  for (size_t c = 0; c < second.layout().size(); ++c) {
    if (refs.count(second.layout()[c])) columns_.emplace_back(true, c), layout_.push_back(second.layout()[c]);
  }
  layout_.push_back(static_cast<int>(space_width_));  // the pair numbers
}

std::vector<uint32_t> ResidualTest::compared(const DataChunk& first, const std::vector<uint32_t>& first_rows,
                                             const DataChunk& second, const std::vector<uint32_t>& second_rows) const {
  const Vector& x = first.columns[comparison_->first_column];
  const Vector& y = second.columns[comparison_->second_column];
  const int64_t* xs = x.int_data();
  const int64_t* ys = y.int_data();
  const bool nulls = !x.nulls.empty() || !y.nulls.empty();
  const bool a_first = comparison_->a_first;
  std::vector<uint32_t> out;
  out.reserve(first_rows.size());
  auto keep = [&](auto passes) {
    for (size_t i = 0; i < first_rows.size(); ++i) {
      const uint32_t fr = first_rows[i], sr = second_rows[i];
      // A NULL on either side compares to NULL, which does not pass.
      if (nulls && (x.null_at(fr) || y.null_at(sr))) continue;
      const int64_t a = a_first ? xs[fr] : ys[sr];
      const int64_t b = a_first ? ys[sr] : xs[fr];
      if (passes(a, b)) out.push_back(static_cast<uint32_t>(i));
    }
  };
  switch (comparison_->op) {
    case 0: keep([](int64_t a, int64_t b) { return a == b; }); break;
    case 1: keep([](int64_t a, int64_t b) { return a != b; }); break;
    case 2: keep([](int64_t a, int64_t b) { return a < b; }); break;
    case 3: keep([](int64_t a, int64_t b) { return a <= b; }); break;
    case 4: keep([](int64_t a, int64_t b) { return a > b; }); break;
    default: keep([](int64_t a, int64_t b) { return a >= b; }); break;
  }
  return out;
}

std::vector<uint32_t> ResidualTest::passing(const DataChunk& first, const std::vector<uint32_t>& first_rows,
                                            const DataChunk& second, const std::vector<uint32_t>& second_rows,
                                            const std::vector<Value>* parameters) const {
  if (comparison_) return compared(first, first_rows, second, second_rows);
  DataChunk pairs;
  pairs.rows = first_rows.size();
  for (const auto& [from_second, c] : columns_) {
    pairs.columns.push_back(from_second ? gather(second.columns[c], second_rows) : gather(first.columns[c], first_rows));
  }
  // The pair numbers ride along as a column so the filter keeps them in step.
  Vector index({TypeId::int8});
  index.resize(first_rows.size());
  for (size_t i = 0; i < first_rows.size(); ++i) index.ints[i] = static_cast<int64_t>(i);
  pairs.columns.push_back(std::move(index));
  filter_chunk(pairs, residual_, layout_, space_width_ + 1, parameters);
  std::vector<uint32_t> out;
  for (size_t i = 0; i < pairs.rows; ++i) out.push_back(static_cast<uint32_t>(pairs.columns.back().ints[i]));
  return out;
}

void run_matching_keys(const PhysicalOperator& op, const std::vector<ExprPtr>& keys, const HeldSide& held,
                       ExecContext& context, ChunkSink& sink) {
  const auto* scan = dynamic_cast<const TableScan*>(&op);
  if (scan == nullptr) {
    run_operator(op, context, sink);
    return;
  }
  KeyTest key_test;
  key_test.keys = &keys;
  key_test.chains = &held.chains;
  key_test.test = [&held](const std::vector<Vector>& values, size_t rows, std::vector<uint32_t>& keep) {
    held.chains.candidate_rows(held.keys, values, rows, keep);
  };
  key_test.exact_bits = [&held, threads = worker_threads(context)](uint64_t max_span, int64_t& min, uint64_t& span,
                                                                   std::vector<uint64_t>& words) {
    return KeyChains::exact_bits(held.keys, held.rows.rows, max_span, threads, min, span, words);
  };
  run_operator(*scan, context, sink, [&](ChunkSink& counted) { scan->run(context, counted, &key_test); });
}

}  // namespace tally::executor
