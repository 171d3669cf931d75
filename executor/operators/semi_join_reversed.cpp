// HashJoin::run_semi_reversed: a semi or anti join held on its probe side.
#include <atomic>
#include <memory>
#include <set>

#include "common/cancel.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/operators/hash_join.hpp"
#include "executor/operators/hash_join_build.hpp"
#include "executor/operators/table_scan.hpp"
#include "executor/plan_expressions.hpp"

namespace tally::executor {

namespace {

// Rows of the held side passed on per chunk.
constexpr size_t kOutputRows = size_t{1} << 16;

}  // namespace

void HashJoin::run_semi_reversed(ExecContext& context, ChunkSink& sink) const {
  const PhysicalOperator& held_op = *children_[0];    // the rows that come out
  const PhysicalOperator& streamed = *children_[1];  // the rows they are tested against
  const HeldSide held = hold_side(held_op, probe_keys_, space_width_, context);
  const size_t rows = held.rows.rows;
  auto matched = std::make_unique<std::atomic<uint8_t>[]>(rows);
  const int threads = worker_threads(context);

  // The residual condition reads columns of both sides: gathered per
  // candidate pair, with the pair's number riding along (as HashJoin::run).
  std::vector<int> residual_layout;
  std::vector<std::pair<bool, size_t>> residual_columns;  // (from the streamed side, column)
  {
    std::set<int> refs;
    for (const auto& e : residual_) collect_refs(*e, refs);
    for (size_t c = 0; c < held_op.layout().size(); ++c) {
      if (refs.count(held_op.layout()[c])) residual_columns.emplace_back(false, c), residual_layout.push_back(held_op.layout()[c]);
    }
    for (size_t c = 0; c < streamed.layout().size(); ++c) {
      if (refs.count(streamed.layout()[c])) residual_columns.emplace_back(true, c), residual_layout.push_back(streamed.layout()[c]);
    }
    residual_layout.push_back(static_cast<int>(space_width_));
  }
  // Marks the held rows of candidate pairs (held row, streamed row) that pass the residual.
  auto mark_passing = [&](const DataChunk& chunk, const std::vector<uint32_t>& hr, const std::vector<uint32_t>& sr) {
    if (hr.empty()) return;
    DataChunk pairs;
    pairs.rows = hr.size();
    for (const auto& [from_streamed, c] : residual_columns) {
      pairs.columns.push_back(from_streamed ? gather(chunk.columns[c], sr) : gather(held.rows.columns[c], hr));
    }
    Vector index({TypeId::int8});
    index.resize(hr.size());
    for (size_t i = 0; i < hr.size(); ++i) index.ints[i] = static_cast<int64_t>(i);
    pairs.columns.push_back(std::move(index));
    filter_chunk(pairs, residual_, residual_layout, space_width_ + 1, context.parameters);
    for (size_t i = 0; i < pairs.rows; ++i) {
      matched[hr[static_cast<size_t>(pairs.columns.back().ints[i])]].store(1, std::memory_order_relaxed);
    }
  };

  struct Streaming final : ChunkSink {
    std::function<bool(DataChunk&)> fn;
    bool consume(DataChunk& chunk) override { return fn(chunk); }
  } streaming;
  streaming.fn = [&](DataChunk& chunk) -> bool {
    if (context.cancel) context.cancel->check();
    if (chunk.rows == 0) return true;
    const std::vector<Vector> keys =
        evaluate_all(build_keys_, space_input(chunk, streamed.layout(), space_width_, context.parameters));
    const size_t parts = std::clamp<size_t>(chunk.rows / kMinRowsPerPart, 1, static_cast<size_t>(threads));
    cpu::parallel_for(static_cast<int>(parts), chunk.rows, [&](int, size_t begin, size_t end) {
      std::vector<uint32_t> hr, sr;
      for (size_t r = begin; r < end; ++r) {
        if (has_null_key(keys, r)) continue;
        for (uint32_t h = held.chains.first(key_hash(keys, r)); h != kNullRow; h = held.chains.next[h]) {
          // A held row is decided by its first passing match.
          if (matched[h].load(std::memory_order_relaxed) || !keys_equal(keys, r, held.keys, h)) continue;
          if (residual_.empty()) {
            matched[h].store(1, std::memory_order_relaxed);
          } else {
            hr.push_back(h);
            sr.push_back(static_cast<uint32_t>(r));
          }
        }
        if (hr.size() >= kOutputRows) {
          mark_passing(chunk, hr, sr);
          hr.clear();
          sr.clear();
        }
      }
      mark_passing(chunk, hr, sr);
    });
    return true;
  };
  if (rows > 0) {
    // A streamed row whose key matches no held row is dropped by its scan
    // before the scan converts the rest of it.
    const auto* scan = dynamic_cast<const TableScan*>(&streamed);
    if (scan != nullptr) {
      TableScan::KeyTest key_test;
      key_test.keys = &build_keys_;
      key_test.test = [&held](const std::vector<Vector>& keys, size_t n, std::vector<uint32_t>& keep) {
        for (size_t r = 0; r < n; ++r) {
          if (held.chains.find(held.keys, keys, r) != kNullRow) keep.push_back(static_cast<uint32_t>(r));
        }
      };
      scan->run(context, streaming, &key_test);
    } else {
      streamed.run(context, streaming);
    }
  }
  const uint8_t want = kind_ == JoinKind::semi ? 1 : 0;
  std::vector<uint32_t> out_rows;
  for (size_t first = 0; first < rows; first += kOutputRows) {
    if (context.cancel) context.cancel->check();
    out_rows.clear();
    for (size_t r = first; r < std::min(rows, first + kOutputRows); ++r) {
      if (matched[r].load(std::memory_order_relaxed) == want) out_rows.push_back(static_cast<uint32_t>(r));
    }
    if (out_rows.empty()) continue;
    DataChunk out = gather_chunk(held.rows, out_rows);
    if (!sink.consume(out)) return;
  }
}

}  // namespace tally::executor
