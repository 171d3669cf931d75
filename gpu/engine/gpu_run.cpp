#include "gpu/engine/gpu_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "common/cancel.hpp"
#include "common/column_program_run.hpp"
#include "common/error.hpp"
#include "gpu/engine/gpu_aggregation_engine.hpp"
#include "gpu/engine/spec_translation.hpp"
#include "gpu/engine/start_up.hpp"
#include "gpu/tuner/cardinality_bucket.hpp"
#include "gpu/tuner/tuning_signature.hpp"

namespace tally::gpu {
namespace {

using tally::ColumnWidth;

// Rows one joined launch (several adjacent resident chunks, see
// ChunkPipeline::joinable) covers at most: 4 chunks of 2^24 rows, several
// times the host's cost of staging them, so the next launch is enqueued long
// before the GPU runs out of work, while a 2^28-row query needs 5 launches
// instead of 16.
constexpr int64_t kJoinedLaunchRows = int64_t{1} << 26;

}  // namespace

std::string aggregator_key(const GroupBySpec& g, const TableOptions& o) {
  std::string k = std::to_string(static_cast<int>(g.key_type)) + "|";
  for (const auto& c : g.columns) k += std::to_string(static_cast<int>(c.type)) + (c.may_have_nulls ? "n," : ",");
  k += "|";
  for (const auto& a : g.aggregates) k += std::to_string(static_cast<int>(a.op)) + ":" + std::to_string(a.column) + ",";
  k += "|" + std::to_string(o.estimated_groups) + "|" + std::to_string(o.max_fill) + "|" +
       std::to_string(static_cast<int>(o.hash)) + "|" + std::to_string(o.key_range_hint.min) + "," +
       std::to_string(o.key_range_hint.max) + "|" + std::to_string(o.max_rows_per_launch) +
       (o.own_partitioned_output ? "|own" : "|merge");
  return k;
}

namespace {

ColumnKey column_key(const tally::ColumnIdentity& id, tally::ColumnWidth width) {
  return ColumnKey{id.table, id.chunk, id.column, static_cast<uint8_t>(width_bytes(width))};
}

}  // namespace

bool GpuRun::hold(const tally::ColumnIdentity& column, tally::ColumnWidth width) {
  if (!column.known()) return false;
  const ColumnKey key = column_key(column, width);
  auto resident = engine_.column_cache().find(key);
  if (!resident) return false;
  held_.emplace_back(key, std::move(resident));
  return true;
}

void GpuRun::sink(const tally::ChunkInput& chunk) {
  const auto t0 = std::chrono::steady_clock::now();
  // Marks on the way to the first kernels (EXPLAIN ANALYZE "GPU: start path").
  HostTimelineScope timeline(first_enqueue_us_ < 0 ? &start_path_ : nullptr);
  host_mark(last_sink_end_ ? "next sink" : "sink");
  // Time spent outside sink between chunks: the executor's scan.
  if (last_sink_end_) scan_gap_us_ += std::chrono::duration<double, std::micro>(t0 - *last_sink_end_).count();
  else first_sink_us_ = std::chrono::duration<double, std::micro>(t0 - created_).count();
  struct MarkEnd {
    std::optional<std::chrono::steady_clock::time_point>& at;
    ~MarkEnd() { at = std::chrono::steady_clock::now(); }
  } mark_end{last_sink_end_};
  // Chunks over resident columns reach the engine without a host scan that
  // would look at the token: cancel and statement_timeout are seen here,
  // between one chunk's launches and the next's (the few chunks already
  // enqueued run out in milliseconds when the run is dropped).
  if (spec_.cancel) spec_.cancel->check();
  for (const uint8_t* f : chunk.filters)
    if (f) throw Error(SqlState::feature_not_supported, "GPU: aggregate FILTER is not supported by the GPU engine yet");
  if (chunk.values.size() != spec_.value_widths.size())
    throw Error(SqlState::internal_error, "GPU: chunk has " + std::to_string(chunk.values.size()) + " value columns, spec " +
                                              std::to_string(spec_.value_widths.size()));
  if (!gspec_) {
    // The planner's spec gives nominal widths; the chunks say what arrives
    // (raw stored int4 columns are 4 bytes wide, evaluated ones 8).
    std::vector<ColumnWidth> widths;
    for (const auto& v : chunk.values) widths.push_back(v.width);
    gspec_ = translate(chunk.keys.width, widths, spec_.aggregates, spec_.value_not_null);
    if (!gspec_) throw Error(SqlState::feature_not_supported, "GPU: this aggregation is not supported by the GPU engine");
    gspec_->compact_result = spec_.compact_result;
    key_width_ = chunk.keys.width;
    host_mark("translated");
  } else if (chunk.keys.width != key_width_) {
    throw Error(SqlState::internal_error, "GPU: key width changed between chunks");
  }
  if (chunk.rows == 0) return;
  std::vector<HostColumn> columns;
  columns.reserve(1 + chunk.values.size());
  auto add = [&](const tally::ColumnView& v) {
    HostColumn c;
    c.data = v.data;
    c.validity = v.validity;
    c.width_bytes = width_bytes(v.width);
    c.cacheable = v.identity.known();
    c.key = column_key(v.identity, v.width);
    if (!v.data && c.cacheable) {
      // A column hold() promised (a column may feed several inputs).
      const auto it = std::find_if(held_.begin(), held_.end(), [&](const auto& h) { return h.first == c.key; });
      if (it == held_.end()) throw Error(SqlState::internal_error, "GPU: a chunk column came without data and unheld");
      c.resident = it->second;
    }
    columns.push_back(c);
  };
  // A packed key's columns come first, each staged (and cached) on its
  // own; launch() packs them on the device.
  if (spec_.global_aggregate) {
    // launch() reads device zeros instead.
  } else if (spec_.key_parts.empty()) {
    add(chunk.keys);
  } else {
    if (chunk.key_columns.size() != spec_.key_parts.size())
      throw Error(SqlState::internal_error, "GPU: chunk has " + std::to_string(chunk.key_columns.size()) +
                                                " key columns, spec " + std::to_string(spec_.key_parts.size()));
    // Key programs' parts are computed on the device (evaluate_programs).
    if (spec_.key_programs.empty())
      for (const tally::ColumnView& k : chunk.key_columns) add(k);
  }
  value_column_.assign(chunk.values.size(), -1);
  for (size_t i = 0; i < chunk.values.size(); ++i) {
    if (device_programs_ && i < spec_.value_programs.size() && !spec_.value_programs[i].empty()) continue;
    value_column_[i] = static_cast<int>(columns.size());
    add(chunk.values[i]);
    if (columns.back().validity && !gspec_->columns[i].may_have_nulls) {
      // Declared NOT NULL by the statistics: a bitmap here must be all
      // valid (evaluated inputs carry one); the kernels then ignore it.
      const uint8_t* bits = columns.back().validity;
      if (!std::all_of(bits, bits + chunk.rows, [](uint8_t b) { return b != 0; }))
        throw Error(SqlState::internal_error, "GPU: a NULL in an input the statistics say has none");
      columns.back().validity = nullptr;
    }
  }
  if (device_programs_) {
    program_column_begin_ = columns.size();
    program_widths_.clear();
    for (const tally::ColumnView& c : chunk.program_columns) {
      add(c);
      program_widths_.push_back(c.width);
    }
  }
  // The staged chunk leases what it reads: this chunk's held columns are
  // no longer the run's to keep.
  std::erase_if(held_, [&](const auto& h) {
    return std::any_of(columns.begin(), columns.end(), [&](const HostColumn& c) { return c.resident && c.key == h.first; });
  });
  // Stage this chunk (its copies start now), then aggregate the previous
  // one while they run.
  const auto t_stage = std::chrono::steady_clock::now();
  StagedChunk staged = pipeline_->stage(static_cast<int64_t>(chunk.rows), columns);
  host_.stage_us += since_us(t_stage);
  host_mark("staged");
  std::optional<Decided> next;
  try {
    // DaMoN'19's search is sequential: a race or search proposal first
    // sees the times of the earlier ones (the host would otherwise choose
    // up to kMaxInFlight chunks ahead of any time it knows).
    if (tuner_ && tuner_->awaits_reports()) await_reports();
    next = decide(std::move(staged));
    // Resident chunks that continue the pending ones in device memory and
    // run the same exploited configuration join them (one launch); the
    // first launch of a query goes alone so that the GPU starts at once.
    // A chunk that continues a measurement launch of several chunks
    // (TunedChoice::span, the tuner's unit) joins it.
    const char* refusal = nullptr;
    if (pending_ && (pending_->variant != next->variant || pending_->config_text != next->config_text))
      refusal = "another variant or configuration";
    else if (pending_ && pending_->chunk.rows + next->chunk.rows > kJoinedLaunchRows)
      refusal = "launch full";
    else if (pending_)
      refusal = ChunkPipeline::join_refusal(pending_->chunk, next->chunk);
    const bool same_run = pending_ && !refusal;
    const bool continues = same_run && next->choice.continues && pending_->chunks < pending_->choice.span;
    const bool joins = continues || (same_run && launches_ > 0 && pending_->exploit && next->exploit);
    if (pending_ && !joins) ++unjoined_[refusal ? refusal : "a first or measured launch"];
    if (joins) {
      const int64_t joined_rows = next->chunk.rows;
      ChunkPipeline::join(pending_->chunk, std::move(next->chunk));
      ++pending_->chunks;
      next.reset();
      if (continues && pending_->chunks == pending_->choice.span) {
        run_pending(true);  // a whole measurement: at once
      } else if (!continues && pending_->chunk.rows + joined_rows > kJoinedLaunchRows) {
        // Full: a next chunk of this size would not join, so the launch
        // goes now rather than when that chunk arrives (with several
        // devices fed by one thread, that is after the other devices'
        // chunks too).
        run_pending(true);
      }
    } else if (pending_) {
      run_pending(true);
    }
    // A chunk that opens a measurement launch waits for the chunks it spans.
    if (next && next->choice.span > 1) {
      pending_ = std::move(next);
      next.reset();
    }
    if (next && launches_ == 0 && next->variant != Variant::partitioned_hash) {
      // The query's first chunk runs as soon as it is staged, not after
      // the executor has scanned and the engine staged and decided the
      // second, which would leave the GPU idle meanwhile. Only the
      // partitioned variant waits: whether more chunks follow decides
      // whether a lone chunk may own its output (run_pending).
      pending_ = std::move(next);
      next.reset();
      run_pending(true);
    }
    if (next && !next->exploit && aggregator_) {
      // A measurement chunk is never joined: launched at once, its time
      // comes back a chunk earlier and the GPU does not idle after a wait.
      pending_ = std::move(next);
      next.reset();
      run_pending(true);
    }
  } catch (...) {
    if (next) pipeline_->release(next->chunk);
    throw;
  }
  if (next) pending_ = std::move(next);
  report_.rows += chunk.rows;
  report_.sink_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

GpuRun::GpuRun(GpuAggregationEngine& engine, const tally::AggregationSpec& spec, PooledPipeline pooled)
    : engine_(engine), device_(engine.device()), spec_(spec), pipeline_(std::move(pooled.pipeline)),
      spare_(std::move(pooled.spare)) {
  device_programs_ = tally::has_programs(spec_);
  // One launch computes the WHERE, the inputs and the key parts: the key
  // programs follow the value programs (one entry per value column).
  launch_programs_ = spec_.value_programs;
  if (!spec_.key_programs.empty()) {
    launch_programs_.resize(spec_.value_widths.size());
    launch_programs_.insert(launch_programs_.end(), spec_.key_programs.begin(), spec_.key_programs.end());
  }
  key_program_widths_.assign(spec_.key_programs.size(), 8);
  staged_key_columns_ = spec_.global_aggregate || !spec_.key_programs.empty() ? 0
                       : spec_.key_parts.empty()                                 ? 1
                                                                                 : spec_.key_parts.size();
  first_use_at_start_ = first_use_snapshot(device_.ordinal);
  if (!spec_.forced_variant.empty()) {
    forced_ = parse_variant(spec_.forced_variant);
    if (!forced_)
      throw Error(SqlState::invalid_parameter_value, "GPU: unknown aggregation variant \"" + spec_.forced_variant + "\"");
  }
  if (!spec_.forced_configuration.empty()) {
    forced_launch_ = parse_launch_config(spec_.forced_configuration);
    if (!forced_launch_)
      throw Error(SqlState::invalid_parameter_value,
                  "GPU: invalid launch configuration \"" + spec_.forced_configuration + "\"")
          .with_hint("Expected the form tpb=256,bps=4,ff=50,rpt=1.");
  }
}

GpuRun::~GpuRun() {
  if (pending_) pipeline_->release(pending_->chunk);
  pending_.reset();
  try {
    (void)pipeline_->completed(true);  // an abandoned query's chunks: their leases go when the kernels are done
  } catch (const std::exception&) {
    // Destructor: a device error was (or will be) reported by the query itself.
  }
  PooledPipeline back;
  back.pipeline = std::move(pipeline_);
  back.spare = std::move(spare_);  // untouched when this query made no aggregator
  // Only after a finished query: an abandoned or failed one may have left
  // work or overflow unsettled.
  if (finished_ && aggregator_) back.spare = SpareAggregator{std::move(aggregator_key_), std::move(aggregator_)};
  aggregator_.reset();  // before the pipeline it launched on is reused
  packer_.reset();      // its codes are freed in stream order, after the kernels that read them
  tuples_.reset();      // likewise its table and ids
  engine_.release_pipeline(std::move(back));
}

ChunkFacts GpuRun::facts_for(int64_t rows) const {
  ChunkFacts facts;
  facts.rows = static_cast<uint64_t>(rows);
  facts.estimated_groups = spec_.estimated_groups ? spec_.estimated_groups : std::max<uint64_t>(facts.rows / 4, 1);
  if (spec_.key_range_known) facts.key_range = KeyRange{spec_.key_min, spec_.key_max};
  return facts;
}

GpuRun::Decided GpuRun::decide(StagedChunk&& chunk) {
  Decided d;
  d.chunk = std::move(chunk);
  const ChunkFacts facts = facts_for(d.chunk.rows);
  if (!tuner_decided_) {
    tuner_decided_ = true;
    if (spec_.tuning_store && engine_.tuning().enabled && !forced_launch_) {
      const auto t_setup = std::chrono::steady_clock::now();
      const std::string signature = spec_.operator_signature.empty() ? tuning_signature(spec_) : spec_.operator_signature;
      const int bucket = cardinality_bucket(static_cast<double>(facts.estimated_groups));
      tuning_key_ = engine_.fingerprint() + "|" + signature + "|" + std::to_string(bucket);
      host_mark("tuning key");
      ChunkTunerInput in;
      in.device = device_;
      in.spec = *gspec_;
      in.facts = facts;
      in.signature = signature;
      in.tuning = engine_.tuning();
      in.forced_variant = forced_;
      in.race_slice = kRaceSlice;
      in.measure_chunks = measurement_chunks(*gspec_, device_, facts);
      in.resident = d.chunk.misses == 0 && d.chunk.copied_bytes == 0;
      in.records = engine_.records_for(tuning_key_, spec_.tuning_store, in.signature, bucket, d.chunk.rows);
      host_mark("records");
      tuner_.emplace(in);
      host_mark("tuner made");
      host_.tuner_setup_us += since_us(t_setup);
    }
  }
  if (tuner_) {
    const auto t_next = std::chrono::steady_clock::now();
    d.choice = tuner_->next();
    d.exploit = tuner_->exploiting();
    host_.tuner_us += since_us(t_next);
    host_mark("tuner next");
    d.variant = d.choice.variant;
    d.config = d.choice.config;
  } else {
    d.variant = forced_ ? *forced_ : choose_variant(*gspec_, device_, facts);
    d.config = default_launch_config(d.variant, *gspec_, device_, facts);
    if (forced_launch_) d.config.launch = *forced_launch_;
    d.exploit = true;  // nothing is measured
  }
  d.config_text = describe(d.config);
  host_mark("decided");
  return d;
}

void GpuRun::run_pending(bool more_follow) {
  Decided d = std::move(*pending_);
  pending_.reset();
  StagedChunk& chunk = d.chunk;
  const ChunkFacts facts = facts_for(chunk.rows);
  if (!aggregator_) {
    const auto t_setup = std::chrono::steady_clock::now();
    TableOptions options = default_table_options(d.variant, *gspec_, device_, facts);
    options.own_partitioned_output = !more_follow;
    aggregator_key_ = aggregator_key(*gspec_, options);
    if (spare_ && spare_->key == aggregator_key_) {
      aggregator_ = std::move(spare_->aggregator);
      aggregator_->reset();  // enqueued on the pipeline's stream, ahead of this query's kernels
      aggregator_reused_ = true;
    } else {
      spare_.reset();  // its device memory goes before this query's table is allocated
      aggregator_ = std::make_unique<GroupByAggregator>(device_, *gspec_, options, pipeline_->compute_stream());
    }
    spare_.reset();
    host_.aggregator_setup_us += since_us(t_setup);
    host_mark(aggregator_reused_ ? "aggregator reset" : "aggregator made");
  }
  report_.chunks += static_cast<uint64_t>(d.chunks);
  if (d.chunks > 1) joined_chunks_ += d.chunks;
  if (d.choice.screen_share > 0 && d.chunks == 1 && run_screen(d)) return;
  // Only a launch of as many chunks as the tuner measures per launch is a
  // measurement in its unit; a measurement launch cut short goes to
  // ChunkTuner::report_partial.
  const bool unit = tuner_ && d.chunks == tuner_->measure_chunks() && d.chunks >= d.choice.span;
  launch(chunk, d.choice, d.variant, d.config, !unit, 0, d.chunks);
}

bool GpuRun::run_screen(Decided& d) {
  StagedChunk& chunk = d.chunk;
  const int64_t align = ChunkPipeline::kSliceRowAlign;
  const auto rows_of = [&](double share) {
    return static_cast<int64_t>(static_cast<double>(chunk.rows) * share) / align * align;
  };
  // The raced slices in order (the proposal's, then also_screened's), the
  // reference's slice as large as the largest, then the reference's rest:
  // its slice and rest give its kernel per row and fixed part on a slice's
  // scale (ChunkTuner::report_screen, ScreenTimes).
  std::vector<int64_t> slices{rows_of(d.choice.screen_share)};
  for (const auto& a : d.choice.also_screened) slices.push_back(rows_of(a.share));
  const int64_t reference = *std::max_element(slices.begin(), slices.end());
  int64_t sliced = 0;
  for (int64_t s : slices) {
    if (s < align) return false;
    sliced += s;
  }
  if (chunk.rows - sliced - reference <= reference) return false;
  screen_times_ = ScreenTimes{};
  screen_times_.slice_rows = slices[0];
  screen_times_.reference_rows = reference;
  screen_times_.rest_rows = chunk.rows - sliced - reference;
  for (size_t i = 1; i < slices.size(); ++i) screen_times_.also.push_back({0, slices[i]});
  ++screens_;
  // The slices run first (no leases, the chunk's copy waits); the rest runs
  // last on the chunk itself, whose launch holds the leases and the slot.
  int64_t offset = 0;
  try {
    for (size_t i = 0; i <= slices.size(); ++i) {
      const bool ref = i == slices.size();
      StagedChunk part = ChunkPipeline::slice_view(chunk, offset, ref ? reference : slices[i]);
      if (i > 0) part.waits.clear();  // same stream, after the first slice's waits
      if (ref) launch(part, d.choice, d.choice.reference_variant, d.choice.reference_config, false, kScreenReferencePart);
      else if (i == 0) launch(part, d.choice, d.variant, d.config, false, 1);
      else
        launch(part, d.choice, d.choice.also_screened[i - 1].variant, d.choice.also_screened[i - 1].config, false,
               static_cast<int>(i) + 1);
      offset += ref ? reference : slices[i];
    }
  } catch (...) {
    pipeline_->release(chunk);  // its staging slot and leases: a failed slice never reaches the rest's run()
    throw;
  }
  ChunkPipeline::drop_front(chunk, offset);
  chunk.waits.clear();
  launch(chunk, d.choice, d.choice.reference_variant, d.choice.reference_config, false, kScreenRestPart);
  return true;
}

void GpuRun::launch(StagedChunk& chunk, const TunedChoice& choice, Variant v, const VariantConfig& config, bool joined,
                    int screen_part, int chunks) {
  const ChunkFacts facts = facts_for(chunk.rows);
  ChunkPointers p;
  p.rows = chunk.rows;
  if (spec_.global_aggregate) {
    if (!zero_keys_) zero_keys_ = std::make_unique<ZeroColumn>();
    p.key = ColumnPointer{zero_keys_->get(chunk.rows, width_bytes(key_width_), pipeline_->compute_stream()), nullptr};
  } else if (spec_.key_programs.empty()) {
    p.key = chunk.columns[0];
  }
  if (!device_programs_)
    p.values.assign(chunk.columns.begin() + static_cast<long>(staged_key_columns_), chunk.columns.end());
  if (facts.key_range) p.key_range = facts.key_range;
  LaunchReport r;
  bool consumed = false;
  const auto t_enqueue = std::chrono::steady_clock::now();
  uint64_t ticket = 0;
  {
    HostStepsScope scope(&steps_);
    ticket = pipeline_->run(chunk, [&] {
      // The key columns to read: the staged ones, or the rows a WHERE kept.
      std::vector<ColumnPointer> kept_keys;
      const ColumnPointer* keys = chunk.columns.data();
      if (device_programs_) {
        if (evaluate_programs(chunk, p, kept_keys) == 0) return;
        if (!kept_keys.empty()) {
          keys = kept_keys.data();
          p.key = keys[0];
        }
      }
      if (spec_.key_tuple) {
        // The rows' tuple ids, after the chunk's copies, on its stream.
        // Key programs' parts come from the evaluator, 8 bytes a value.
        if (!tuples_) tuples_ = std::make_unique<TupleKeyTable>(spec_.key_parts.size(), spec_.estimated_groups);
        const uint32_t* widths = spec_.key_programs.empty() ? chunk.widths.data() : key_program_widths_.data();
        p.key = ColumnPointer{tuples_->assign(keys, widths, p.rows, pipeline_->compute_stream()), nullptr};
      } else if (!spec_.key_parts.empty()) {
        // After the chunk's copies, before its aggregation, on its stream.
        if (!packer_) packer_ = std::make_unique<KeyPacker>();
        p.key = ColumnPointer{
            packer_->pack(spec_.key_parts, keys, chunk.widths.data(), p.rows, pipeline_->compute_stream()), nullptr};
      }
      r = aggregator_->consume(p, v, config);
      consumed = true;
    });
  }
  host_.enqueue_us += since_us(t_enqueue);
  if (first_enqueue_us_ < 0) {
    first_enqueue_us_ = since_us(created_);
    host_mark("first kernels enqueued");
  }
  timing_.push_back(Pending{ticket, choice, chunk.rows, joined, screen_part, chunks});
  ++launches_;
  const auto t_timings = std::chrono::steady_clock::now();
  collect_timings(false);
  host_.timings_us += since_us(t_timings);
  if (!consumed) return;  // the WHERE kept no row of this launch
  report_.variant = std::string(variant_name(r.variant));
  report_.configuration = describe(r.used);
  for (const std::string& a : r.adjustments)
    if (std::find(report_.details.begin(), report_.details.end(), "GPU launch adjusted: " + a) == report_.details.end())
      report_.details.push_back("GPU launch adjusted: " + a);
}

int64_t GpuRun::evaluate_programs(const StagedChunk& chunk, ChunkPointers& p, std::vector<ColumnPointer>& keys) {
  const StreamHandle stream = pipeline_->compute_stream();
  if (!evaluator_) {
    evaluator_ = std::make_unique<DeviceProgramEvaluator>();
    evaluator_->set_lookups(spec_.lookup_columns, stream);
  }
  const std::vector<ColumnPointer> columns(chunk.columns.begin() + static_cast<long>(program_column_begin_),
                                           chunk.columns.end());
  evaluator_->evaluate(spec_.row_filter, launch_programs_, columns, program_widths_, chunk.rows, stream,
                       spec_.compile_programs ? ProgramKernel::compile : ProgramKernel::interpret);
  p.rows = chunk.rows;
  p.values.clear();
  std::vector<uint32_t> value_bytes;
  for (size_t i = 0; i < value_column_.size(); ++i) {
    const int c = value_column_[i];
    p.values.push_back(c >= 0 ? chunk.columns[static_cast<size_t>(c)]
                              : ColumnPointer{evaluator_->input(i), evaluator_->input_validity(i)});
    value_bytes.push_back(c >= 0 ? chunk.widths[static_cast<size_t>(c)] : 8);
  }
  program_rows_ += chunk.rows;
  std::vector<ColumnPointer> program_keys;
  for (size_t k = 0; k < spec_.key_programs.size(); ++k) {
    const size_t at = spec_.value_widths.size() + k;  // after the value programs (launch_programs_)
    program_keys.push_back(ColumnPointer{evaluator_->input(at), evaluator_->input_validity(at)});
  }
  if (spec_.row_filter.empty()) {
    kept_rows_ += chunk.rows;
    keys = program_keys;
    if (!keys.empty()) p.key = keys[0];
    return p.rows;
  }
  // Only the rows the WHERE keeps reach the kernels, so that a dropped row
  // makes no group (count(*) and the key tuples' table see none of them).
  if (!compactor_) compactor_ = std::make_unique<RowCompactor>();
  p.rows = compactor_->select(evaluator_->mask(), chunk.rows, stream);
  kept_rows_ += p.rows;
  if (p.rows == 0) return 0;
  size_t slot = 0;
  for (size_t k = 0; k < staged_key_columns_; ++k) keys.push_back(compactor_->gather(slot++, chunk.columns[k], chunk.widths[k], stream));
  for (const ColumnPointer& k : program_keys) keys.push_back(compactor_->gather(slot++, k, 8, stream));
  for (size_t i = 0; i < p.values.size(); ++i) p.values[i] = compactor_->gather(slot++, p.values[i], value_bytes[i], stream);
  return p.rows;
}

}  // namespace tally::gpu
