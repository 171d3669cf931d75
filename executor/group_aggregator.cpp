#include "executor/group_aggregator.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <optional>
#include <span>
#include <thread>

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
// aggregates see all of a group's rows). Aggregates whose accumulators
// merge are instead accumulated per chunk on the workers where a chunk's
// rows have few groups (a global aggregate, a GROUP BY of a few years),
// and those partial groups merged in chunk order.
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
    if (keys_.empty()) new_group(shards_[0], kEmptyKeyHash, {});  // one row even without input
    merges_ = true;
    for (const auto& a : aggregates_) merges_ = merges_ && accumulators_merge(a.signature, a.distinct);
  }

  // Groups by key tuple: each group's key values and one accumulator per
  // aggregate, in arrays of `width` entries a group, and an open-addressing
  // index of group ids by hash. A group costs no allocation of its own
  // beyond its accumulators and long strings (tallyd's threads share one
  // malloc arena: common/heap_retention.hpp).
  struct Groups {
    size_t key_width = 0, state_width = 0;
    std::vector<Value> keys;  // key_width values per group
    std::vector<uint64_t> hashes;
    std::vector<std::unique_ptr<Accumulator>> states;  // state_width per group
    std::vector<uint32_t> slots;  // group id + 1; 0 = empty; a power of two, at most half full
    size_t size() const { return hashes.size(); }
    std::span<const Value> key(size_t g) const { return {keys.data() + g * key_width, key_width}; }
    std::unique_ptr<Accumulator>* state(size_t g) { return states.data() + g * state_width; }
    const std::unique_ptr<Accumulator>* state(size_t g) const { return states.data() + g * state_width; }
  };
  // The keys', arguments' and FILTERs' values of a chunk's rows: evaluated
  // in prepare(), on the source's worker threads, several chunks at once
  // (the rows' expressions, a CASE over a join's rows, cost more than
  // their accumulation); sink_prepared() takes them in chunk order.
  // Where every aggregate's accumulators merge (accumulators_merge) and the
  // chunk's rows fall into few groups, prepare() also accumulates them into
  // the chunk's own groups (`partial`), so that sink_prepared() only merges
  // those: the per-row work (the values' conversion, the group look-up, the
  // arithmetic) runs on the workers, not one group's rows on one thread.
  struct Evaluated final : PreparedWork {
    std::vector<Vector> keys;
    std::vector<std::vector<Vector>> args;
    std::vector<Vector> filters;
    std::optional<Groups> partial;
    // Each row's key hash where the rows go to several shards: computed
    // once, each shard then reads the keys of its own rows only.
    std::vector<uint64_t> hashes;
  };

  std::shared_ptr<PreparedWork> prepare(const EvalInput& rows) const override {
    auto work = std::make_shared<Evaluated>();
    evaluate(rows, *work);
    if (merges_ && !partials_abandoned_.load(std::memory_order_relaxed)) accumulate_partial(*work, rows.rows);
    if (!work->partial) hash_rows(*work, rows.rows);
    return work;
  }

  void sink_prepared(PreparedWork* work, const EvalInput& rows) override {
    if (work == nullptr) {
      sink(rows);
      return;
    }
    const auto& e = static_cast<const Evaluated&>(*work);
    if (e.partial) {
      merge_partial(*e.partial);
      return;
    }
    sink_evaluated(e, rows.rows);
  }

  void sink(const EvalInput& rows) override {
    Evaluated e;
    evaluate(rows, e);
    hash_rows(e, rows.rows);
    sink_evaluated(e, rows.rows);
  }

  void hash_rows(Evaluated& e, size_t nrows) const {
    if (shards_.size() == 1) return;
    e.hashes.resize(nrows);
    std::vector<Value> key(keys_.size());
    for (size_t r = 0; r < nrows; ++r) e.hashes[r] = key_at(e.keys, r, key);
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

  void sink_evaluated(const Evaluated& e, size_t nrows) {
    const size_t shards = shards_.size();
    if (shards == 1 || nrows < kMinParallelRows) {
      sink_shard(shards_[0], e, nrows, shards == 1 ? -1 : 0);
      if (shards > 1) {
        for (size_t t = 1; t < shards; ++t) sink_shard(shards_[t], e, nrows, static_cast<int>(t));
      }
      return;
    }
    // One part per shard, on the process-wide worker pool (no threads
    // started per chunk).
    cpu::parallel_for(static_cast<int>(shards), shards, [&](int, size_t begin, size_t end) {
      for (size_t t = begin; t < end; ++t) {
        sink_shard(shards_[t], e, nrows, static_cast<int>(t));
      }
    });
  }

  size_t finalize(std::vector<Vector>& columns) override {
    size_t groups = 0;
    for (const auto& shard : shards_) groups += shard.size();
    for (size_t k = 0; k < keys_.size(); ++k) {
      Vector v(keys_[k]->type);
      v.reserve(groups);
      for (const auto& shard : shards_) {
        for (size_t g = 0; g < shard.size(); ++g) v.push(shard.key(g)[k]);
      }
      columns.push_back(std::move(v));
    }
    for (size_t a = 0; a < aggregates_.size(); ++a) {
      Vector v(aggregates_[a].signature.result_type);
      v.reserve(groups);
      CancelTicker ticker;
      for (const auto& shard : shards_) {
        for (size_t g = 0; g < shard.size(); ++g) {
          ticker.tick();
          v.push(shard.state(g)[a]->result());
        }
      }
      columns.push_back(std::move(v));
    }
    return groups;
  }

  std::vector<std::string> explain() const override {
    std::string line = shards_.size() == 1 ? "Engine: cpu (generic hash aggregation, single-threaded"
                                           : "Engine: cpu (generic hash aggregation, " + std::to_string(shards_.size()) +
                                                 " threads, rows split by key hash";
    const uint64_t merged = partials_merged_.load(std::memory_order_relaxed);
    if (merged > 0) line += "; " + std::to_string(merged) + " chunks accumulated on the workers and merged";
    return {line + ")"};
  }

 private:
  struct Shard : Groups {
    // Against the statement's memory budget, per group: the index's node,
    // the key's values and the accumulators (their own kept values count
    // themselves).
    BlockReservation memory;
  };

  // A chunk's partial groups pay while they are at most this share of its
  // rows (merging a group costs about what adding a row does).
  static constexpr size_t kRowsPerPartialGroup = 4;
  static constexpr size_t kPartialGroupSlack = 4096;

  // prepare()'s accumulation of `work`'s rows into their own groups. Gives
  // up (leaving `partial` empty, and telling later chunks not to try) when
  // the rows have too many groups for the merge to be the smaller work; the
  // chunk's groups are few, so they are not counted against the budget.
  void accumulate_partial(Evaluated& work, size_t nrows) const {
    Groups& local = work.partial.emplace();
    const size_t most_groups = std::max<size_t>(1, nrows / kRowsPerPartialGroup);
    std::vector<Value> key(keys_.size());
    std::vector<std::vector<Value>> args(aggregates_.size());
    for (size_t r = 0; r < nrows; ++r) {
      const uint64_t h = key_at(work.keys, r, key);
      size_t group = 0;
      if (!find_group(local, h, key, group)) {
        // Judged on the rows so far too (with slack for a chunk's first
        // rows, where every group is new), so that rows of mostly new keys
        // give up early.
        if (local.size() == most_groups || local.size() * kRowsPerPartialGroup > r + kPartialGroupSlack) {
          partials_abandoned_.store(true, std::memory_order_relaxed);
          work.partial.reset();
          return;
        }
        group = add_group(local, h, key);
      }
      add_row(local.state(group), work.args, work.filters, r, args);
    }
    // The values are in the groups now; the chunk in flight holds less.
    work.keys.clear();
    work.args.clear();
    work.filters.clear();
  }

  // sink_prepared()'s half: each of the chunk's groups into its shard's.
  void merge_partial(const Groups& partial) {
    const uint64_t shards = shards_.size();
    for (size_t g = 0; g < partial.size(); ++g) {
      const uint64_t h = partial.hashes[g];
      Shard& shard = shards_[shards == 1 ? 0 : shard_of(h, shards)];
      size_t group = 0;
      if (!find_group(shard, h, partial.key(g), group)) group = new_group(shard, h, partial.key(g));
      for (size_t a = 0; a < aggregates_.size(); ++a) shard.state(group)[a]->merge(*partial.state(g)[a]);
    }
    partials_merged_.fetch_add(1, std::memory_order_relaxed);
  }

  // Row r's key values (into `key`) and their hash.
  uint64_t key_at(const std::vector<Vector>& key_values, size_t r, std::vector<Value>& key) const {
    uint64_t h = kEmptyKeyHash;
    for (size_t k = 0; k < keys_.size(); ++k) {
      key_values[k].get_into(r, key[k]);
      h = (h * 0x100000001b3ULL) ^ hash_value(key[k]);
    }
    return h;
  }

  // High bits pick the shard (the index uses the whole hash).
  static uint64_t shard_of(uint64_t h, uint64_t shards) { return ((h * 0x9E3779B97F4A7C15ULL) >> 40) % shards; }

  // Row r's arguments into a group's accumulators (FILTERs applied).
  // args[a] holds aggregate a's argument Values from row to row, so that
  // get_into reuses their strings (no allocation per row and argument).
  void add_row(std::unique_ptr<Accumulator>* states, const std::vector<std::vector<Vector>>& arg_values,
               const std::vector<Vector>& filters, size_t r, std::vector<std::vector<Value>>& args) const {
    static const Value kNoArgument = Null{};
    for (size_t a = 0; a < aggregates_.size(); ++a) {
      if (aggregates_[a].filter && (filters[a].null_at(r) || !filters[a].ints[r])) continue;
      const auto& values = arg_values[a];
      if (values.empty()) {
        states[a]->add(&kNoArgument);
        continue;
      }
      std::vector<Value>& row = args[a];
      row.resize(values.size());
      for (size_t i = 0; i < values.size(); ++i) values[i].get_into(r, row[i]);
      states[a]->add(row.data());
    }
  }

  static bool find_group(const Groups& table, uint64_t h, std::span<const Value> key, size_t& found) {
    if (table.slots.empty()) return false;
    const size_t mask = table.slots.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const uint32_t slot = table.slots[i];
      if (slot == 0) return false;
      const size_t id = slot - 1;
      if (table.hashes[id] != h) continue;
      const std::span<const Value> g = table.key(id);
      bool same = true;
      for (size_t k = 0; k < key.size() && same; ++k) {
        const bool n1 = is_null(g[k]), n2 = is_null(key[k]);
        same = n1 == n2 && (n1 || compare_values(g[k], key[k]) == 0);
      }
      if (same) {
        found = id;
        return true;
      }
    }
  }

  static void index_group(Groups& table, size_t id) {
    const size_t mask = table.slots.size() - 1;
    size_t i = table.hashes[id] & mask;
    while (table.slots[i] != 0) i = (i + 1) & mask;
    table.slots[i] = static_cast<uint32_t>(id + 1);
  }

  // A new group of `table` (indexed under h), its accumulators fresh.
  size_t add_group(Groups& table, uint64_t h, std::span<const Value> key) const {
    table.key_width = keys_.size();
    table.state_width = aggregates_.size();
    const size_t id = table.size();
    table.keys.insert(table.keys.end(), key.begin(), key.end());
    table.hashes.push_back(h);
    for (size_t a = 0; a < aggregates_.size(); ++a) {
      table.states.push_back(
          make_accumulator(aggregates_[a].signature, aggregates_[a].distinct, directs_[a], aggregates_[a].descending));
    }
    if (2 * (id + 1) > table.slots.size()) {
      table.slots.assign(std::max<size_t>(64, 2 * table.slots.size()), 0);
      for (size_t g = 0; g <= id; ++g) index_group(table, g);
    } else {
      index_group(table, id);
    }
    return id;
  }

  // The rows of one chunk whose key hash belongs to `shard` (-1: every row).
  void sink_shard(Shard& shard, const Evaluated& e, size_t nrows, int shard_id) {
    std::vector<Value> key(keys_.size());
    std::vector<std::vector<Value>> args(aggregates_.size());
    const uint64_t shards = shards_.size();
    // Per-row Value work: a chunk takes long enough to check inside it (on
    // the statement's thread; pool workers have no token and finish the chunk).
    CancelTicker ticker;
    for (size_t r = 0; r < nrows; ++r) {
      ticker.tick();
      if (shard_id >= 0 && shard_of(e.hashes[r], shards) != static_cast<uint64_t>(shard_id)) continue;
      const uint64_t h = key_at(e.keys, r, key);
      size_t group = 0;
      if (!find_group(shard, h, key, group)) group = new_group(shard, h, key);
      add_row(shard.state(group), e.args, e.filters, r, args);
    }
  }

  // A new group of a shard, counted against the budget.
  size_t new_group(Shard& shard, uint64_t h, std::span<const Value> key) {
    shard.memory.add();
    return add_group(shard, h, key);
  }

  const std::vector<ExprPtr>& keys_;
  const std::vector<AggregateCall>& aggregates_;
  std::vector<Value> directs_;
  std::vector<Shard> shards_;
  bool merges_ = false;  // every aggregate's accumulators merge()
  mutable std::atomic<bool> partials_abandoned_{false};
  std::atomic<uint64_t> partials_merged_{0};
};

}  // namespace

std::unique_ptr<GroupAggregator> make_group_aggregator(const std::vector<ExprPtr>& keys,
                                                       const std::vector<AggregateCall>& aggregates,
                                                       const ExecContext& context, const TableSnapshot* table,
                                                       const Expr* where, RowFeed feed) {
  if (context.engine != "generic") {
    if (auto engine = make_engine_aggregator(keys, aggregates, context, table, where, feed)) return engine;
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
