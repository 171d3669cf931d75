#include "executor/operators/lateral_join.hpp"

#include <algorithm>
#include <unordered_map>

#include "common/error.hpp"
#include "common/memory_tracker.hpp"
#include "executor/operators/chunk_ops.hpp"
#include "executor/select_plan.hpp"
#include "executor/tuple_key.hpp"
#include "executor/value.hpp"

namespace tally::executor {

LateralJoin::LateralJoin(std::unique_ptr<PhysicalOperator> left, std::shared_ptr<const SelectPlan> plan,
                         std::vector<ExprPtr> correlated, std::string alias, std::vector<OutputColumn> lateral_columns,
                         std::vector<int> lateral_layout, bool left_join, std::vector<ExprPtr> on, size_t width,
                         double estimate)
    : PhysicalOperator(left->columns(), estimate),
      plan_(std::move(plan)),
      correlated_(std::move(correlated)),
      alias_(std::move(alias)),
      lateral_width_(lateral_columns.size()),
      left_join_(left_join),
      on_(std::move(on)),
      width_(width) {
  layout_ = left->layout();
  columns_.insert(columns_.end(), lateral_columns.begin(), lateral_columns.end());
  layout_.insert(layout_.end(), lateral_layout.begin(), lateral_layout.end());
  children_.push_back(std::move(left));
}

std::vector<std::string> LateralJoin::details() const {
  std::vector<std::string> lines;
  if (!on_.empty()) lines.push_back("Join Filter: " + std::to_string(on_.size()) + " condition(s)");
  return lines;
}

std::vector<ExplainNode> LateralJoin::subplans(const OperatorActuals* actuals) const {
  return {explain_select(*plan_, actuals)};
}

namespace {

// Subquery results kept for reuse by later left rows with the same outer
// values: past this many bytes the kept ones are dropped (each left row of a
// correlated scan may have a result of its own, and the left side may be
// any size).
constexpr uint64_t kKeptResultBytes = uint64_t{64} << 20;

// Rows [begin, end) of `src` appended to `dst`.
void append_rows(Vector& dst, const Vector& src, size_t begin, size_t end) {
  if (begin == 0 && end == src.size()) {
    append_vector(dst, src);
    return;
  }
  std::vector<uint32_t> rows(end - begin);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<uint32_t>(begin + i);
  append_vector(dst, gather(src, rows));
}

}  // namespace

void LateralJoin::run(ExecContext& context, ChunkSink& sink) const {
  struct Joining final : ChunkSink {
    const LateralJoin& self;
    ExecContext& context;
    ChunkSink& next;
    std::unordered_map<std::string, std::shared_ptr<const DataChunk>> results;
    uint64_t kept_bytes = 0;
    MemoryReservation kept_memory;  // the kept results, against the statement's budget
    // At most a quarter of the statement's budget: the runs need the rest.
    const uint64_t kept_bound = [] {
      const std::shared_ptr<MemoryTracker> tracker = current_memory_tracker();
      return tracker && tracker->budget() > 0 ? std::min(kKeptResultBytes, tracker->budget() / 4) : kKeptResultBytes;
    }();
    // The pairs of one round: left_rows[p] beside row p of `right`; the left
    // rows whose last pair (or none) came in this round, in order.
    std::vector<uint32_t> left_rows, finished;
    std::vector<Vector> right;
    std::vector<uint8_t> matched;  // per left row of the chunk: a pair passed ON
    Joining(const LateralJoin& s, ExecContext& c, ChunkSink& n) : self(s), context(c), next(n) { clear_round(); }

    // The subquery's rows for one tuple of outer values (made on first use).
    std::shared_ptr<const DataChunk> rows_for(const std::vector<Value>& parameters) {
      const std::string key = tuple_key(parameters);
      if (auto it = results.find(key); it != results.end()) return it->second;
      ExecContext inner = context;
      inner.parameters = &parameters;
      inner.stream_to_client = false;
      inner.explain = nullptr;
      inner.group_key_filter = nullptr;
      inner.key_tests.clear();
      inner.threads = 1;  // one run per distinct outer tuple: many small runs
      ResultSet result = run_select(*self.plan_, inner);
      auto chunk = std::make_shared<DataChunk>();
      chunk->rows = result.rows;
      chunk->columns = std::move(result.columns);
      chunk->columns.resize(self.lateral_width_);
      const uint64_t bytes = 64 + materialized_row_bytes(chunk->columns) * chunk->rows;
      if (kept_bytes + bytes > kept_bound) {
        results.clear();
        kept_bytes = 0;
      }
      if (bytes <= kept_bound) {
        // Kept only where the statement's budget has room: keeping saves
        // runs, it is not needed for the answer.
        try {
          kept_memory.resize(kept_bytes + bytes);
          kept_bytes += bytes;
          results.emplace(key, chunk);
        } catch (const Error& e) {
          if (e.state() != SqlState::out_of_memory) throw;
        }
      }
      return chunk;
    }

    void clear_round() {
      left_rows.clear();
      finished.clear();
      right.clear();
      for (size_t i = 0; i < self.lateral_width_; ++i) {
        right.emplace_back(self.columns_[self.children_[0]->layout().size() + i].type);
      }
    }

    bool consume(DataChunk& chunk) override {
      if (chunk.rows == 0) return true;
      const std::vector<Value> no_parameters;
      const std::vector<Value>& base = context.parameters ? *context.parameters : no_parameters;
      std::vector<Vector> outer;
      {
        const EvalInput input = space_input(chunk, self.children_[0]->layout(), self.width_, context.parameters);
        for (const auto& c : self.correlated_) outer.push_back(c->evaluate(input));
      }
      // Every (left row, subquery row) pair in order, passed on in rounds of
      // at most kPairsPerRound pairs.
      matched.assign(chunk.rows, 0);
      std::vector<Value> parameters = base;
      for (size_t r = 0; r < chunk.rows; ++r) {
        parameters.resize(base.size());
        for (const auto& v : outer) parameters.push_back(v.get(r));
        const std::shared_ptr<const DataChunk> rows = rows_for(parameters);
        for (size_t k = 0; k < rows->rows;) {
          const size_t take = std::min(rows->rows - k, kPairsPerRound - left_rows.size());
          left_rows.insert(left_rows.end(), take, static_cast<uint32_t>(r));
          for (size_t i = 0; i < self.lateral_width_; ++i) append_rows(right[i], rows->columns[i], k, k + take);
          k += take;
          if (left_rows.size() == kPairsPerRound && !pass_round(chunk)) return false;
        }
        finished.push_back(static_cast<uint32_t>(r));
      }
      return pass_round(chunk);
    }

    // Passes the round's pairs the ON conditions accept, and for a LEFT join
    // each finished left row that had none, NULL-extended after its place.
    bool pass_round(const DataChunk& chunk) {
      if (context.cancel) context.cancel->check();
      const std::vector<int>& left_layout = self.children_[0]->layout();
      DataChunk pairs;
      pairs.rows = left_rows.size();
      for (const auto& c : chunk.columns) pairs.columns.push_back(gather(c, left_rows));
      for (auto& c : right) pairs.columns.push_back(std::move(c));
      std::vector<uint32_t> kept;
      if (self.on_.empty() || pairs.rows == 0) {
        kept.resize(pairs.rows);
        for (size_t p = 0; p < pairs.rows; ++p) kept[p] = static_cast<uint32_t>(p);
      } else {
        std::vector<uint8_t> keep(pairs.rows, 1);
        const EvalInput input = space_input(pairs, self.layout_, self.width_, context.parameters);
        for (const auto& condition : self.on_) {
          const Vector mask = condition->evaluate(input);
          for (size_t p = 0; p < pairs.rows; ++p) {
            if (mask.null_at(p) || mask.ints[p] == 0) keep[p] = 0;
          }
        }
        for (size_t p = 0; p < pairs.rows; ++p) {
          if (keep[p]) kept.push_back(static_cast<uint32_t>(p));
        }
      }
      DataChunk out;
      if (!self.left_join_) {
        out = kept.size() == pairs.rows ? std::move(pairs) : gather_chunk(pairs, kept);
      } else {
        // The kept pairs in order, each finished row without one as a NULL
        // row once every pair of the rows before it is placed.
        std::vector<uint32_t> out_left, out_pair;
        size_t f = 0;
        auto place_unmatched_before = [&](uint32_t row) {
          for (; f < finished.size() && finished[f] < row; ++f) {
            if (matched[finished[f]]) continue;
            out_left.push_back(finished[f]);
            out_pair.push_back(kNullRow);
          }
        };
        for (uint32_t p : kept) {
          place_unmatched_before(left_rows[p]);
          matched[left_rows[p]] = 1;
          out_left.push_back(left_rows[p]);
          out_pair.push_back(p);
        }
        place_unmatched_before(UINT32_MAX);
        out.rows = out_left.size();
        for (const auto& c : chunk.columns) out.columns.push_back(gather(c, out_left));
        for (size_t i = 0; i < self.lateral_width_; ++i) {
          out.columns.push_back(gather(pairs.columns[left_layout.size() + i], out_pair));
        }
      }
      clear_round();
      return out.rows == 0 || next.consume(out);
    }
  } joining(*this, context, sink);
  run_operator(*children_[0], context, joining);
}

}  // namespace tally::executor
