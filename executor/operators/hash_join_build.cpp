#include "executor/operators/hash_join_build.hpp"

#include "executor/cpu/parallel.hpp"

namespace tally::executor {

HeldSide hold_side(const PhysicalOperator& op, const std::vector<ExprPtr>& keys, size_t space_width,
                   ExecContext& context) {
  HeldSide side;
  {
    BuildSink sink(op.columns());
    op.run(context, sink);
    side.rows = sink.take();
    side.memory = sink.take_reservation();
    // The chains (two row numbers per row, with buckets) count too.
    side.memory.grow(side.rows.rows * 3 * sizeof(uint32_t));
  }
  if (keys.empty()) return side;
  const size_t rows = side.rows.rows;
  side.keys = evaluate_all(keys, space_input(side.rows, op.layout(), space_width, context.parameters));
  std::vector<uint64_t> hashes(rows);
  cpu::parallel_for(rows >= 2 * kMinRowsPerPart ? worker_threads(context) : 1, rows, [&](int, size_t b, size_t e) {
    for (size_t r = b; r < e; ++r) hashes[r] = key_hash(side.keys, r);
  });
  if (context.cancel) context.cancel->check();
  side.chains.build(side.keys, rows, &hashes);
  return side;
}

}  // namespace tally::executor
