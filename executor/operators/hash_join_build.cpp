#include "executor/operators/hash_join_build.hpp"

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
  std::vector<uint64_t> hashes(rows);
  const int threads = rows >= 2 * kMinRowsPerPart ? worker_threads(context) : 1;
  cpu::parallel_for(threads, rows, [&](int, size_t b, size_t e) { key_hashes(side.keys, b, e, hashes.data() + b); });
  if (context.cancel) context.cancel->check();
  side.chains.build_parallel(side.keys, rows, hashes, threads);
  side.memory.grow(side.chains.bits_bytes());  // the keys' bitmaps, if made
  return side;
}

ResidualTest::ResidualTest(const std::vector<ExprPtr>& residual, const PhysicalOperator& first,
                           const PhysicalOperator& second, size_t space_width)
    : residual_(residual), space_width_(space_width) {
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

std::vector<uint32_t> ResidualTest::passing(const DataChunk& first, const std::vector<uint32_t>& first_rows,
                                            const DataChunk& second, const std::vector<uint32_t>& second_rows,
                                            const std::vector<Value>* parameters) const {
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
