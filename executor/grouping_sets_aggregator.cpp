#include "executor/grouping_sets_aggregator.hpp"

#include <algorithm>

#include "executor/operators/chunk_ops.hpp"
#include "executor/select_plan_detail.hpp"

namespace tally::executor {

namespace {

class GroupingSetsAggregator final : public GroupAggregator {
 public:
  GroupingSetsAggregator(const SelectPlan& plan, const ExecContext& context, const TableSnapshot* table) : plan_(plan) {
    for (const auto& set : plan.grouping_sets) {
      sets_.push_back(make_group_aggregator(set.key_exprs, plan.aggregates, context, table));
    }
  }

  int passes() const override {
    int most = 1;
    for (const auto& a : sets_) most = std::max(most, a->passes());
    return most;
  }
  void begin_pass(int pass) override {
    pass_ = pass;
    for (const auto& a : sets_) {
      if (pass < a->passes()) a->begin_pass(pass);
    }
  }
  void sink(const EvalInput& rows) override {
    for (const auto& a : sets_) {
      if (pass_ < a->passes()) a->sink(rows);
    }
  }

  size_t finalize(std::vector<Vector>& columns) override {
    const size_t nkeys = plan_.group_keys.size();
    for (const auto& k : plan_.group_keys) columns.emplace_back(k->type);
    for (const auto& a : plan_.aggregates) columns.emplace_back(a.signature.result_type);
    for (size_t c = 0; c < plan_.grouping_calls.size(); ++c) columns.emplace_back(SqlType{TypeId::int4});
    size_t total = 0;
    for (size_t s = 0; s < sets_.size(); ++s) {
      const auto& keys = plan_.grouping_sets[s].keys;
      std::vector<Vector> part;
      const size_t groups = sets_[s]->finalize(part);
      for (size_t k = 0; k < nkeys; ++k) {
        const auto at = std::find(keys.begin(), keys.end(), static_cast<int>(k));
        if (at != keys.end()) {
          append_vector(columns[k], part[static_cast<size_t>(at - keys.begin())]);
        } else {
          append_vector(columns[k], broadcast(columns[k].type, Value{Null{}}, groups));
        }
      }
      for (size_t a = 0; a < plan_.aggregates.size(); ++a) append_vector(columns[nkeys + a], part[keys.size() + a]);
      for (size_t c = 0; c < plan_.grouping_calls.size(); ++c) {
        int64_t bits = 0;
        for (int arg : plan_.grouping_calls[c]) {
          bits = bits << 1 | (std::find(keys.begin(), keys.end(), arg) == keys.end() ? 1 : 0);
        }
        append_vector(columns[nkeys + plan_.aggregates.size() + c], broadcast(SqlType{TypeId::int4}, Value{bits}, groups));
      }
      total += groups;
    }
    return total;
  }

  std::vector<std::string> explain() const override {
    std::vector<std::string> lines;
    for (size_t s = 0; s < sets_.size(); ++s) {
      lines.push_back("Grouping set " + std::to_string(s + 1) + " (keys: " +
                      std::to_string(plan_.grouping_sets[s].keys.size()) + ")");
      for (auto& line : sets_[s]->explain()) lines.push_back("  " + line);
    }
    return lines;
  }

 private:
  const SelectPlan& plan_;
  std::vector<std::unique_ptr<GroupAggregator>> sets_;
  int pass_ = 0;
};

}  // namespace

std::unique_ptr<GroupAggregator> make_grouping_sets_aggregator(const SelectPlan& plan, const ExecContext& context,
                                                               const TableSnapshot* table) {
  return std::make_unique<GroupingSetsAggregator>(plan, context, table);
}

}  // namespace tally::executor
