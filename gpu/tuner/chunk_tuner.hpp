#pragma once
// ChunkTuner: what a GpuRun asks, chunk by chunk, for the variant and launch
// configuration to run, and tells how long the chunk took.
//
//   ChunkTuner tuner(input);                    // records loaded from the TuningStore
//   for each chunk:
//     TunedChoice c = tuner.next();
//     LaunchReport r = aggregator.consume(chunk, c.variant, c.config);
//     tuner.report(r.used, seconds / rows);
//   store every tuner.records() entry; tuner.explain() goes to EXPLAIN ANALYZE.
//
// Policy. Variants gpu/'s can_use forbids for the query are never proposed.
// Variants the cache knows nothing about (for this device, signature and
// cardinality bucket) are raced inside the query: each runs its cold-start
// configuration for one measurement (a few chunks; any variant can process any
// chunk), then the fastest is searched further (DaMoN'19 Algorithm 1,
// continuing the cached search state) and, once converged, runs its best
// configuration. A raced variant's first measurement is a screen on a slice
// of a chunk (kRaceSlice), smaller for a variant the rules expect to be far
// slower (kScreenPriorMargin); measurements are timed over launches of
// measurement_chunks() joined chunks. On a warm cache the cached best
// variant and configuration run from the first chunk; with probability
// explore_rate a query spends one measurement on another variant
// (vw-greedy, ADMS'15), so the cache follows
// data changes without losing a whole query to exploration. On a warm cache
// each chunk is a search chunk (the unconverged search's next configuration,
// or the exploration) only with probability tuning.warm_search_share; the
// others run the cached best, so what a warm query pays for learning is
// bounded by that share whatever the grid.
//
// Reports may arrive late (the engine reads CUDA events without stalling the
// stream): report(choice, t) names the proposal it measures. DaMoN'19's
// Algorithm 1 is sequential, though: each configuration is chosen knowing the
// times of the ones before. awaits_reports() says when the next proposal must
// first see the reports of earlier measurement proposals still running (the
// engine then waits for their CUDA events); exploiting proposals never wait,
// and the chunks a measurement needs in any case may run ahead. A warm query
// never waits: a search proposal that would runs the cached best instead and
// the search goes on at a later chunk, once the reports are in (a wait stalls
// the device for the launches in flight, which cost a warm query of a million
// groups more than its whole search share).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "common/aggregate_engine.hpp"
#include "gpu/group_by_spec.hpp"
#include "gpu/rules/device_info.hpp"
#include "gpu/rules/variant_config.hpp"
#include "gpu/rules/variant_rules.hpp"
#include "gpu/tuner/damon_search.hpp"
#include "gpu/tuner/vw_greedy.hpp"

namespace tally::gpu {

struct TunedChoice {
  Variant variant = Variant::global_hash;
  VariantConfig config;
  // A race screen (ChunkTunerInput::race_slice): `variant`/`config` run on
  // the first `screen_share` of the chunk's rows only (and also_screened's
  // variants on theirs), the reference (the best measured variant at its
  // best configuration) on a slice as large as the largest raced one after
  // them and then on the rest; the launch times go to report_screen().
  // 0: the whole chunk runs `config`.
  double screen_share = 0;
  Variant reference_variant = Variant::global_hash;
  VariantConfig reference_config;
  // Further raced variants screened in the same chunk (a joint screen,
  // kMaxJointScreenShare): each runs on its own slice after `variant`'s, in
  // this order, before the reference's slice and rest. Empty for a screen
  // of one.
  struct ScreenSlice {
    Variant variant = Variant::global_hash;
    VariantConfig config;
    double share = 0;
  };
  std::vector<ScreenSlice> also_screened;
  // A measurement timed over one launch of `span` adjacent chunks
  // (ChunkTunerInput::measure_chunks): the next span - 1 next() results
  // continue it (`continues`: the same variant and configuration, joined into
  // its launch, no report of their own). The launch's time per row is
  // reported once, for this proposal; a launch of another size is not a
  // measurement in the search's unit (drop()).
  int span = 1;
  bool continues = false;
};

// The launches of a race screen, in milliseconds, and their rows: the raced
// slice (TunedChoice::variant), the slices of TunedChoice::also_screened in
// order (`also`), a slice of the reference of reference_rows rows (0: as
// many as slice_rows) and the reference's rest. The reference's slice and
// rest give its kernel per row and fixed launch part on launches of a
// slice's size. reference_ms 0: no reference slice; both come from its
// measured best (one launch of measure_chunks chunks) and the rest instead,
// which is biased: a launch of two chunks runs cheaper per row than the line
// through a slice and the rest predicts (see report_screen).
struct ScreenTimes {
  double raced_ms = 0, reference_ms = 0, rest_ms = 0;
  int64_t slice_rows = 0, rest_rows = 0, reference_rows = 0;
  struct Slice {
    double ms = 0;
    int64_t rows = 0;
  };
  std::vector<Slice> also;
};

// Share of a chunk a raced variant's first measurement (a screen) runs on
// in the engine: large enough that its kernel time dominates the launch's
// fixed part, small enough that a losing variant costs little of a chunk.
constexpr double kRaceSlice = 0.25;
// A raced variant's screen is sized by what the rules expect of it
// (rules_prior_slowdown r; ChunkTuner::screen_share_for): a variant with no
// prior (r = 1) gets the whole race slice, on which the abandon factor's
// tolerance for a larger fixed launch part was set; one the rules expect r
// times slower gets the smallest slice on which a variant kScreenPriorMargin
// times closer to the reference than r (ratio 1 + (r - 1) / margin) still
// clears the screen's threshold, which scales with the slice
// (screen_abandon_factor), but no smaller than one row per resident thread
// of the device (below that a slice times its launch, not its rows). Why not
// a fixed budget of 1-2% of a chunk's time: a slice on which a 1.5x
// variant's excess is not above the fixed-part tolerance cannot drop it, and
// its undecided verdict costs a second, full screen.
constexpr double kScreenPriorMargin = 2;
// A race screen takes every raced variant still to be screened into one
// chunk, on their own slices, while their slices and the reference's slice
// (as large as the largest) together are at most this share of it; the
// reference runs the rest. A screen of its own would cost each raced
// variant three launches and a feedback wait; a joint one costs a launch
// per raced variant and two. Why 3/4: the rest launch still covers at least
// a quarter of the chunk, as large as the reference's slice, so the two give
// its kernel per row.
constexpr double kMaxJointScreenShare = 0.75;
// ... and while the reference's rest stays at least this many times its
// slice: the two launches' difference in rows is what gives the reference's
// kernel per row and fixed part. With slices at the whole race slice three
// quarters could leave a rest as large as the slice, no difference at all:
// the fixed part would come out 0 and each slice's ratio be pulled towards 1
// by its launch's fixed part. 1.5: the rows between the two are at least
// half a slice.
constexpr double kMinJointRestOverReference = 1.5;
// Chunks one measurement launch covers (ChunkTunerInput::measure_chunks).
// The partitioned kernel's launch pays a fixed part, the flush of every
// block's claimed groups (~blocks x G, independent of rows), so a single
// chunk's launch runs slower per row than a joined one. Measured over pairs,
// every measurement launch pays the fixed part once per two chunks, and all
// candidates are compared in one unit (seconds per row of a two-chunk
// launch: SearchState::launch_chunks).
// A key's unit is that of its first measurement: a query whose first
// measurement launch could not be joined (report_partial: a copy in flight,
// a NULL bitmap, chunks not adjacent in device memory, or a table of one
// chunk) measures single chunks, and so does every later query of that key,
// except after a copy in flight: the first query whose chunks are resident
// measures the key again in joined launches (SearchState::single_for_copies).
constexpr int kMeasureChunks = 2;
// Resident chunks in table order run joined up to 2^26 rows, where a fixed
// part per launch all but vanishes. The dense table's flush (blocks x its
// slots) grows with its key range: past kLargeDenseSlots it costs a two-chunk
// launch more than global hash's atomics do, though joined the dense table is
// several times faster. Keys whose dense table would be that large are
// measured over kLargeDenseMeasureChunks chunks, nearer the exploited launch.
constexpr uint64_t kLargeDenseSlots = 4096;
constexpr int kLargeDenseMeasureChunks = 8;
// The measurement unit (ChunkTunerInput::measure_chunks) for a key.
int measurement_chunks(const GroupBySpec& spec, const DeviceInfo& device, const ChunkFacts& facts);

struct ChunkTunerInput {
  DeviceInfo device;
  GroupBySpec spec;
  // Rows of a typical chunk, the key range (dense) and the estimated groups.
  ChunkFacts facts;
  std::string signature;                       // tuning_signature(...) or the planner's
  std::vector<tally::TuningRecord> records;  // TuningStore::load(device, signature, bucket)
  config::TuningConfig tuning;
  std::optional<Variant> forced_variant;       // nullopt = choose; else only this variant runs
  uint64_t seed = std::random_device{}();      // exploration draws
  // Share of a chunk a raced variant's screen runs on (the engine passes
  // kRaceSlice; 0: no screens, the race measures whole chunks, which the
  // tests of the race itself use); a variant the rules expect to be far
  // slower gets a smaller one (kScreenPriorMargin). See report_screen.
  double race_slice = 0;
  // Chunks per measurement launch (measurement_chunks(); the engine joins
  // them). A cached search state continues in the unit it was measured in
  // (SearchState::launch_chunks), whatever this says.
  int measure_chunks = kMeasureChunks;
  // The query's first chunk is resident on the device (nothing to copy):
  // its measurement launches can be joined, unless something else than a
  // copy prevents it. A key measured in single chunks only because its first
  // query was copying is measured again in this query's unit.
  bool resident = false;
  // Every raced variant still to be screened shares one screen chunk
  // (kMaxJointScreenShare), as the engine runs them; false: one screen per
  // chunk, which the tests of a single screen's verdict use.
  bool joint_screens = true;
};

class ChunkTuner {
 public:
  // Throws Error(0A000) when no variant can run the query.
  explicit ChunkTuner(const ChunkTunerInput& input);
  ~ChunkTuner();
  ChunkTuner(ChunkTuner&&) noexcept;
  ChunkTuner& operator=(ChunkTuner&&) noexcept;

  // The variant and configuration for the next chunk.
  TunedChoice next();
  // The time per row of the chunk run after the last next(). `used` is what
  // the launcher ran; when it clamped the proposal, the time still counts for
  // the proposed grid point (that is what the proposal means on this device).
  void report(const VariantConfig& used, double seconds_per_row);
  // The time per row of the chunk run with `proposed` (a next() result, not
  // necessarily the last one).
  void report(const TunedChoice& proposed, double seconds_per_row);
  // The times of a screen proposal (next() with screen_share > 0). Each
  // raced variant (the proposal's and those of also_screened) leaves the
  // race when its slice, less the reference's fixed launch part, is more
  // than its slice's abandon factor slower than the reference's kernel on
  // as many rows; otherwise it is measured on whole chunks as without
  // screens (the screen's time is not mixed into them), or, undecided on a
  // small slice, screened again on the full one. The reference's kernel
  // per row and fixed part: from its slice and rest (reference_ms > 0, what
  // the engine runs), else from its measured best launch and the rest
  // (ScreenTimes).
  void report_screen(const TunedChoice& proposed, const ScreenTimes& times);
  // A measurement proposal (span > 1) whose launch covered fewer chunks
  // than its span (the next chunk could not be joined, or the query ended),
  // with that launch's time per row (0: unknown). While nothing has been
  // measured in the query's unit (a fresh key), the query switches to
  // single chunks and this time is its first measurement; otherwise it is
  // not in the search's unit and is forgotten. No-op for other proposals.
  void report_partial(const TunedChoice& proposed, double seconds_per_row);
  void drop(const TunedChoice& proposed) { report_partial(proposed, 0); }
  // Chunks per measurement launch in this query (the unit of its times).
  int measure_chunks() const { return span_; }
  // Whether the next proposal is a measurement (race, search or exploration)
  // that could differ once the reports of earlier measurement proposals
  // still unreported are in: the caller should deliver those reports (wait
  // for their chunks) before calling next(). False for a proposal that
  // exploits the best known configuration, and while the configuration under
  // measurement surely needs the chunks already proposed and one more (fewer
  // reported and outstanding chunks than a measurement window plus one run-
  // ahead chunk, and no first chunk outstanding whose time could end it
  // early: a raced variant's first, a search neighbour's first two; see
  // kWindowRunAhead in chunk_tuner.cpp). On a warm cache it
  // draws the next chunk's search lottery, which next() then uses, and is
  // never true: a proposal that would wait becomes the cached best.
  bool awaits_reports();
  // Measurement proposals made by next() and not reported yet.
  size_t unreported() const { return unreported_.size(); }
  // Whether the cache held a measured best when the query started (a warm
  // query: searching is capped by warm_search_share).
  bool warm() const { return warm_; }

  // One line for EXPLAIN ANALYZE: estimate bucket, variant and its source
  // (rule/cache/explored), configuration, search path summary, chunks spent
  // searching.
  std::string explain() const;
  // What to persist: one record per variant this query measured.
  std::vector<tally::TuningRecord> records() const;

  const std::string& device() const { return fingerprint_; }
  const std::string& signature() const { return signature_; }
  int bucket() const { return bucket_; }
  // The variant that runs once racing/exploring is over.
  Variant current_variant() const;
  bool converged() const;
  // Chunks run with something other than the current best configuration.
  long chunks_searching() const { return chunks_searching_; }
  // Whether the last next() proposed the best configuration with nothing
  // under measurement (a warm cache's non-search chunk, or a converged
  // search): such chunks may be joined into one launch, whose time is still
  // reported; search chunks keep their own launches (DaMoN'19 measures
  // configurations per chunk).
  bool exploiting() const { return exploiting_; }
  long chunks() const { return chunks_; }
  // The last screen's verdict ratio (raced / reference, fixed part removed; 0: none).
  double last_screen_ratio() const { return last_screen_ratio_; }

  struct Slot;

 private:
  Slot& slot(Variant v);
  const Slot& slot(Variant v) const;
  Slot* pick_slot();
  // What the next proposal runs: its slot and whether it is a search chunk
  // (false: the slot's best configuration).
  struct Plan {
    Slot* slot = nullptr;
    bool search = false;
  };
  Plan plan();
  bool exploits(const Plan& p) const;
  bool must_await_reports();

  std::string fingerprint_;
  std::string signature_;
  int bucket_ = 0;
  uint64_t estimated_groups_ = 0;
  bool refine_ = true;
  double abandon_factor_ = 0;       // SearchParams::abandon_factor
  double race_abandon_factor_ = 0;  // between raced variants (chunk_tuner.cpp: kRaceAbandonFactor)
  std::vector<std::unique_ptr<Slot>> slots_;  // usable variants, preferred first
  std::optional<Variant> current_;            // decided after the race
  std::optional<Variant> exploring_;          // one measurement on another variant
  ChoiceReason current_reason_ = ChoiceReason::rule;
  std::optional<std::pair<Variant, LaunchConfig>> pending_;  // last proposal
  long chunks_ = 0;
  long chunks_searching_ = 0;
  bool exploiting_ = false;
  bool warm_ = false;
  double search_share_ = 1.0;
  std::mt19937_64 rng_;
  std::optional<bool> warm_draw_;  // a warm query's search lottery drawn for the next chunk
  // A warm query's next chunk runs the cached best instead of a search
  // proposal that would first wait for earlier measurements (awaits_reports).
  bool defer_search_ = false;
  int measure_window_ = 3;         // MeasurementParams::window of the searches
  double race_slice_ = 0;
  bool joint_screens_ = true;
  uint64_t chunk_rows_ = 0;       // ChunkFacts::rows: a measurement launch's rows are span_ x these
  double similarity_s_ = 0.06;        // SearchParams::similarity_s
  bool screen_outstanding_ = false;
  double last_screen_ratio_ = 0;
  int span_ = 1;                  // chunks per measurement launch (SearchState::launch_chunks of every slot)
  bool resident_ = false;         // ChunkTunerInput::resident
  bool remeasured_ = false;       // cached single-chunk times of a copying query set aside for joined launches
  int continuation_left_ = 0;     // next() results still continuing the last measurement proposal
  bool continuation_searching_ = false;
  TunedChoice continuation_;      // what they continue
  MeasurementParams single_measurement_;  // the window in single chunks (a switch to them)
  // Measurement proposals not reported yet, oldest first.
  std::vector<std::pair<Variant, LaunchConfig>> unreported_;
  void forget_unreported(Variant v, const LaunchConfig& c);
  // One raced variant's screen verdict: its slice of `rows` rows took
  // `raced_ms`; the reference's kernel runs at `ref_ms_per_row`, its launch
  // pays `fixed_ms`. Returns the verdict's ratio.
  double judge_screen(Variant v, const LaunchConfig& c, double share, double raced_ms, int64_t rows, double fixed_ms,
                      double ref_ms_per_row, double ref_best);
  // The screen verdict's abandon threshold for a screen on `share` of a chunk.
  double screen_abandon_factor(double share) const;
  // The share of a chunk a raced variant's screen runs on, from the rules'
  // prior slowdown (kScreenPriorMargin).
  double screen_share_for(double prior_slowdown, uint64_t chunk_rows, const DeviceInfo& device) const;
  void record(Variant v, const LaunchConfig& c, double seconds_per_row);
};

}  // namespace tally::gpu
