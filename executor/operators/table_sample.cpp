#include "executor/operators/table_sample.hpp"

#include <algorithm>
#include <bit>
#include <random>

#include "common/error.hpp"
#include "common/murmur_mix.hpp"
#include "executor/operators/chunk_ops.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {

TableSample::TableSample(std::unique_ptr<PhysicalOperator> scan, SampleMethod method, ExprPtr percent, ExprPtr seed,
                         std::string relation)
    : PhysicalOperator(scan->columns(), 0),
      method_(method),
      percent_(std::move(percent)),
      seed_(std::move(seed)),
      relation_(std::move(relation)) {
  estimated_rows_ = scan->estimated_rows();
  if (const auto* constant = dynamic_cast<const ConstExpr*>(percent_.get()); constant && !is_null(constant->value)) {
    estimated_rows_ *= std::clamp(std::get<double>(constant->value), 0.0, 100.0) / 100.0;
  }
  layout_ = scan->layout();
  children_.push_back(std::move(scan));
}

std::vector<std::string> TableSample::details() const {
  return {std::string("Sampling: ") + (method_ == SampleMethod::bernoulli ? "bernoulli" : "system") +
          (seed_ ? " REPEATABLE" : "")};
}

bool TableSample::keeps(SampleMethod method, uint64_t seed, double percent, uint64_t row) {
  if (percent >= 100) return true;
  const uint64_t unit = method == SampleMethod::bernoulli ? row : row / kSystemBlockRows;
  // The hash's top 53 bits as a fraction in [0, 1).
  const double draw = static_cast<double>(murmur_fmix64(seed ^ murmur_fmix64(unit)) >> 11) * 0x1.0p-53;
  return draw * 100 < percent;
}

void TableSample::run(ExecContext& context, ChunkSink& sink) const {
  // PostgreSQL's checks and SQLSTATEs (tablesample/bernoulli.c, system.c, nodeSamplescan.c).
  const Value percent_value = evaluate_constant(*percent_, context.parameters);
  if (is_null(percent_value)) {
    throw Error(SqlState::invalid_tablesample_argument, "TABLESAMPLE parameter cannot be null");
  }
  const double percent = std::get<double>(percent_value);
  if (!(percent >= 0 && percent <= 100)) {
    throw Error(SqlState::invalid_tablesample_argument, "sample percentage must be between 0 and 100");
  }
  uint64_t seed = 0;
  if (seed_) {
    const Value seed_value = evaluate_constant(*seed_, context.parameters);
    if (is_null(seed_value)) {
      throw Error(SqlState::invalid_tablesample_repeat, "TABLESAMPLE REPEATABLE parameter cannot be null");
    }
    seed = std::bit_cast<uint64_t>(std::get<double>(seed_value) + 0.0);  // -0 as 0
  } else {
    seed = std::random_device{}() * 0x100000001ull ^ std::random_device{}();
  }
  struct Sampling final : ChunkSink {
    const TableSample& self;
    ChunkSink& next;
    uint64_t seed;
    double percent;
    uint64_t row = 0;  // the table's row number of the chunk's first row
    Sampling(const TableSample& s, ChunkSink& n, uint64_t sd, double p) : self(s), next(n), seed(sd), percent(p) {}
    bool consume(DataChunk& chunk) override {
      std::vector<uint32_t> kept;
      for (size_t r = 0; r < chunk.rows; ++r) {
        if (keeps(self.method_, seed, percent, row + r)) kept.push_back(static_cast<uint32_t>(r));
      }
      row += chunk.rows;
      if (kept.empty()) return true;
      if (kept.size() == chunk.rows) return next.consume(chunk);
      DataChunk out = gather_chunk(chunk, kept);
      return next.consume(out);
    }
  } sampling(*this, sink, seed, percent);
  run_operator(*children_[0], context, sampling);
}

}  // namespace tally::executor
