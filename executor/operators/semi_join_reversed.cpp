// HashJoin::run_semi_reversed: a semi or anti join held on its probe side.
#include <algorithm>
#include <atomic>
#include <memory>

#include "common/cancel.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/operators/hash_join.hpp"
#include "executor/operators/hash_join_build.hpp"
#include "executor/operators/key_chains.hpp"

namespace tally::executor {

namespace {

// Rows of the held side passed on per chunk.
constexpr size_t kOutputRows = size_t{1} << 16;

// How far ahead of the streamed row its bucket is fetched.
constexpr size_t kAhead = 32;

}  // namespace

void HashJoin::run_semi_reversed(ExecContext& context, ChunkSink& sink) const {
  const PhysicalOperator& held_op = *children_[0];    // the rows that come out
  const PhysicalOperator& streamed = *children_[1];  // the rows they are tested against
  const HeldSide held = hold_side(held_op, probe_keys_, space_width_, context);
  const size_t rows = held.rows.rows;
  auto matched = std::make_unique<std::atomic<uint8_t>[]>(rows);
  const int threads = worker_threads(context);

  // Marks the held rows of candidate pairs (held row, streamed row) that pass the residual.
  const ResidualTest residual(residual_, held_op, streamed, space_width_);
  auto mark_passing = [&](const DataChunk& chunk, const std::vector<uint32_t>& hr, const std::vector<uint32_t>& sr) {
    if (hr.empty()) return;
    for (const uint32_t at : residual.passing(held.rows, hr, chunk, sr, context.parameters)) {
      matched[hr[at]].store(1, std::memory_order_relaxed);
    }
  };

  // Marks the held rows that rows [begin, end) of a streamed chunk match:
  // the rows' hashes computed together first, integer-like keys compared as
  // the int64s they are (IntegerKeys), not through keys_equal's dispatch
  // per row (TPC-H Q21's lineitem l2 and l3 against l1's order keys). A
  // held side larger than the caches makes each row three dependent random
  // reads (bucket, then the first row's key, link and mark): the bucket of
  // a row further ahead is fetched, and the first row of a nearer one's, as
  // KeyChains::matching_rows does.
  auto mark = [&](const DataChunk& chunk, const std::vector<Vector>& keys, size_t begin, size_t end) {
    std::vector<uint32_t> hr, sr;
    // Not cleared first: key_hashes writes every row's.
    const auto hashes = std::make_unique_for_overwrite<uint64_t[]>(end - begin);
    key_hashes(keys, begin, end, hashes.get());
    const IntegerKeys ints(held.keys, keys);
    const KeyChains& chains = held.chains;
    for (size_t r = begin; r < end; ++r) {
      if (r + kAhead < end) chains.prefetch_bucket(hashes[r + kAhead - begin]);
      if (r + kAhead / 2 < end) {
        const uint32_t near = chains.first(hashes[r + kAhead / 2 - begin]);
        if (near != kNullRow) {
          chains.prefetch_row(near);
          if (ints.usable()) ints.prefetch(near);
          __builtin_prefetch(&matched[near]);
        }
      }
      if (has_null_key(keys, r)) continue;
      for (uint32_t h = held.chains.first(hashes[r - begin]); h != kNullRow; h = held.chains.next[h]) {
        // A held row is decided by its first passing match.
        if (matched[h].load(std::memory_order_relaxed)) continue;
        if (!(ints.usable() ? ints.equal(r, h) : keys_equal(keys, r, held.keys, h))) continue;
        if (residual.empty()) {
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
  };
  auto keys_of = [&](const DataChunk& chunk) {
    return evaluate_all(build_keys_, space_input(chunk, streamed.layout(), space_width_, context.parameters));
  };

  // A source with chunks in flight on worker threads (the scan's
  // read-ahead) has each chunk marked there, in prepare(): the chunk gives
  // nothing to pass on. Any other source's chunk is split into parts
  // marked on the worker pool.
  struct Streaming final : ChunkSink {
    std::function<void(DataChunk&)> prepare_fn;
    std::function<bool(DataChunk&)> consume_fn;
    void prepare(DataChunk& chunk) const override { prepare_fn(chunk); }
    bool consume_prepared(DataChunk& /*chunk*/) override { return true; }
    bool consume(DataChunk& chunk) override { return consume_fn(chunk); }
  } streaming;
  streaming.prepare_fn = [&](DataChunk& chunk) {
    if (context.cancel) context.cancel->check();
    if (chunk.rows > 0) mark(chunk, keys_of(chunk), 0, chunk.rows);
    chunk.rows = 0;
  };
  streaming.consume_fn = [&](DataChunk& chunk) -> bool {
    if (context.cancel) context.cancel->check();
    if (chunk.rows == 0) return true;
    const std::vector<Vector> keys = keys_of(chunk);
    const size_t parts = std::clamp<size_t>(chunk.rows / kMinRowsPerPart, 1, static_cast<size_t>(threads));
    cpu::parallel_for(static_cast<int>(parts), chunk.rows,
                      [&](int, size_t begin, size_t end) { mark(chunk, keys, begin, end); });
    return true;
  };
  if (rows > 0) run_matching_keys(streamed, build_keys_, held, context, streaming);
  const uint8_t want = kind_ == JoinKind::semi ? 1 : 0;
  // The held rows that come out, a block of kOutputRows rows a task:
  // gathered and prepared by the sink (ChunkSink::prepare) on the workers,
  // a round of `threads` blocks at a time, then passed on in order.
  const size_t blocks = (rows + kOutputRows - 1) / kOutputRows;
  const auto per_round = static_cast<size_t>(std::max(1, threads));
  for (size_t round = 0; round < blocks; round += per_round) {
    if (context.cancel) context.cancel->check();
    std::vector<DataChunk> outs(std::min(per_round, blocks - round));
    cpu::parallel_tasks(threads, outs.size(), [&](int, size_t i) {
      const size_t first = (round + i) * kOutputRows;
      std::vector<uint32_t> out_rows;
      for (size_t r = first; r < std::min(rows, first + kOutputRows); ++r) {
        if (matched[r].load(std::memory_order_relaxed) == want) out_rows.push_back(static_cast<uint32_t>(r));
      }
      if (out_rows.empty()) return;
      outs[i] = gather_chunk(held.rows, out_rows);
      sink.prepare(outs[i]);
    });
    for (auto& out : outs) {
      if (out.rows > 0 && !sink.consume_prepared(out)) return;
    }
  }
}

}  // namespace tally::executor
