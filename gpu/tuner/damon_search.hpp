#pragma once
// DamonSearch: Algorithm 1 of Rosenfeld et al., "Performance Analysis and
// Automatic Tuning of Hash Aggregation on GPUs" (DaMoN'19), as a host-only
// state machine driven chunk by chunk by the operator:
//
//   while (chunks remain) {
//     LaunchConfig c = search.next_configuration();
//     double t = run_chunk(c) / rows;            // seconds per row
//     search.report(c, t);
//   }
//
// It follows the gradient over the configuration grid from the initial
// configuration(s); neighbours with similar times (within s) form a plateau
// and are explored as separate branches; branches slower than p x the best are
// pruned; every configuration is measured over several chunks (Measurement:
// v_max, b_max). Once the queue is empty the search has converged and
// next_configuration() returns the best configuration for all further chunks.
// The state is plain data (SearchState) so the tuning cache can persist it and
// a later query can continue where this one stopped.
#include <deque>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "gpu/tuner/launch_config.hpp"
#include "gpu/tuner/measurement.hpp"
#include "gpu/tuner/search_space.hpp"

namespace tally::gpu {

struct SearchParams {
  double similarity_s = 0.06;  // plateau: (1-s) t_i <= t_j <= (1+s) t_i
  double pruning_p = 1.07;     // drop references slower than p x best
  MeasurementParams measurement;
  // Steps along these dimensions may form plateaus; a step that changes any
  // other dimension (a variant parameter) is compared strictly. The paper
  // studies plateaus in the thread-configuration plane; branching on every
  // near-equal variant parameter too multiplies the branches in a 4-D grid
  // (about 3x the chunks for no better configurations).
  std::vector<ConfigDimension> plateau_dimensions = {ConfigDimension::threads_per_block,
                                                     ConfigDimension::blocks_per_sm};
  // Flat spaces (atomic-bound global tables, sort's ignored grid axes): when
  // this many configurations in a row improved the best by less than
  // min_improvement, the search stops (0 = never: the paper's algorithm).
  // Plateau branching otherwise walks most of a flat grid for < 1 % gains.
  // 64 (15-45 % of a variant's grid) keeps every recorded cell within 2.5 %
  // of its optimum while cutting the median effort by a third; 48 already
  // loses cells.
  int patience = 64;
  double min_improvement = 0.01;
  // A configuration whose fastest chunk so far is slower than abandon_factor x
  // the best time ends its measurement at once (0 = never: the paper measures
  // every configuration over a full window). Such a configuration can only be
  // "worse"; a precise time for it buys nothing and costs chunks at a bad
  // configuration, e.g. a variant raced on its cold-start configuration.
  // 2 keeps every recorded cell within 2 % and cuts the chunks spent at bad
  // configurations; 1.5 mistakes first-chunk outliers (table fills) for slow
  // configurations.
  double abandon_factor = 2.0;

  static SearchParams from_config(const config::TuningConfig& tuning);
};

enum class StepEvent {
  initial,   // an initial configuration measured
  plateau,   // similar to its reference: pushed as a new branch
  better,    // faster than its reference: replaces it (gradient step)
  worse,     // slower: discarded
};
std::string_view step_event_name(StepEvent event);

// One measured configuration on the search path (what EXPLAIN ANALYZE and the
// admin page show).
struct SearchStep {
  LaunchConfig config;
  double seconds_per_row = 0;
  int chunks = 0;
  StepEvent event = StepEvent::initial;
};

// Everything needed to continue a search later.
struct SearchState {
  std::vector<LaunchConfig> pending_initial;  // initial configurations not measured yet
  std::deque<LaunchConfig> queue;             // reference configurations Q (front = top)
  std::map<LaunchConfig, double> measured;    // t(c) of every tested configuration
  // For a configuration reached by a gradient or plateau step, the reference
  // it was reached from: its untested neighbours are tried continuing that
  // step first (the paper leaves the order of Pop(N) open).
  std::map<LaunchConfig, LaunchConfig> came_from;
  std::optional<LaunchConfig> best;           // c_f
  std::vector<SearchStep> path;
  // The configuration being measured (continued on resume) and its
  // reference c_i (absent for an initial configuration).
  std::optional<LaunchConfig> measuring;
  std::optional<LaunchConfig> measuring_reference;
  // The times per row reported so far for `measuring`, oldest first: a later
  // query continues its measurement window with them. Without them a warm
  // query, which spends only a share of its chunks on the search, restarted
  // the window each time and, with fewer search chunks per query than a
  // window needs, would never finish a measurement.
  std::vector<double> measuring_times;
  long chunks = 0;                            // chunks reported so far
  // The unit of every time above: seconds per row of a timed launch over
  // this many chunks (ChunkTunerInput::measure_chunks). A launch's fixed part
  // is paid once per launch, so times of launches of other sizes do not
  // compare; a state is only continued in its own unit.
  int launch_chunks = 1;
  // launch_chunks is 1 because the query that first measured this key was
  // copying its chunks to the device, so no launch could be joined: a later
  // query whose chunks are resident measures the key again in joined
  // launches (ChunkTunerInput::resident). A variant's kernel runs at another
  // speed per row there (a launch's fixed part, paid once for several chunks
  // rather than for each: the shared-memory tables' flush), so single-chunk
  // times can rank the variants wrongly for what the resident queries run.
  bool single_for_copies = false;
  int since_improvement = 0;                  // measured configurations since the best last improved
  bool converged = false;
};

// What a search state records (the tuning cache, a finished query's
// records): its measured best and that time, or, with no best yet, its open
// first measurement (a short query's, persisted as source "measuring" and
// continued by the next query): its configuration and the median of its times so far, the
// upper middle of an even count (its first launch's time may carry a cold
// start, so not the mean); nullopt with neither.
struct RecordedChoice {
  LaunchConfig config;
  double seconds_per_row = 0;
  bool open = false;  // an open first measurement (source "measuring")
};
std::optional<RecordedChoice> recorded_choice(const SearchState& state);

class DamonSearch {
 public:
  DamonSearch(SearchSpace space, std::vector<LaunchConfig> initial, SearchParams params = {});
  // Continues a search from a persisted state (its space must be the same grid).
  DamonSearch(SearchSpace space, SearchState state, SearchParams params = {});

  // The configuration to run the next chunk with.
  LaunchConfig next_configuration();
  // The time per row of a chunk run with `config` (normally the one
  // next_configuration returned; other reports only count as chunks). After
  // convergence, reports of the best configuration update its time (a
  // running average over about eight chunks).
  void report(const LaunchConfig& config, double seconds_per_row);

  // Ends the configuration being measured with the chunks it has run (at
  // least one): the caller knows it is far slower than an alternative (e.g.
  // another variant), so a precise time is not worth more chunks. No-op when
  // nothing is being measured or no chunk was reported yet.
  void abandon_measurement();

  bool converged() const { return state_.converged; }
  // Sets the unit of the times this search is given (SearchState::launch_chunks)
  // and the measurement window in that unit; for a search that has measured
  // nothing yet (its current window restarts).
  void set_launch_chunks(int chunks, const MeasurementParams& measurement, bool single_for_copies = false) {
    state_.launch_chunks = chunks;
    state_.single_for_copies = single_for_copies;
    params_.measurement = measurement;
    measurement_ = Measurement(measurement);
  }
  // The fastest configuration measured so far (the initial one before any report).
  LaunchConfig best() const;
  std::optional<double> best_seconds_per_row() const;
  const SearchState& state() const { return state_; }
  const SearchSpace& space() const { return space_; }
  long chunks() const { return state_.chunks; }
  // Configurations measured (or being measured).
  size_t configurations_tested() const { return state_.measured.size() + (state_.measuring ? 1 : 0); }

 private:
  // Advances Algorithm 1 until a configuration needs measuring or the queue is empty.
  void advance();
  bool similar(double a, double b) const;
  bool may_form_plateau(const LaunchConfig& from, const LaunchConfig& to) const;
  void finish_measurement();
  void start_measuring(const LaunchConfig& config, std::optional<LaunchConfig> reference);

  SearchSpace space_;
  SearchParams params_;
  SearchState state_;
  Measurement measurement_;
};

}  // namespace tally::gpu
