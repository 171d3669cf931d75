#pragma once
// One query's aggregation on the GPU (tally::AggregationRun): stages each
// chunk through the engine's pipeline, asks the tuner (or the rules) for the
// variant and configuration, launches, feeds the launch times back to the
// tuner, and extracts the partial states at the end. EXPLAIN ANALYZE shows
// the host's and the device's time per step.
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "gpu/engine/pooled_pipeline.hpp"
#include "gpu/first_use_counts.hpp"
#include "gpu/host_steps.hpp"
#include "gpu/pipeline/column_programs.hpp"
#include "gpu/pipeline/key_packing.hpp"
#include "gpu/pipeline/row_compaction.hpp"
#include "gpu/pipeline/zero_column.hpp"
#include "gpu/pipeline/tuple_keys.hpp"
#include "gpu/rules/variant_rules.hpp"
#include "gpu/tuner/chunk_tuner.hpp"

namespace tally::gpu {

class GpuAggregationEngine;

class GpuRun final : public tally::AggregationRun {
 public:
  GpuRun(GpuAggregationEngine& engine, const tally::AggregationSpec& spec, PooledPipeline pooled);
  ~GpuRun() override;

  bool hold(const tally::ColumnIdentity& column, tally::ColumnWidth width) override;
  void sink(const tally::ChunkInput& chunk) override;

  void keep_groups_where(std::vector<tally::GroupTest> tests) override { group_tests_ = std::move(tests); }
  tally::AggregationResult finalize() override;
  tally::AggregationReport report() const override { return report_; }

 private:
  // A staged chunk (or several joined ones) with the variant and
  // configuration chosen for it.
  struct Decided {
    StagedChunk chunk;
    Variant variant = Variant::global_hash;
    VariantConfig config;
    std::string config_text;  // describe(config): joined chunks run the same
    TunedChoice choice;
    // The best known configuration with nothing under measurement (or no
    // tuner): may be joined with the neighbouring chunks' launch.
    bool exploit = false;
    int chunks = 1;
  };
  // Chooses the variant and configuration of a staged chunk (the tuner's
  // next(), created with the first chunk).
  Decided decide(StagedChunk&& chunk);
  ChunkFacts facts_for(int64_t rows) const;
  // Enqueues the pending chunk(s); `more_follow`: another chunk is staged already.
  void run_pending(bool more_follow);
  // One launch of `chunk` (a chunk or joined chunks) with `choice`, timed
  // for the tuner unless `joined`.
  void launch(StagedChunk& chunk, const TunedChoice& choice, Variant v, const VariantConfig& config, bool joined,
              int screen_part = 0, int chunks = 1);
  // A race screen (TunedChoice::screen_share): a launch per raced variant's
  // slice, the reference's slice and its rest over the staged chunk, see
  // ChunkTuner::report_screen. False when the chunk is too small to slice
  // (then it runs whole, as an ordinary race chunk).
  bool run_screen(Decided& d);
  // Feeds the timings of finished chunks to the report and the tuner
  // (wait = true: all chunks enqueued so far).
  void collect_timings(bool wait);
  void absorb_timings(const std::vector<ChunkTiming>& done);
  // Launches the pending chunk and waits, oldest chunk first, until the
  // tuner has the reports its next proposal needs.
  void await_reports();
  // The spec's programs over a staged chunk's program columns, on the
  // compute stream: fills p.values (stored inputs staged, computed ones the
  // evaluator's) and, with a WHERE, gathers the kept rows of the keys and
  // inputs (`keys` then holds the key columns to read). Returns p.rows.
  int64_t evaluate_programs(const StagedChunk& chunk, ChunkPointers& p, std::vector<ColumnPointer>& keys);
  // EXPLAIN ANALYZE lines of a timeline's marks.
  static std::string path_line(const char* title, const HostTimeline& t);
  // The key parts whose group values come back in 32 bits (KeyPart::narrow), as a bit mask.
  uint32_t narrow_key_parts() const;
  std::string start_path_line() const;

  GpuAggregationEngine& engine_;
  const DeviceInfo& device_;
  tally::AggregationSpec spec_;
  std::optional<GroupBySpec> gspec_;
  tally::ColumnWidth key_width_ = tally::ColumnWidth::int64;
  std::optional<Variant> forced_;
  std::optional<LaunchConfig> forced_launch_;
  std::unique_ptr<ChunkPipeline> pipeline_;
  // Resident columns hold() promised, leased until their chunk is staged
  // (the staged chunk then holds the lease): the cache may evict them
  // meanwhile without freeing them.
  std::vector<std::pair<ColumnKey, std::shared_ptr<const DeviceColumn>>> held_;
  std::optional<Decided> pending_;
  long launches_ = 0;        // run_pending calls
  long feedback_waits_ = 0;  // await_reports calls
  double feedback_wait_us_ = 0;
  FirstUseSnapshot first_use_at_start_;   // process-wide first-use counts when this query began
  long joined_chunks_ = 0;   // chunks that ran in a launch with others
  double joined_ms_ = 0;     // device time of the joined launches
  int64_t joined_rows_ = 0;
  // Why a chunk did not join the launch before it, and how often (EXPLAIN).
  std::map<std::string, long> unjoined_;
  std::unique_ptr<GroupByAggregator> aggregator_;
  // Key columns a staged chunk starts with: none for a global aggregate,
  // whose zero keys are made on the device (zero_keys_).
  size_t staged_key_columns_ = 1;
  std::unique_ptr<ZeroColumn> zero_keys_;
  // The spec's WHERE and input programs, evaluated on the device launch by
  // launch (GpuAggregationEngine::start hands a run only programs that fit
  // one launch). A staged chunk holds the key columns, the inputs that are
  // stored columns, then the programs' columns.
  bool device_programs_ = false;
  std::vector<int> value_column_;  // per input: its staged column; -1: a program computes it
  size_t program_column_begin_ = 0;
  std::vector<tally::ColumnWidth> program_widths_;
  std::unique_ptr<DeviceProgramEvaluator> evaluator_;
  // The programs each evaluator launch takes (value programs, then key
  // programs), and the key programs' parts' widths (8 bytes each).
  std::vector<tally::ColumnProgram> launch_programs_;
  std::vector<uint32_t> key_program_widths_;
  std::unique_ptr<RowCompactor> compactor_;  // with a WHERE
  int64_t program_rows_ = 0, kept_rows_ = 0;
  // Packs a packed key's columns per launch (spec_.key_parts); made with the first launch.
  std::unique_ptr<KeyPacker> packer_;
  // A key tuple's table (spec_.key_tuple): the rows' tuple ids per launch,
  // the groups' column values at the end; made with the first launch.
  std::unique_ptr<TupleKeyTable> tuples_;
  std::string aggregator_key_;
  // The pooled pipeline's aggregator (the previous query's), taken when this
  // query's key matches; this query's own goes back with the pipeline once
  // it finished.
  std::optional<SpareAggregator> spare_;
  bool finished_ = false;
  bool aggregator_reused_ = false;
  std::vector<tally::GroupTest> group_tests_;  // keep_groups_where's, for finish()
  // The tuner, when the spec has a tuning store, tuning is enabled and no
  // configuration is forced; created with the first chunk (the GroupBySpec
  // is known then).
  std::optional<ChunkTuner> tuner_;
  bool tuner_decided_ = false;
  std::string tuning_key_;  // device|signature|bucket of the tuner's records
  // Chunks enqueued whose device time has not been read yet: the tuner
  // learns each chunk's time a chunk or two late rather than stall the GPU.
  struct Pending {
    uint64_t ticket = 0;
    TunedChoice choice;
    int64_t rows = 0;
    bool joined = false;  // not the tuner's unit (ChunkTuner::measure_chunks): not a DaMoN measurement
    // A race screen's launches (run_screen): 1 the raced slice, 2 + i the
    // slice of TunedChoice::also_screened[i], kScreenReferencePart the
    // reference's slice, kScreenRestPart its rest; 0 an ordinary launch.
    int screen_part = 0;
    int chunks = 1;  // chunks the launch covered
  };
  static constexpr int kScreenReferencePart = (1 << 20) - 1;
  static constexpr int kScreenRestPart = 1 << 20;
  ScreenTimes screen_times_;  // the screen whose launches are coming back
  long screens_ = 0;
  std::deque<Pending> timing_;
  // Host time per step, summed over the query's chunks (EXPLAIN ANALYZE):
  // where the host spends its time when it, not the GPU, sets the pace.
  struct HostTimes {
    double stage_us = 0, tuner_setup_us = 0, aggregator_setup_us = 0, tuner_us = 0, enqueue_us = 0, timings_us = 0;
  } host_;
  // The enqueue's CUDA calls and waits (host_steps.hpp), summed over chunks.
  HostSteps steps_;
  // Query timeline on the host: when the run was created, when the first
  // chunk arrived and when the first chunk's kernels were enqueued (us after
  // creation), and the executor's time between chunks.
  std::chrono::steady_clock::time_point created_ = std::chrono::steady_clock::now();
  // Named points from creation to the first kernels (host_steps.hpp).
  HostTimeline start_path_{created_};
  std::optional<std::chrono::steady_clock::time_point> last_sink_end_;
  double first_sink_us_ = 0, first_enqueue_us_ = -1, scan_gap_us_ = 0;
  static double since_us(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count();
  }
  tally::AggregationReport report_{"gpu", "", "", 0, 0, 1, 0, 0, 0, 0, {}};
};

}  // namespace tally::gpu
