#include "executor/group_aggregator.hpp"

#include <unordered_map>

#include "common/error.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {
namespace {

// Generic path: a hash table from key tuples to groups, one Accumulator per
// group and aggregate. Handles every type and aggregate; the fast engines take
// the common shapes.
class GenericAggregator final : public GroupAggregator {
 public:
  static constexpr uint64_t kEmptyKeyHash = 0x12345;
  GenericAggregator(const std::vector<ExprPtr>& keys, const std::vector<AggregateCall>& aggregates,
                    const ExecContext& context)
      : keys_(keys), aggregates_(aggregates) {
    for (const auto& a : aggregates_) {
      directs_.push_back(a.direct ? evaluate_constant(*a.direct, context.parameters) : Value{Null{}});
    }
    if (keys_.empty()) index_.emplace(kEmptyKeyHash, new_group({}));  // one row even without input
  }

  void sink(const EvalInput& rows) override {
    std::vector<Vector> key_values;
    for (const auto& k : keys_) key_values.push_back(k->evaluate(rows));
    std::vector<std::vector<Vector>> arg_values(aggregates_.size());
    std::vector<Vector> filters(aggregates_.size());
    for (size_t a = 0; a < aggregates_.size(); ++a) {
      for (const auto& e : aggregates_[a].args) arg_values[a].push_back(e->evaluate(rows));
      if (aggregates_[a].filter) filters[a] = aggregates_[a].filter->evaluate(rows);
    }
    std::vector<Value> key(keys_.size());
    std::vector<Value> args;
    for (size_t r = 0; r < rows.rows; ++r) {
      uint64_t h = kEmptyKeyHash;
      for (size_t k = 0; k < keys_.size(); ++k) {
        key[k] = key_values[k].get(r);
        h = (h * 0x100000001b3ULL) ^ hash_value(key[k]);
      }
      size_t group = find_or_add(h, key);
      for (size_t a = 0; a < aggregates_.size(); ++a) {
        if (aggregates_[a].filter && (filters[a].null_at(r) || !filters[a].ints[r])) continue;
        args.clear();
        for (const auto& v : arg_values[a]) args.push_back(v.get(r));
        if (args.empty()) args.push_back(Null{});
        states_[group][a]->add(args.data());
      }
    }
  }

  size_t finalize(std::vector<Vector>& columns) override {
    for (size_t k = 0; k < keys_.size(); ++k) {
      Vector v(keys_[k]->type);
      v.reserve(groups_.size());
      for (const auto& g : groups_) v.push(g[k]);
      columns.push_back(std::move(v));
    }
    for (size_t a = 0; a < aggregates_.size(); ++a) {
      Vector v(aggregates_[a].signature.result_type);
      v.reserve(groups_.size());
      for (const auto& s : states_) v.push(s[a]->result());
      columns.push_back(std::move(v));
    }
    return groups_.size();
  }

  std::vector<std::string> explain() const override {
    return {"Engine: cpu (generic hash aggregation, single-threaded)"};
  }

 private:
  size_t find_or_add(uint64_t h, const std::vector<Value>& key) {
    auto range = index_.equal_range(h);
    for (auto it = range.first; it != range.second; ++it) {
      const auto& g = groups_[it->second];
      bool same = true;
      for (size_t k = 0; k < key.size() && same; ++k) {
        const bool n1 = is_null(g[k]), n2 = is_null(key[k]);
        same = n1 == n2 && (n1 || compare_values(g[k], key[k]) == 0);
      }
      if (same) return it->second;
    }
    const size_t id = new_group(key);
    index_.emplace(h, id);
    return id;
  }

  size_t new_group(const std::vector<Value>& key) {
    groups_.push_back(key);
    std::vector<std::unique_ptr<Accumulator>> s;
    for (size_t a = 0; a < aggregates_.size(); ++a) {
      s.push_back(make_accumulator(aggregates_[a].signature, aggregates_[a].distinct, directs_[a], aggregates_[a].descending));
    }
    states_.push_back(std::move(s));
    return groups_.size() - 1;
  }

  const std::vector<ExprPtr>& keys_;
  const std::vector<AggregateCall>& aggregates_;
  std::vector<Value> directs_;
  std::unordered_multimap<uint64_t, size_t> index_;
  std::vector<std::vector<Value>> groups_;
  std::vector<std::vector<std::unique_ptr<Accumulator>>> states_;
};

}  // namespace

std::unique_ptr<GroupAggregator> make_group_aggregator(const std::vector<ExprPtr>& keys,
                                                       const std::vector<AggregateCall>& aggregates,
                                                       const ExecContext& context, const TableSnapshot* table) {
  if (context.engine != "generic") {
    if (auto engine = make_engine_aggregator(keys, aggregates, context, table)) return engine;
  }
  return std::make_unique<GenericAggregator>(keys, aggregates, context);
}

bool engine_can_run(const std::vector<AggregateCall>& aggregates);

std::string describe_engine_choice(const std::vector<ExprPtr>& keys, const std::vector<AggregateCall>& aggregates) {
  (void)keys;
  return engine_can_run(aggregates) ? "cpu (partial-state engine: dense or hash-partitioned by key range)"
                                    : "cpu generic (DISTINCT, ordered-set or type not taken by the engines)";
}

}  // namespace tally::executor
