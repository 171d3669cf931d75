#include "executor/operators/hash_join.hpp"

#include <algorithm>
#include <functional>

#include "common/cancel.hpp"
#include "executor/operators/chunk_ops.hpp"
#include "executor/operators/table_scan.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {

namespace {

// Probe rows are joined in blocks of at most this many candidate pairs, so a
// nested loop or a heavily duplicated key never materializes every pair at once.
constexpr size_t kPairsPerBlock = size_t{1} << 20;

std::vector<Vector> evaluate_all(const std::vector<ExprPtr>& exprs, const EvalInput& input) {
  std::vector<Vector> out;
  for (const auto& e : exprs) out.push_back(e->evaluate(input));
  return out;
}

std::vector<OutputColumn> join_columns(JoinKind kind, const PhysicalOperator& probe, const PhysicalOperator& build) {
  std::vector<OutputColumn> out = probe.columns();
  if (kind != JoinKind::semi && kind != JoinKind::anti) {
    out.insert(out.end(), build.columns().begin(), build.columns().end());
  }
  return out;
}

// The build side, hashed: chains of row numbers per bucket.
struct BuildTable {
  DataChunk rows;
  std::vector<Vector> keys;
  std::vector<uint32_t> head, next;
  uint64_t mask = 0;

  void build() {
    size_t buckets = 16;
    while (buckets < rows.rows * 2) buckets <<= 1;
    mask = buckets - 1;
    head.assign(buckets, kNullRow);
    next.assign(rows.rows, kNullRow);
    for (size_t r = 0; r < rows.rows; ++r) {
      if (has_null_key(keys, r)) continue;
      const uint64_t b = key_hash(keys, r) & mask;
      next[r] = head[b];
      head[b] = static_cast<uint32_t>(r);
    }
  }
};

}  // namespace

HashJoin::HashJoin(JoinKind kind, std::unique_ptr<PhysicalOperator> probe, std::unique_ptr<PhysicalOperator> build,
                   std::vector<ExprPtr> probe_keys, std::vector<ExprPtr> build_keys, std::vector<ExprPtr> residual,
                   size_t space_width, double estimated_rows)
    : PhysicalOperator(join_columns(kind, *probe, *build), estimated_rows),
      kind_(kind),
      probe_keys_(std::move(probe_keys)),
      build_keys_(std::move(build_keys)),
      residual_(std::move(residual)),
      space_width_(space_width) {
  layout_ = probe->layout();
  if (kind != JoinKind::semi && kind != JoinKind::anti) {
    layout_.insert(layout_.end(), build->layout().begin(), build->layout().end());
  }
  children_.push_back(std::move(probe));
  children_.push_back(std::move(build));
}

void HashJoin::run(ExecContext& context, ChunkSink& sink) const {
  const PhysicalOperator& probe = *children_[0];
  const PhysicalOperator& build = *children_[1];
  BuildTable table;
  table.rows = collect(build, context);
  const bool hashed = !build_keys_.empty();
  if (hashed) {
    table.keys = evaluate_all(build_keys_, space_input(table.rows, build.layout(), space_width_, context.parameters));
    table.build();
  }
  const bool keep_probe = kind_ == JoinKind::probe_outer || kind_ == JoinKind::full;
  const bool keep_build = kind_ == JoinKind::build_outer || kind_ == JoinKind::full;
  const bool filtering = kind_ == JoinKind::semi || kind_ == JoinKind::anti;
  std::vector<uint8_t> build_matched(keep_build ? table.rows.rows : 0, 0);
  std::vector<int> pair_layout = probe.layout();
  pair_layout.insert(pair_layout.end(), build.layout().begin(), build.layout().end());
  const size_t probe_width = probe.columns().size();
  bool stopped = false;

  // Joins probe rows [begin, end) of one chunk; returns false once the sink wants no more.
  auto join_block = [&](const DataChunk& chunk, const std::vector<Vector>& probe_key_values, size_t begin,
                        size_t end) -> bool {
    std::vector<uint32_t> pr, br;
    for (size_t r = begin; r < end; ++r) {
      if (!hashed) {
        for (size_t b = 0; b < table.rows.rows; ++b) {
          pr.push_back(static_cast<uint32_t>(r));
          br.push_back(static_cast<uint32_t>(b));
        }
        continue;
      }
      if (has_null_key(probe_key_values, r)) continue;
      for (uint32_t b = table.head[key_hash(probe_key_values, r) & table.mask]; b != kNullRow; b = table.next[b]) {
        if (keys_equal(probe_key_values, r, table.keys, b)) {
          pr.push_back(static_cast<uint32_t>(r));
          br.push_back(b);
        }
      }
    }
    if (!residual_.empty() && !pr.empty()) {
      DataChunk pairs;
      pairs.rows = pr.size();
      for (const auto& c : chunk.columns) pairs.columns.push_back(gather(c, pr));
      for (const auto& c : table.rows.columns) pairs.columns.push_back(gather(c, br));
      // The pair numbers ride along as a column so the filter keeps them in step.
      Vector index({TypeId::int8});
      index.resize(pr.size());
      for (size_t i = 0; i < pr.size(); ++i) index.ints[i] = static_cast<int64_t>(i);
      pairs.columns.push_back(std::move(index));
      std::vector<int> layout = pair_layout;
      layout.push_back(static_cast<int>(space_width_));
      filter_chunk(pairs, residual_, layout, space_width_ + 1, context.parameters);
      std::vector<uint32_t> kept_p, kept_b;
      for (size_t i = 0; i < pairs.rows; ++i) {
        const auto at = static_cast<size_t>(pairs.columns.back().ints[i]);
        kept_p.push_back(pr[at]);
        kept_b.push_back(br[at]);
      }
      pr.swap(kept_p);
      br.swap(kept_b);
    }
    for (uint32_t b : br) {
      if (keep_build) build_matched[b] = 1;
    }
    std::vector<uint8_t> probe_matched;
    if (keep_probe || filtering) {
      probe_matched.assign(end - begin, 0);
      for (uint32_t p : pr) probe_matched[p - begin] = 1;
    }
    DataChunk out;
    if (filtering) {
      std::vector<uint32_t> rows;
      const uint8_t want = kind_ == JoinKind::semi ? 1 : 0;
      for (size_t r = begin; r < end; ++r) {
        if (probe_matched[r - begin] == want) rows.push_back(static_cast<uint32_t>(r));
      }
      if (rows.empty()) return true;
      out = gather_chunk(chunk, rows);
      return sink.consume(out);
    }
    if (keep_probe) {
      for (size_t r = begin; r < end; ++r) {
        if (!probe_matched[r - begin]) {
          pr.push_back(static_cast<uint32_t>(r));
          br.push_back(kNullRow);
        }
      }
    }
    if (pr.empty()) return true;
    out.rows = pr.size();
    for (const auto& c : chunk.columns) out.columns.push_back(gather(c, pr));
    for (const auto& c : table.rows.columns) out.columns.push_back(gather(c, br));
    return sink.consume(out);
  };

  struct ProbeSink final : ChunkSink {
    std::function<bool(DataChunk&)> fn;
    bool consume(DataChunk& chunk) override { return fn(chunk); }
  } probe_sink;
  probe_sink.fn = [&](DataChunk& chunk) -> bool {
    if (context.cancel) context.cancel->check();
    if (!hashed && table.rows.rows == 0 && !keep_probe && kind_ != JoinKind::anti) return true;
    std::vector<Vector> keys;
    if (hashed) keys = evaluate_all(probe_keys_, space_input(chunk, probe.layout(), space_width_, context.parameters));
    const size_t per_row = hashed ? 1 : std::max<size_t>(1, table.rows.rows);
    const size_t block = std::max<size_t>(1, kPairsPerBlock / per_row);
    for (size_t begin = 0; begin < chunk.rows; begin += block) {
      if (context.cancel) context.cancel->check();
      if (!join_block(chunk, keys, begin, std::min(chunk.rows, begin + block))) {
        stopped = true;
        return false;
      }
    }
    return true;
  };
  probe.run(context, probe_sink);
  if (stopped || !keep_build) return;
  std::vector<uint32_t> rows, missing;
  for (size_t b = 0; b < build_matched.size(); ++b) {
    if (!build_matched[b]) {
      rows.push_back(static_cast<uint32_t>(b));
      missing.push_back(kNullRow);
    }
  }
  if (rows.empty()) return;
  DataChunk out;
  out.rows = rows.size();
  for (size_t c = 0; c < probe_width; ++c) out.columns.push_back(gather(Vector(columns_[c].type), missing));
  for (const auto& c : table.rows.columns) out.columns.push_back(gather(c, rows));
  sink.consume(out);
}

std::string HashJoin::describe() const {
  std::string kind;
  switch (kind_) {
    case JoinKind::inner: kind = "Inner"; break;
    case JoinKind::probe_outer: kind = "Left"; break;
    case JoinKind::build_outer: kind = "Right"; break;
    case JoinKind::full: kind = "Full"; break;
    case JoinKind::semi: kind = "Semi"; break;
    case JoinKind::anti: kind = "Anti"; break;
  }
  if (build_keys_.empty()) return "Nested Loop " + kind + " Join";
  return "Hash " + kind + " Join";
}

std::vector<std::string> HashJoin::details() const {
  std::vector<std::string> lines;
  if (!build_keys_.empty()) lines.push_back("Hash Cond: " + std::to_string(build_keys_.size()) + " key column(s)");
  if (!residual_.empty()) lines.push_back("Join Filter: " + std::to_string(residual_.size()) + " condition(s)");
  return lines;
}

}  // namespace tally::executor
