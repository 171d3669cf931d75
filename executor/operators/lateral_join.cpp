#include "executor/operators/lateral_join.hpp"

#include <map>

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

void LateralJoin::run(ExecContext& context, ChunkSink& sink) const {
  struct Joining final : ChunkSink {
    const LateralJoin& self;
    ExecContext& context;
    ChunkSink& next;
    std::map<std::string, std::shared_ptr<const DataChunk>> results;
    Joining(const LateralJoin& s, ExecContext& c, ChunkSink& n) : self(s), context(c), next(n) {}

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
      results.emplace(key, chunk);
      return chunk;
    }

    bool consume(DataChunk& chunk) override {
      if (chunk.rows == 0) return true;
      const std::vector<Value> no_parameters;
      const std::vector<Value>& base = context.parameters ? *context.parameters : no_parameters;
      const std::vector<int>& left_layout = self.children_[0]->layout();
      std::vector<Vector> outer;
      {
        const EvalInput input = space_input(chunk, left_layout, self.width_, context.parameters);
        for (const auto& c : self.correlated_) outer.push_back(c->evaluate(input));
      }
      // Every (left row, subquery row) pair, the subquery's rows appended
      // result after result.
      std::vector<uint32_t> left_rows, right_rows;
      std::vector<Vector> right(self.lateral_width_);
      for (size_t i = 0; i < self.lateral_width_; ++i) right[i] = Vector{self.columns_[left_layout.size() + i].type};
      uint32_t appended = 0;
      std::vector<Value> parameters = base;
      std::map<const DataChunk*, uint32_t> placed;  // where each result's rows start in `right`
      for (size_t r = 0; r < chunk.rows; ++r) {
        parameters.resize(base.size());
        for (const auto& v : outer) parameters.push_back(v.get(r));
        const std::shared_ptr<const DataChunk> rows = rows_for(parameters);
        if (rows->rows == 0) continue;
        auto [at, added] = placed.emplace(rows.get(), appended);
        if (added) {
          for (size_t i = 0; i < self.lateral_width_; ++i) append_vector(right[i], rows->columns[i]);
          appended += static_cast<uint32_t>(rows->rows);
        }
        for (uint32_t k = 0; k < rows->rows; ++k) {
          left_rows.push_back(static_cast<uint32_t>(r));
          right_rows.push_back(at->second + k);
        }
      }
      DataChunk pairs = joined(chunk, right, left_rows, right_rows);
      std::vector<uint8_t> matched(chunk.rows, 0);
      if (!self.on_.empty() && pairs.rows > 0) {
        std::vector<uint8_t> keep(pairs.rows, 1);
        const EvalInput input = space_input(pairs, self.layout_, self.width_, context.parameters);
        for (const auto& condition : self.on_) {
          const Vector mask = condition->evaluate(input);
          for (size_t p = 0; p < pairs.rows; ++p) {
            if (mask.null_at(p) || mask.ints[p] == 0) keep[p] = 0;
          }
        }
        std::vector<uint32_t> kept_left, kept_right;
        for (size_t p = 0; p < pairs.rows; ++p) {
          if (!keep[p]) continue;
          kept_left.push_back(left_rows[p]);
          kept_right.push_back(right_rows[p]);
        }
        left_rows = std::move(kept_left);
        right_rows = std::move(kept_right);
        pairs = joined(chunk, right, left_rows, right_rows);
      }
      if (self.left_join_) {
        for (uint32_t r : left_rows) matched[r] = 1;
        // Each left row's pairs in order, a NULL-extended row for one with none.
        std::vector<uint32_t> all_left, all_right;
        size_t p = 0;
        for (uint32_t r = 0; r < chunk.rows; ++r) {
          if (!matched[r]) {
            all_left.push_back(r);
            all_right.push_back(kNullRow);
            continue;
          }
          for (; p < left_rows.size() && left_rows[p] == r; ++p) {
            all_left.push_back(r);
            all_right.push_back(right_rows[p]);
          }
        }
        pairs = joined(chunk, right, all_left, all_right);
      }
      return pairs.rows == 0 || next.consume(pairs);
    }

    // The left chunk's rows `left_rows` beside the lateral rows `right_rows`.
    DataChunk joined(const DataChunk& chunk, const std::vector<Vector>& right, const std::vector<uint32_t>& left_rows,
                     const std::vector<uint32_t>& right_rows) const {
      DataChunk out;
      out.rows = left_rows.size();
      for (const auto& c : chunk.columns) out.columns.push_back(gather(c, left_rows));
      for (const auto& c : right) out.columns.push_back(gather(c, right_rows));
      return out;
    }
  } joining(*this, context, sink);
  run_operator(*children_[0], context, joining);
}

}  // namespace tally::executor
