#pragma once
// A key tuple (AggregationSpec::key_tuple) on the host: this run gives each
// chunk's rows their tuple ids (TupleKeyMap) and hands the chunk on to the
// run of the same aggregates over one int64 key (any CPU variant, or the
// ordered-set run beside the GPU's), then returns each result group's key
// column values with the inner run's states. Without aggregates (a
// DISTINCT, or the inner grouping of count(DISTINCT)'s rewrite) the ids are
// the groups, and no inner run hashes them again.
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "executor/cpu/tuple_key_map.hpp"

namespace tally::executor::cpu {

class TupleKeyRun final : public AggregationRun {
 public:
  using InnerFactory = std::function<std::unique_ptr<AggregationRun>(const AggregationSpec&)>;
  // The spec over tuple ids: one int64 key, no parts, range unknown.
  static AggregationSpec inner_spec(const AggregationSpec& spec);
  TupleKeyRun(const AggregationSpec& spec, const InnerFactory& make_inner);

  int passes() const override { return inner_ ? inner_->passes() : 1; }
  void begin_pass(int pass) override {
    if (inner_) inner_->begin_pass(pass);
  }
  void sink(const ChunkInput& chunk) override;
  AggregationResult finalize() override;
  AggregationReport report() const override;

 private:
  TupleKeyMap map_;
  int threads_ = 1;
  std::unique_ptr<AggregationRun> inner_;  // none without aggregates
  uint64_t rows_ = 0;
  std::vector<int64_t> ids_;  // the current chunk's
  double assign_ms_ = 0, codes_ms_ = 0;
};

}  // namespace tally::executor::cpu
