#include "executor/operators/hash_join.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <set>

#include "common/cancel.hpp"
#include "common/error.hpp"
#include "common/memory_tracker.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/cpu/worker_pool.hpp"
#include "executor/operators/chunk_ops.hpp"
#include "executor/operators/hash_join_build.hpp"
#include "executor/operators/key_chains.hpp"
#include "executor/operators/key_test.hpp"
#include "executor/operators/subquery_restriction.hpp"
#include "executor/operators/table_scan.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {

namespace {

// Pairs a probe chunk joined on a worker thread (ChunkSink::prepare) may hold
// before the rest of its rounds wait for the consumer.
constexpr size_t kPreparedPairs = 4 * kPairsPerRound;
// How far ahead of the probed row its bucket is prefetched.
constexpr size_t kPrefetchRows = 16;

std::vector<OutputColumn> join_columns(JoinKind kind, const PhysicalOperator& probe, const PhysicalOperator& build) {
  std::vector<OutputColumn> out = probe.columns();
  if (kind != JoinKind::semi && kind != JoinKind::anti) {
    out.insert(out.end(), build.columns().begin(), build.columns().end());
  }
  return out;
}


// One contiguous range of a probe chunk's rows, joined in rounds: where the
// last round stopped (`row`, and `at`: the next build row of its chain or of
// the nested loop), the pairs of this round, and the chunks they gave.
struct ProbePart {
  size_t begin = 0, end = 0;
  size_t row = 0;
  uint32_t at = kNullRow;
  bool started = false;  // `at` is set for `row`
  std::vector<uint32_t> pr, br;
  std::vector<DataChunk> out;
  bool done() const { return row >= end; }
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
  for (size_t c = 0; c < probe->columns().size(); ++c) probe_out_.push_back(c);
  if (kind != JoinKind::semi && kind != JoinKind::anti) {
    layout_.insert(layout_.end(), build->layout().begin(), build->layout().end());
    for (size_t c = 0; c < build->columns().size(); ++c) build_out_.push_back(c);
  }
  children_.push_back(std::move(probe));
  children_.push_back(std::move(build));
}

void HashJoin::keep_outputs(const std::set<int>& needed) {
  if (kind_ == JoinKind::semi || kind_ == JoinKind::anti) return;
  const PhysicalOperator& probe = *children_[0];
  const PhysicalOperator& build = *children_[1];
  std::vector<size_t> probe_out, build_out;
  columns_.clear();
  layout_.clear();
  auto keep = [&](const PhysicalOperator& side, std::vector<size_t>& out) {
    for (size_t c = 0; c < side.columns().size(); ++c) {
      if (!needed.count(side.layout()[c])) continue;
      out.push_back(c);
      columns_.push_back(side.columns()[c]);
      layout_.push_back(side.layout()[c]);
    }
  };
  keep(probe, probe_out);
  keep(build, build_out);
  if (columns_.empty()) {
    // Rows without columns are not passed between operators: one stays.
    const bool from_probe = !probe.columns().empty();
    const PhysicalOperator& side = from_probe ? probe : build;
    if (side.columns().empty()) return;
    (from_probe ? probe_out : build_out).push_back(0);
    columns_.push_back(side.columns()[0]);
    layout_.push_back(side.layout()[0]);
  }
  probe_out_ = std::move(probe_out);
  build_out_ = std::move(build_out);
}

void HashJoin::run(ExecContext& context, ChunkSink& sink) const {
  const PhysicalOperator& probe = *children_[0];
  const PhysicalOperator& build = *children_[1];
  const int threads = worker_threads(context);
  const bool hashed = !build_keys_.empty();
  const bool filtering = kind_ == JoinKind::semi || kind_ == JoinKind::anti;
  // The key tests of the joins above reach only this join's probe side
  // (below); the build side and anything else runs without them.
  const std::vector<const KeyTest*> above = std::move(context.key_tests);
  context.key_tests.clear();
  struct Restore {
    ExecContext& context;
    const std::vector<const KeyTest*>& above;
    ~Restore() { context.key_tests = above; }
  } restore{context, above};
  if (filtering && hashed && probe.estimated_rows() * kReversedSemiRatio < build.estimated_rows()) {
    run_semi_reversed(context, sink);
    return;
  }
  const HeldSide table = hold_side(build, build_keys_, space_width_, context);
  const size_t build_rows = table.rows.rows;
  restrict_by_held_rows(residual_, build, table.rows, space_width_, context);
  if (const auto* scan = dynamic_cast<const TableScan*>(&probe);
      scan != nullptr && hashed && (kind_ == JoinKind::inner || kind_ == JoinKind::semi)) {
    restrict_by_join_keys(scan->filters(), probe_keys_, table.keys, context.parameters);
  }
  const bool keep_probe = kind_ == JoinKind::probe_outer || kind_ == JoinKind::full;
  const bool keep_build = kind_ == JoinKind::build_outer || kind_ == JoinKind::full;
  // A semi or anti join without a residual needs one match per probe row.
  const bool first_match_only = filtering && residual_.empty();
  std::unique_ptr<std::atomic<uint8_t>[]> build_matched;
  if (keep_build) build_matched = std::make_unique<std::atomic<uint8_t>[]>(build_rows);
  bool stopped = false;

  // The next candidate pairs of a part, at most `cap`.
  auto fill = [&](ProbePart& part, const std::vector<Vector>& probe_keys, const uint64_t* hashes,
                  const std::vector<uint8_t>& matched, size_t cap) {
    part.pr.clear();
    part.br.clear();
    // Integer-like keys (the common case: ids, dates, composite ids) are
    // compared as int64s, without the per-type dispatch of keys_equal.
    const IntegerKeys ints = hashed ? IntegerKeys(table.keys, probe_keys) : IntegerKeys({}, {});
    const bool int_key = ints.usable();
    while (!part.done() && part.pr.size() < cap) {
      const size_t r = part.row;
      if (!part.started) {
        // On a build side larger than the caches probing is bound by three
        // dependent random reads (bucket, then the row's key and next
        // link): the bucket of a row further ahead is fetched, and the rows
        // of a nearer one's bucket, while this row is joined.
        if (hashed && r + kPrefetchRows < part.end) {
          __builtin_prefetch(&table.chains.head[hashes[r + kPrefetchRows] & table.chains.mask]);
          const uint32_t near = table.chains.head[hashes[r + kPrefetchRows / 2] & table.chains.mask];
          if (near != kNullRow) {
            __builtin_prefetch(&table.chains.next[near]);
            if (int_key) ints.prefetch(near);
          }
        }
        const bool skip = (hashed && has_null_key(probe_keys, r)) || (first_match_only && matched[r]);
        part.at = skip ? kNullRow : hashed ? table.chains.first(hashes[r]) : (build_rows > 0 ? 0u : kNullRow);
        part.started = true;
      }
      while (part.at != kNullRow && part.pr.size() < cap) {
        const uint32_t b = part.at;
        part.at = hashed ? table.chains.next[b] : (b + 1 < build_rows ? b + 1 : kNullRow);
        if (hashed && !(int_key ? ints.equal(r, b) : keys_equal(probe_keys, r, table.keys, b))) continue;
        part.pr.push_back(static_cast<uint32_t>(r));
        part.br.push_back(b);
        if (first_match_only) part.at = kNullRow;
      }
      if (part.at == kNullRow) {
        ++part.row;
        part.started = false;
      }
    }
  };

  // Keeps the pairs of a part that pass the residual condition.
  const ResidualTest residual(residual_, probe, build, space_width_);
  auto apply_residual = [&](ProbePart& part, const DataChunk& chunk) {
    if (residual.empty() || part.pr.empty()) return;
    std::vector<uint32_t> kept_p, kept_b;
    for (const uint32_t at : residual.passing(chunk, part.pr, table.rows, part.br, context.parameters)) {
      kept_p.push_back(part.pr[at]);
      kept_b.push_back(part.br[at]);
    }
    part.pr.swap(kept_p);
    part.br.swap(kept_b);
  };

  // `spent`: the probe chunk, read no more, whose rows are the pairs' probe
  // rows in order: its columns move into the output instead of being gathered.
  auto pairs_chunk = [&](const DataChunk& chunk, const std::vector<uint32_t>& pr, const std::vector<uint32_t>& br,
                         DataChunk* spent = nullptr) {
    DataChunk out;
    out.rows = pr.size();
    for (const size_t c : probe_out_) {
      out.columns.push_back(spent != nullptr ? std::move(spent->columns[c]) : gather(chunk.columns[c], pr));
    }
    for (const size_t c : build_out_) out.columns.push_back(gather(table.rows.columns[c], br));
    return out;
  };

  // One round of a part: its next pairs joined, matches marked, rows out.
  // Whether a part's pairs are each row of the whole chunk once, in order
  // (pairs come in probe row order): an inner join whose probe rows were
  // tested against its held keys by the scan below, each matching one held
  // row (a foreign key joined to its table's primary key). An inner or
  // build-outer join reads the chunk no more once its last round is done.
  const bool probe_spendable = kind_ == JoinKind::inner || kind_ == JoinKind::build_outer;
  auto every_row_once = [&](const ProbePart& part, size_t rows) {
    if (!probe_spendable || !part.done() || part.begin != 0 || part.end != rows || part.pr.size() != rows) return false;
    for (size_t i = 0; i < rows; ++i) {
      if (part.pr[i] != i) return false;
    }
    return true;
  };

  auto step = [&](ProbePart& part, DataChunk& chunk, const std::vector<Vector>& probe_keys,
                  const uint64_t* hashes, std::vector<uint8_t>& matched, size_t cap) {
    part.out.clear();
    fill(part, probe_keys, hashes, matched, cap);
    apply_residual(part, chunk);
    for (uint32_t p : part.pr) matched[p] = 1;
    if (keep_build) {
      for (uint32_t b : part.br) build_matched[b].store(1, std::memory_order_relaxed);
    }
    if (!filtering && !part.pr.empty()) {
      part.out.push_back(pairs_chunk(chunk, part.pr, part.br, every_row_once(part, chunk.rows) ? &chunk : nullptr));
    }
    if (!part.done() || !(filtering || keep_probe)) return;
    // The part's last round: the probe rows decided by whether they matched.
    std::vector<uint32_t> rows, missing;
    const uint8_t want = kind_ == JoinKind::semi ? 1 : 0;
    for (size_t r = part.begin; r < part.end; ++r) {
      if (filtering ? matched[r] == want : !matched[r]) rows.push_back(static_cast<uint32_t>(r));
    }
    if (rows.empty()) return;
    if (filtering) {
      part.out.push_back(gather_chunk(chunk, rows));
      return;
    }
    missing.assign(rows.size(), kNullRow);
    part.out.push_back(pairs_chunk(chunk, rows, missing));
  };

  // Whether a probe chunk can give no row at all.
  auto gives_nothing = [&](const DataChunk& chunk) {
    return chunk.rows == 0 || (build_rows == 0 && !keep_probe && kind_ != JoinKind::anti);
  };

  // A source with chunks in flight on worker threads (the scan's read-ahead,
  // a lower join's parts) has each chunk probed there by prepare(), with the
  // sink's prepare() of the rows it gives: a pipeline of joins over a scan
  // runs on every core, chunk by chunk, and consume_prepared() only passes
  // the outputs on in order. A chunk whose pairs pass kPreparedPairs (a
  // heavily duplicated key) does its remaining rounds in consume_prepared(),
  // so that no chunk in flight holds more than that.
  struct ProbeWork final : PreparedWork {
    std::vector<Vector> keys;
    std::unique_ptr<uint64_t[]> hashes;  // every row's written by key_hashes: not cleared first
    std::vector<uint8_t> matched;
    ProbePart part;
    std::vector<DataChunk> out;  // prepared by the sink
  };
  auto prepare_chunk = [&](DataChunk& chunk) {
    if (context.cancel) context.cancel->check();
    if (gives_nothing(chunk)) {
      chunk.rows = 0;
      return;
    }
    auto work = std::make_shared<ProbeWork>();
    if (hashed) {
      work->keys = evaluate_all(probe_keys_, space_input(chunk, probe.layout(), space_width_, context.parameters));
      work->hashes = std::make_unique_for_overwrite<uint64_t[]>(chunk.rows);
      key_hashes(work->keys, 0, chunk.rows, work->hashes.get());
    }
    work->matched.assign(chunk.rows, 0);
    work->part.end = chunk.rows;
    size_t pairs = 0;
    while (!work->part.done() && pairs < kPreparedPairs) {
      if (context.cancel) context.cancel->check();
      step(work->part, chunk, work->keys, work->hashes.get(), work->matched, kPairsPerRound);
      for (auto& out : work->part.out) {
        pairs += out.rows;
        if (out.rows > 0) sink.prepare(out);
        if (out.rows > 0) work->out.push_back(std::move(out));
      }
      work->part.out.clear();
    }
    if (work->out.empty() && work->part.done()) {
      chunk.rows = 0;
      return;
    }
    chunk.prepared = std::move(work);
  };

  // Any other source: the chunk's rows are split into parts probed on the
  // worker pool, round by round, and the outputs passed on in order.
  auto consume_chunk = [&](DataChunk& chunk) -> bool {
    if (context.cancel) context.cancel->check();
    if (gives_nothing(chunk)) return true;
    std::vector<Vector> keys;
    if (hashed) keys = evaluate_all(probe_keys_, space_input(chunk, probe.layout(), space_width_, context.parameters));
    const size_t part_count = std::clamp<size_t>(chunk.rows / kMinRowsPerPart, 1, static_cast<size_t>(threads));
    std::vector<ProbePart> parts(part_count);
    const size_t per = (chunk.rows + part_count - 1) / part_count;
    for (size_t i = 0; i < part_count; ++i) {
      parts[i].begin = parts[i].row = std::min(chunk.rows, i * per);
      parts[i].end = std::min(chunk.rows, (i + 1) * per);
    }
    // Every row's hash is written by its part's key_hashes: not cleared first.
    const auto hashes = std::make_unique_for_overwrite<uint64_t[]>(hashed ? chunk.rows : 0);
    std::vector<uint8_t> matched(chunk.rows, 0);
    const size_t cap = std::max<size_t>(1, kPairsPerRound / part_count);
    bool first_round = true;
    while (std::any_of(parts.begin(), parts.end(), [](const ProbePart& p) { return !p.done(); })) {
      if (context.cancel) context.cancel->check();
      cpu::parallel_for(static_cast<int>(part_count), part_count, [&](int, size_t b, size_t e) {
        for (size_t i = b; i < e; ++i) {
          ProbePart& part = parts[i];
          if (first_round && hashed) {
            key_hashes(keys, part.begin, part.end, hashes.get() + part.begin);
          }
          part.out.clear();
          if (!part.done()) step(part, chunk, keys, hashes.get(), matched, cap);
          // The sink's own per-chunk work runs here, beside the probe.
          for (auto& out : part.out) sink.prepare(out);
        }
      });
      first_round = false;
      for (auto& part : parts) {
        for (auto& out : part.out) {
          if (out.rows == 0) continue;
          if (!sink.consume_prepared(out)) {
            stopped = true;
            return false;
          }
        }
        part.out.clear();
      }
    }
    return true;
  };

  auto consume_prepared_chunk = [&](DataChunk& chunk) -> bool {
    auto* work = dynamic_cast<ProbeWork*>(chunk.prepared.get());
    if (work == nullptr) return consume_chunk(chunk);
    for (auto& out : work->out) {
      if (!sink.consume_prepared(out)) {
        stopped = true;
        return false;
      }
    }
    work->out.clear();
    while (!work->part.done()) {
      if (context.cancel) context.cancel->check();
      step(work->part, chunk, work->keys, work->hashes.get(), work->matched, kPairsPerRound);
      for (auto& out : work->part.out) {
        if (out.rows > 0) sink.prepare(out);
        if (out.rows > 0 && !sink.consume_prepared(out)) {
          stopped = true;
          return false;
        }
      }
      work->part.out.clear();
    }
    return true;
  };

  struct ProbeSink final : ChunkSink {
    std::function<void(DataChunk&)> prepare_fn;
    std::function<bool(DataChunk&)> consume_fn, consume_prepared_fn;
    void prepare(DataChunk& chunk) const override { prepare_fn(chunk); }
    bool consume(DataChunk& chunk) override { return consume_fn(chunk); }
    bool consume_prepared(DataChunk& chunk) override { return consume_prepared_fn(chunk); }
  } probe_sink;
  probe_sink.prepare_fn = prepare_chunk;
  probe_sink.consume_fn = consume_chunk;
  probe_sink.consume_prepared_fn = consume_prepared_chunk;
  // A probe row without a match gives nothing in an inner, semi or
  // build-outer join: the scan at the bottom of the probe side's chain of
  // joins tests its keys against the table first, with the tests of the
  // joins above (a row one of them drops is dropped whatever this join
  // does with it: an outer join's unmatched rows keep their probe columns,
  // a build row left unmatched goes on with NULL probe columns, which match
  // nothing above), and converts the rest only for the rows that pass.
  KeyTest own;
  own.keys = &probe_keys_;
  own.chains = &table.chains;
  own.test = [&table](const std::vector<Vector>& values, size_t rows, std::vector<uint32_t>& keep) {
    table.chains.candidate_rows(table.keys, values, rows, keep);
  };
  own.exact_bits = [&table, threads](uint64_t max_span, int64_t& min, uint64_t& span, std::vector<uint64_t>& words) {
    return KeyChains::exact_bits(table.keys, table.rows.rows, max_span, threads, min, span, words);
  };
  if (dynamic_cast<const HashJoin*>(&probe) != nullptr || dynamic_cast<const TableScan*>(&probe) != nullptr) {
    if (hashed && (kind_ == JoinKind::inner || kind_ == JoinKind::semi || kind_ == JoinKind::build_outer))
      context.key_tests.push_back(&own);
    context.key_tests.insert(context.key_tests.end(), above.begin(), above.end());
  }
  run_operator(probe, context, probe_sink);
  if (stopped || !keep_build) return;
  std::vector<uint32_t> rows, missing;
  for (size_t b = 0; b < build_rows; ++b) {
    if (!build_matched[b].load(std::memory_order_relaxed)) {
      rows.push_back(static_cast<uint32_t>(b));
      missing.push_back(kNullRow);
    }
  }
  if (rows.empty()) return;
  DataChunk out;
  out.rows = rows.size();
  for (const size_t c : probe_out_) out.columns.push_back(gather(Vector(probe.columns()[c].type), missing));
  for (const size_t c : build_out_) out.columns.push_back(gather(table.rows.columns[c], rows));
  sink.consume(out);
}

namespace {

const char* join_type(JoinKind kind) {
  switch (kind) {
    case JoinKind::inner: return "Inner";
    case JoinKind::probe_outer: return "Left";
    case JoinKind::build_outer: return "Right";
    case JoinKind::full: return "Full";
    case JoinKind::semi: return "Semi";
    case JoinKind::anti: return "Anti";
  }
  return "Inner";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> HashJoin::node_properties() const {
  return {{"Join Type", join_type(kind_)}};
}

std::string HashJoin::describe() const {
  const std::string kind = join_type(kind_);
  if (build_keys_.empty()) return "Nested Loop " + kind + " Join";
  return "Hash " + kind + " Join";
}

std::vector<std::string> HashJoin::details() const {
  std::vector<std::string> lines;
  if (!build_keys_.empty()) lines.push_back("Hash Cond: " + std::to_string(build_keys_.size()) + " key column(s)");
  const bool filtering = kind_ == JoinKind::semi || kind_ == JoinKind::anti;
  if (filtering && !build_keys_.empty() &&
      children_[0]->estimated_rows() * kReversedSemiRatio < children_[1]->estimated_rows()) {
    lines.push_back("Hashed side: the outer rows (the subquery's rows stream past them)");
  }
  if (!residual_.empty()) lines.push_back("Join Filter: " + std::to_string(residual_.size()) + " condition(s)");
  return lines;
}

}  // namespace tally::executor
