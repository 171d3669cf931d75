#include "executor/row_selection.hpp"

#include <algorithm>
#include <numeric>

#include "executor/cpu/parallel.hpp"
#include "executor/cpu/worker_pool.hpp"
#include "executor/operators/chunk_ops.hpp"
#include "executor/plan_expressions.hpp"

namespace tally::executor {
namespace {

// Groups below which HAVING is evaluated on one thread (per part beyond).
constexpr size_t kHavingRowsPerPart = size_t{1} << 16;

}  // namespace

std::vector<uint32_t> select_rows(const Expr* where, const EvalInput& input) {
  std::vector<uint32_t> rows;
  if (where == nullptr) {
    rows.resize(input.rows);
    std::iota(rows.begin(), rows.end(), 0u);
    return rows;
  }
  // No row evaluates the condition: a subquery in it that would raise an
  // error does not run (HAVING over no groups, as PostgreSQL's).
  if (input.rows == 0) return rows;
  Vector mask = where->evaluate(input);
  rows.reserve(input.rows);
  for (size_t r = 0; r < input.rows; ++r) {
    if (!mask.null_at(r) && mask.ints[r]) rows.push_back(static_cast<uint32_t>(r));
  }
  return rows;
}

std::vector<uint32_t> select_rows_in_parts(Expr* where, const EvalInput& input, int parts) {
  if (where == nullptr || parts <= 1) return select_rows(where, input);
  // Each part copies only the columns the condition reads.
  std::vector<std::vector<uint32_t>> kept(static_cast<size_t>(parts));
  cpu::parallel_for(parts, input.rows, [&](int part, size_t begin, size_t end) {
    std::vector<uint32_t> range(end - begin);
    std::iota(range.begin(), range.end(), static_cast<uint32_t>(begin));
    std::vector<Vector> slices;
    const EvalInput slice = narrowed_input(input, range, {where}, slices);
    std::vector<uint32_t>& mine = kept[static_cast<size_t>(part)];
    for (const uint32_t r : select_rows(where, slice)) mine.push_back(r + static_cast<uint32_t>(begin));
  });
  std::vector<uint32_t> rows;
  for (const auto& part : kept) rows.insert(rows.end(), part.begin(), part.end());
  return rows;
}

int having_parts_for(Expr& having, size_t groups, int threads) {
  if (groups < 2 * kHavingRowsPerPart || has_volatile_function(having)) return 1;
  const int cores = threads > 0 ? threads : cpu::WorkerPool::shared().workers() + 1;
  return static_cast<int>(std::min<size_t>(static_cast<size_t>(cores), groups / kHavingRowsPerPart));
}

}  // namespace tally::executor
