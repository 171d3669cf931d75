#include "executor/group_aggregator.hpp"

#include <exception>
#include <thread>
#include <unordered_map>

#include "common/error.hpp"
#include "executor/cancel_point.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {
namespace {

// Generic path: a hash table from key tuples to groups, one Accumulator per
// group and aggregate. Handles every type and aggregate (DISTINCT, ordered-set,
// min/max of text); the fast engines take the common shapes. With several
// threads, rows are split by key hash: each thread owns the groups of its
// hashes (its own table and accumulators, so DISTINCT and ordered-set
// aggregates see all of a group's rows), and nothing is merged.
class GenericAggregator final : public GroupAggregator {
 public:
  static constexpr uint64_t kEmptyKeyHash = 0x12345;
  // Rows per chunk below which one thread does the work (thread start-up
  // and the extra pass would cost more than they save).
  static constexpr size_t kMinParallelRows = 1 << 13;

  GenericAggregator(const std::vector<ExprPtr>& keys, const std::vector<AggregateCall>& aggregates,
                    const ExecContext& context)
      : keys_(keys), aggregates_(aggregates) {
    for (const auto& a : aggregates_) {
      directs_.push_back(a.direct ? evaluate_constant(*a.direct, context.parameters) : Value{Null{}});
    }
    // A global aggregate is one group: one thread.
    // (context.threads 0 = every core, as the engines read it.)
    const int threads = keys_.empty() ? 1
                        : context.threads > 0 ? context.threads
                                              : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    shards_.resize(static_cast<size_t>(threads));
    const size_t group_bytes = 64 + (keys_.size() + 1) * sizeof(Value) + aggregates_.size() * 96;
    for (Shard& shard : shards_) shard.memory = BlockReservation(group_bytes);
    if (keys_.empty()) shards_[0].index.emplace(kEmptyKeyHash, new_group(shards_[0], {}));  // one row even without input
  }

  // The keys', arguments' and FILTERs' values of a chunk's rows: evaluated
  // in prepare(), on the source's worker threads, several chunks at once
  // (the rows' expressions, a CASE over a join's rows, cost more than
  // their accumulation); sink_prepared() takes them in chunk order.
  struct Evaluated final : PreparedWork {
    std::vector<Vector> keys;
    std::vector<std::vector<Vector>> args;
    std::vector<Vector> filters;
  };

  std::shared_ptr<PreparedWork> prepare(const EvalInput& rows) const override {
    auto work = std::make_shared<Evaluated>();
    evaluate(rows, *work);
    return work;
  }

  void sink_prepared(PreparedWork* work, const EvalInput& rows) override {
    if (work == nullptr) {
      sink(rows);
      return;
    }
    const auto& e = static_cast<const Evaluated&>(*work);
    sink_evaluated(e.keys, e.args, e.filters, rows.rows);
  }

  void sink(const EvalInput& rows) override {
    Evaluated e;
    evaluate(rows, e);
    sink_evaluated(e.keys, e.args, e.filters, rows.rows);
  }

  void evaluate(const EvalInput& rows, Evaluated& out) const {
    for (const auto& k : keys_) out.keys.push_back(k->evaluate(rows));
    out.args.resize(aggregates_.size());
    out.filters.resize(aggregates_.size());
    for (size_t a = 0; a < aggregates_.size(); ++a) {
      for (const auto& e : aggregates_[a].args) out.args[a].push_back(e->evaluate(rows));
      if (aggregates_[a].filter) out.filters[a] = aggregates_[a].filter->evaluate(rows);
    }
  }

  void sink_evaluated(const std::vector<Vector>& key_values, const std::vector<std::vector<Vector>>& arg_values,
                      const std::vector<Vector>& filters, size_t nrows) {
    const size_t shards = shards_.size();
    if (shards == 1 || nrows < kMinParallelRows) {
      sink_shard(shards_[0], key_values, arg_values, filters, nrows, shards == 1 ? -1 : 0);
      if (shards > 1) {
        for (size_t t = 1; t < shards; ++t) sink_shard(shards_[t], key_values, arg_values, filters, nrows, static_cast<int>(t));
      }
      return;
    }
    // One part per shard, on the process-wide worker pool (no threads
    // started per chunk).
    cpu::parallel_for(static_cast<int>(shards), shards, [&](int, size_t begin, size_t end) {
      for (size_t t = begin; t < end; ++t) {
        sink_shard(shards_[t], key_values, arg_values, filters, nrows, static_cast<int>(t));
      }
    });
  }

  size_t finalize(std::vector<Vector>& columns) override {
    size_t groups = 0;
    for (const auto& shard : shards_) groups += shard.groups.size();
    for (size_t k = 0; k < keys_.size(); ++k) {
      Vector v(keys_[k]->type);
      v.reserve(groups);
      for (const auto& shard : shards_) {
        for (const auto& g : shard.groups) v.push(g[k]);
      }
      columns.push_back(std::move(v));
    }
    for (size_t a = 0; a < aggregates_.size(); ++a) {
      Vector v(aggregates_[a].signature.result_type);
      v.reserve(groups);
      CancelTicker ticker;
      for (const auto& shard : shards_) {
        for (const auto& s : shard.states) {
          ticker.tick();
          v.push(s[a]->result());
        }
      }
      columns.push_back(std::move(v));
    }
    return groups;
  }

  std::vector<std::string> explain() const override {
    if (shards_.size() == 1) return {"Engine: cpu (generic hash aggregation, single-threaded)"};
    return {"Engine: cpu (generic hash aggregation, " + std::to_string(shards_.size()) +
            " threads, rows split by key hash)"};
  }

 private:
  struct Shard {
    std::unordered_multimap<uint64_t, size_t> index;
    std::vector<std::vector<Value>> groups;
    std::vector<std::vector<std::unique_ptr<Accumulator>>> states;
    // Against the statement's memory budget, per group: the index's node,
    // the key's values and the accumulators (their own kept values count
    // themselves).
    BlockReservation memory;
  };

  // The rows of one chunk whose key hash belongs to `shard` (-1: every row).
  void sink_shard(Shard& shard, const std::vector<Vector>& key_values, const std::vector<std::vector<Vector>>& arg_values,
                  const std::vector<Vector>& filters, size_t nrows, int shard_id) {
    std::vector<Value> key(keys_.size());
    std::vector<Value> args;
    const uint64_t shards = shards_.size();
    // Per-row Value work: a chunk takes long enough to check inside it (on
    // the statement's thread; pool workers have no token and finish the chunk).
    CancelTicker ticker;
    for (size_t r = 0; r < nrows; ++r) {
      ticker.tick();
      uint64_t h = kEmptyKeyHash;
      for (size_t k = 0; k < keys_.size(); ++k) {
        key[k] = key_values[k].get(r);
        h = (h * 0x100000001b3ULL) ^ hash_value(key[k]);
      }
      // High bits pick the shard (the multimap uses the whole hash).
      if (shard_id >= 0 && ((h * 0x9E3779B97F4A7C15ULL) >> 40) % shards != static_cast<uint64_t>(shard_id)) continue;
      size_t group = find_or_add(shard, h, key);
      for (size_t a = 0; a < aggregates_.size(); ++a) {
        if (aggregates_[a].filter && (filters[a].null_at(r) || !filters[a].ints[r])) continue;
        args.clear();
        for (const auto& v : arg_values[a]) args.push_back(v.get(r));
        if (args.empty()) args.push_back(Null{});
        shard.states[group][a]->add(args.data());
      }
    }
  }

  size_t find_or_add(Shard& shard, uint64_t h, const std::vector<Value>& key) {
    auto range = shard.index.equal_range(h);
    for (auto it = range.first; it != range.second; ++it) {
      const auto& g = shard.groups[it->second];
      bool same = true;
      for (size_t k = 0; k < key.size() && same; ++k) {
        const bool n1 = is_null(g[k]), n2 = is_null(key[k]);
        same = n1 == n2 && (n1 || compare_values(g[k], key[k]) == 0);
      }
      if (same) return it->second;
    }
    const size_t id = new_group(shard, key);
    shard.index.emplace(h, id);
    return id;
  }

  size_t new_group(Shard& shard, const std::vector<Value>& key) {
    shard.memory.add();
    shard.groups.push_back(key);
    std::vector<std::unique_ptr<Accumulator>> s;
    for (size_t a = 0; a < aggregates_.size(); ++a) {
      s.push_back(make_accumulator(aggregates_[a].signature, aggregates_[a].distinct, directs_[a], aggregates_[a].descending));
    }
    shard.states.push_back(std::move(s));
    return shard.groups.size() - 1;
  }

  const std::vector<ExprPtr>& keys_;
  const std::vector<AggregateCall>& aggregates_;
  std::vector<Value> directs_;
  std::vector<Shard> shards_;
};

}  // namespace

std::unique_ptr<GroupAggregator> make_group_aggregator(const std::vector<ExprPtr>& keys,
                                                       const std::vector<AggregateCall>& aggregates,
                                                       const ExecContext& context, const TableSnapshot* table,
                                                       const Expr* where) {
  if (context.engine != "generic") {
    if (auto engine = make_engine_aggregator(keys, aggregates, context, table, where)) return engine;
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
