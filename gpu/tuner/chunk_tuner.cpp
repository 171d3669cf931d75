#include "gpu/tuner/chunk_tuner.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "common/engine_counters.hpp"
#include "common/error.hpp"
#include "gpu/rules/cold_start_rules.hpp"
#include "gpu/tuner/cardinality_bucket.hpp"
#include "gpu/tuner/chunk_tuner_slot.hpp"
#include "gpu/tuner/search_space.hpp"
#include "gpu/tuner/search_state_json.hpp"
#include "gpu/tuner/search_state_memo.hpp"

namespace tally::gpu {

namespace {

std::string ns_per_row(double seconds_per_row) { return fmt::format("{:.3f} ns/row", seconds_per_row * 1e9); }

// Whether a variant can win for this estimate, so that a cold query races it
// and vw-greedy explores it. The shared-memory hash whose per-block table
// cannot hold the estimated groups (even at twice the estimate's error
// budget) sends every row past its capacity on to the global table: global
// hash's work plus its own, so it cannot beat global hash and a race chunk of
// it is pure loss. It stays in the pool: a query that forces it, or a cache that knows it, still runs it.
constexpr uint64_t kWorthMeasuringSlack = 2;
bool worth_measuring(Variant v, const GroupBySpec& spec, const DeviceInfo& d, const ChunkFacts& facts) {
  if (v != Variant::shared_hash) return true;
  const uint64_t est = std::max<uint64_t>(facts.estimated_groups, 1);
  if (can_use_dictionary(spec, d, est)) return true;
  const uint32_t fit = hash_slots_fitting(spec, plan_lanes(spec), shared_budget_per_block(d, 1));
  const double holds = fit * default_launch_config(Variant::shared_hash, spec, d, facts).fill();
  return static_cast<double>(est) <= holds * kWorthMeasuringSlack;
}

// A raced variant whose first chunk is this much slower than a variant
// already measured leaves the race after that chunk (the search's own
// abandon_factor, 2, is for neighbouring configurations of one variant, whose
// first-chunk outliers it must not mistake for slow ones). The race only has
// to rank variants at their rule configurations, and each chunk of a loser is
// paid by the first query. The risk: a variant whose rule configuration is
// 1.5-2x slower than the leader's but whose optimum is faster; rule
// configurations sit close to each variant's optimum, and warm queries still
// explore an abandoned variant (vw-greedy), so such a loss does not last.
constexpr double kRaceAbandonFactor = 1.5;

// A key measured again in joined launches (SearchState::single_for_copies)
// races only the variants its single-chunk times left within this factor of
// the fastest: a launch's fixed part can rank close variants differently in
// the two units (the dense table's flush: 1.4x slower than global hash in
// single chunks, 4x faster joined), not one several times slower, and the
// race runs in a query whose chunks are resident, where every raced chunk
// shows in its time. The others are explored later by vw-greedy.
constexpr double kRemeasureMargin = 4;

// That query runs warm: the fastest single-chunk variant at its best
// single-chunk configuration, with this share of its chunks (not
// tuning.warm_search_share) measuring in joined launches, and it never
// waits for a measurement. A race that waits stalls the device at every
// measurement: the first resident run of a 100-group question over 96
// chunks spent 24-32 waits and ran twice as long as the runs after it,
// while a quarter of the chunks still finishes a window of measurements
// within a query or two; the single-chunk ranking is a good first guess
// (kRemeasureMargin: only close variants can swap), and a variant that
// measures faster takes over as in any warm query.
constexpr double kRemeasureSearchShare = 0.25;

// Chunks a measurement runs ahead of the times it waits for. A chunk
// proposed after a wait starts on an idle GPU and is timed with the host's
// enqueue of its launches, so a window holding one is uneven and DaMoN'19's
// v_max (1.9%) rejects it, and windows grow long. Each configuration's first chunk
// follows a wait whatever we do (the search is sequential), so its window
// most likely needs one chunk more: kWindowRunAhead sends it with the
// others; and a search neighbour's second chunk is enqueued before its first
// time is in (kFirstTimeRunAhead), so that it does not start on an idle GPU
// as well. A chunk beyond what a stable window needed is still the measured
// configuration's (its time is dropped), a near neighbour of the best.
constexpr size_t kWindowRunAhead = 1;
constexpr size_t kFirstTimeRunAhead = 2;

AggregationShape shape_of(const GroupBySpec& spec, const ChunkFacts& facts, bool dense) {
  AggregationShape s;
  s.estimated_groups = static_cast<double>(std::max<uint64_t>(facts.estimated_groups, 1));
  s.key_bytes = spec.key_type == KeyType::int32 ? 4 : 8;
  // One 8-byte global-table lane per aggregate (lane_plan.hpp), at least the row count.
  s.state_bytes = 8 * static_cast<int>(std::max<size_t>(spec.aggregates.size(), 1));
  s.dense_key_range = dense;
  return s;
}


}  // namespace

int measurement_chunks(const GroupBySpec& spec, const DeviceInfo& device, const ChunkFacts& facts) {
  const bool large_dense = facts.key_range && facts.key_range->size() >= kLargeDenseSlots &&
                           can_use(Variant::dense, spec, device, facts);
  return large_dense ? kLargeDenseMeasureChunks : kMeasureChunks;
}

ChunkTuner::ChunkTuner(const ChunkTunerInput& in)
    : fingerprint_(in.device.fingerprint()),
      signature_(in.signature),
      bucket_(cardinality_bucket(static_cast<double>(in.facts.estimated_groups))),
      estimated_groups_(in.facts.estimated_groups),
      refine_(in.tuning.enabled),
      search_share_(std::clamp(in.tuning.warm_search_share, 0.0, 1.0)),
      rng_(in.seed ^ 0x5eed5eedULL) {
  // The working pool, most preferred first: gpu/'s rule choice, then the
  // tuner's rule order, then any other variant can_use allows.
  std::vector<Variant> pool;
  const auto add = [&](Variant v) {
    if (std::find(pool.begin(), pool.end(), v) == pool.end() && can_use(v, in.spec, in.device, in.facts)) pool.push_back(v);
  };
  if (in.forced_variant) {
    pool.push_back(*in.forced_variant);  // the caller forced it: run it even where the rules would not
  } else {
    add(choose_variant(in.spec, in.device, in.facts));
    const bool dense = can_use(Variant::dense, in.spec, in.device, in.facts);
    for (Variant v : rule_variant_order(in.device, shape_of(in.spec, in.facts, dense))) add(v);
    for (Variant v : kAllVariants) add(v);
  }
  if (pool.empty()) throw Error(SqlState::feature_not_supported, "GPU: no aggregation variant can run this query");

  const AggregationShape shape = shape_of(in.spec, in.facts, can_use(Variant::dense, in.spec, in.device, in.facts));
  // The unit of this key's times: a cached search continues in the one it
  // was measured in (a state measured by a query that could not join its
  // chunks stays in single chunks); a fresh one takes the input's.
  span_ = std::max(in.measure_chunks, 1);
  resident_ = in.resident;
  for (const auto& r : in.records) {
    if (r.device != fingerprint_ || r.search_state.empty()) continue;
    if (const auto st = parse_state(r.search_state); st && (!st->measured.empty() || !st->measuring_times.empty())) {
      // Measured in single chunks only because that query copied its
      // chunks: this resident one measures in its own unit, and the
      // single-chunk states (another unit) are set aside below.
      remeasured_ = st->launch_chunks == 1 && st->single_for_copies && resident_ && span_ > 1;
      if (!remeasured_) span_ = st->launch_chunks;
      break;
    }
  }
  SearchParams params = SearchParams::from_config(in.tuning);
  single_measurement_ = params.measurement;
  if (span_ > 1) {
    // DaMoN'19's window and b_max count chunks: in launches of span_ chunks
    // a window covers at least as many chunks (2 x 2 for 3) and a
    // measurement at most as many (5 x 2 for 10); each time is already a
    // mean over span_ chunks.
    params.measurement.window = std::max(2, (params.measurement.window + span_ - 1) / span_);
    params.measurement.b_max = std::max(params.measurement.window, (params.measurement.b_max + span_ - 1) / span_);
  }
  abandon_factor_ = params.abandon_factor;
  race_abandon_factor_ = params.abandon_factor > 0 ? std::min(params.abandon_factor, kRaceAbandonFactor) : 0;
  measure_window_ = std::max(params.measurement.window, 1);
  race_slice_ = std::clamp(in.race_slice, 0.0, 0.5);
  joint_screens_ = in.joint_screens;
  chunk_rows_ = in.facts.rows;
  similarity_s_ = params.similarity_s;
  // Set aside single-chunk times, per variant (remeasured_).
  std::map<Variant, double> single_times;
  std::map<Variant, LaunchConfig> single_best;
  double fastest_single = 0;
  std::optional<Variant> fastest_single_variant;
  if (remeasured_) {
    for (const auto& r : in.records) {
      const auto v = parse_variant(r.variant);
      if (!v || r.device != fingerprint_ || !(r.seconds_per_row > 0)) continue;
      single_times[*v] = r.seconds_per_row;
      if (const auto st = parse_state(r.search_state); st && (st->best || st->measuring))
        single_best[*v] = st->best ? *st->best : *st->measuring;
      if (fastest_single == 0 || r.seconds_per_row < fastest_single) {
        fastest_single = r.seconds_per_row;
        fastest_single_variant = v;
      }
    }
  }
  bool any_cached = false;
  for (Variant v : pool) {
    auto s = std::make_unique<Slot>();
    s->variant = v;
    s->base = default_launch_config(v, in.spec, in.device, in.facts);
    s->worth_measuring = in.forced_variant.has_value() || worth_measuring(v, in.spec, in.device, in.facts);
    if (const auto t = single_times.find(v); t != single_times.end() && t->second > kRemeasureMargin * fastest_single)
      s->worth_measuring = false;
    s->screen_share = screen_share_for(rules_prior_slowdown(in.device, shape, v), in.facts.rows, in.device);
    const SearchSpace grid = default_search_space(in.device, v);
    SearchSpace space(grid.axes(), s->base.launch);
    // The search starts from gpu/'s own rule configuration
    // (default_launch_config), computed from the device's limits, or from
    // the best single-chunk configuration of a key measured again.
    const auto single = single_best.find(v);
    s->start = space.snap(single != single_best.end() ? single->second : s->base.launch);
    for (int d = 0; d < kConfigDimensionCount; ++d) {  // dimensions off the grid keep gpu/'s defaults
      const auto dim = static_cast<ConfigDimension>(d);
      if (std::none_of(space.axes().begin(), space.axes().end(), [dim](const GridAxis& a) { return a.dimension == dim; }))
        s->start.set(dim, space.base().get(dim));
    }
    std::optional<SearchState> state;
    for (const auto& r : in.records) {
      if (parse_variant(r.variant) != v || r.device != fingerprint_) continue;  // never another GPU's entry
      state = usable_state(r, space);
      if (state && state->launch_chunks != span_) state.reset();  // another unit: not comparable
      if (state) s->observations = r.observations;
    }
    if (state) {
      s->cached = state->best.has_value();
      any_cached = any_cached || s->cached;
      s->search.emplace(std::move(space), std::move(*state), params);
    } else {
      std::vector<LaunchConfig> initial = probe_configurations(space, s->start);
      s->search.emplace(std::move(space), std::move(initial), params);
      s->search->set_launch_chunks(span_, params.measurement);
    }
    slots_.push_back(std::move(s));
  }

  const bool race =
      std::any_of(slots_.begin(), slots_.end(), [](const auto& s) { return s->worth_measuring && !s->best_time(); });
  if (race && any_cached) {
    for (auto& s : slots_) s->explored = s->worth_measuring && !s->best_time();  // new to a known (device, query)
  }
  if (!refine_ || !race || any_cached) {
    // Exploit the cached best (vw-greedy); without refinement an unmeasured
    // pool runs the rules' first choice. A variant the cache does not know
    // yet (a race a short first query left unfinished) is measured on the
    // warm query's search chunks, not raced on all of them.
    Slot* best = nullptr;
    for (auto& s : slots_) {
      if (s->best_time() && (!best || *s->best_time() < *best->best_time())) best = s.get();
    }
    current_ = best ? best->variant : slots_.front()->variant;
    current_reason_ = best ? ChoiceReason::cache : ChoiceReason::rule;
    warm_ = best != nullptr;
    const size_t explorable = static_cast<size_t>(std::count_if(slots_.begin(), slots_.end(), [&](const auto& s) {
      return s->worth_measuring && s->variant != *current_;
    }));
    if (refine_ && !race && explorable > 0 && in.tuning.explore_rate > 0) {
      std::mt19937_64 rng(in.seed);
      if (std::uniform_real_distribution<double>(0.0, 1.0)(rng) < in.tuning.explore_rate) {
        size_t other = std::uniform_int_distribution<size_t>(0, explorable - 1)(rng);
        Slot* target = nullptr;
        for (auto& s : slots_) {
          if (s->variant == *current_ || !s->worth_measuring) continue;
          if (other-- == 0) target = s.get();
        }
        if (target) {
          exploring_ = target->variant;
          target->explored = true;
          target->measured_at_explore = target->search->state().measured.size();
          count(engine_counters().tuner_explorations);
        }
      }
    }
  } else {
    current_reason_ = any_cached ? ChoiceReason::explore : ChoiceReason::rule;
  }
  // Only while nothing is measured in joined launches yet: once a variant
  // is, its time ranks it (a key's records can hold both units until each
  // variant is measured again).
  if (remeasured_ && refine_ && !warm_ && fastest_single_variant &&
      std::any_of(slots_.begin(), slots_.end(), [&](const auto& s) { return s->variant == *fastest_single_variant; })) {
    // Warm on the single-chunk times (kRemeasureSearchShare).
    current_ = *fastest_single_variant;
    current_reason_ = ChoiceReason::cache;
    warm_ = true;
    search_share_ = std::max(search_share_, kRemeasureSearchShare);
  }
}

ChunkTuner::~ChunkTuner() = default;
ChunkTuner::ChunkTuner(ChunkTuner&&) noexcept = default;
ChunkTuner& ChunkTuner::operator=(ChunkTuner&&) noexcept = default;

ChunkTuner::Slot& ChunkTuner::slot(Variant v) {
  for (auto& s : slots_) {
    if (s->variant == v) return *s;
  }
  throw Error(SqlState::internal_error, "ChunkTuner: variant outside the pool");
}

const ChunkTuner::Slot& ChunkTuner::slot(Variant v) const { return const_cast<ChunkTuner*>(this)->slot(v); }

ChunkTuner::Slot* ChunkTuner::pick_slot() {
  if (exploring_) {
    Slot& e = slot(*exploring_);
    // One measurement (or, on a converged search, one measurement window of
    // its best configuration) and back to the best variant.
    const bool done = e.search->state().measured.size() > e.measured_at_explore ||
                      (e.search->converged() && e.explore_chunks >= MeasurementParams{}.window);
    if (!done) return &e;
    exploring_.reset();
  }
  if (!current_) {
    for (auto& s : slots_) {
      if (s->worth_measuring && !s->best_time()) return s.get();  // the race: each unmeasured variant's first measurement
    }
    Slot* best = nullptr;
    for (auto& s : slots_) {
      if (s->best_time() && (!best || *s->best_time() < *best->best_time())) best = s.get();
    }
    current_ = best ? best->variant : slots_.front()->variant;
  }
  return &slot(*current_);
}

ChunkTuner::Plan ChunkTuner::plan() {
  Plan p;
  p.slot = pick_slot();
  p.search = refine_;
  if (defer_search_ && current_) {
    p.slot = &slot(*current_);
    p.search = false;
    return p;
  }
  if (warm_ && refine_) {
    // Warm: the cached best, except on a share of chunks drawn at random
    // (no state across queries, expected cost share x the slowdown), which
    // go to a variant not measured yet, else the exploration or the search.
    Slot* target = nullptr;
    for (auto& o : slots_) {
      if (o->worth_measuring && !o->best_time()) {
        target = o.get();
        break;
      }
    }
    if (!target && ((exploring_ && p.slot->variant == *exploring_) || !p.slot->search->converged())) target = p.slot;
    // A measurement of the best variant that an earlier query left
    // unfinished, whose times so far beat the best by more than the plateau
    // similarity s, is finished first, on every chunk until it is: its
    // launches run faster than the best's, so it costs nothing, and a warm
    // query's random share would leave its better configuration unused for
    // many queries.
    if (!target || target == &slot(*current_)) {
      Slot& cur = slot(*current_);
      const SearchState& st = cur.search->state();
      const auto best = cur.best_time();
      if (best && st.measuring && !st.measuring_times.empty() && !cur.search->converged() &&
          st.measuring_times.back() < (1.0 - similarity_s_) * *best &&
          std::accumulate(st.measuring_times.begin(), st.measuring_times.end(), 0.0) /
                  static_cast<double>(st.measuring_times.size()) < (1.0 - similarity_s_) * *best) {
        p.search = true;
        p.slot = &cur;
        return p;
      }
    }
    // A search proposal takes span_ chunks: drawn with share / span_, the
    // expected share of a warm query's chunks spent searching stays the share.
    if (target && !warm_draw_)
      warm_draw_ = std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < search_share_ / static_cast<double>(span_);
    p.search = target && *warm_draw_;
    p.slot = p.search ? target : &slot(*current_);
  }
  return p;
}

bool ChunkTuner::exploits(const Plan& p) const {
  return current_ && p.slot->variant == *current_ && (!refine_ || !p.search || p.slot->search->converged());
}

bool ChunkTuner::awaits_reports() {
  const bool wait = must_await_reports();
  if (!wait || !warm_ || !current_ || screen_outstanding_) return wait;
  defer_search_ = true;
  return false;
}

bool ChunkTuner::must_await_reports() {
  if (continuation_left_ > 0) return false;  // the next chunk joins the open measurement launch
  if (unreported_.empty() || !refine_) return false;
  if (screen_outstanding_) return true;  // its verdict decides whether the raced variant gets whole chunks
  const Plan p = plan();
  if (exploits(p)) return false;
  DamonSearch& search = *p.slot->search;
  const LaunchConfig c = p.search ? search.next_configuration() : search.best();
  const SearchState& st = search.state();
  // Only more chunks of the configuration under measurement may run ahead;
  // any other outstanding proposal's time may change what comes next.
  if (!st.measuring || *st.measuring != c) return true;
  const auto same = static_cast<size_t>(std::count(unreported_.begin(), unreported_.end(), std::make_pair(p.slot->variant, c)));
  if (same < unreported_.size()) return true;
  const size_t reported = st.measuring_times.size();
  // A first chunk far slower than a known best ends its measurement at once
  // (abandon_factor, here and in DamonSearch): a raced variant then costs
  // one chunk, not a window's. A search neighbour of the current variant is
  // abandoned only at abandon_factor (2x), which the grid's neighbours rarely
  // reach, so its second chunk goes out
  // before the first's time is in (kFirstTimeRunAhead).
  const bool may_end_after_first = reported == 0 && (abandon_factor_ > 0 || race_abandon_factor_ > 0) &&
                                   std::any_of(slots_.begin(), slots_.end(), [](const auto& s) { return s->best_time().has_value(); });
  if (may_end_after_first) return same >= (p.slot->best_time() ? kFirstTimeRunAhead : size_t{1});
  return reported + same >= static_cast<size_t>(measure_window_) + kWindowRunAhead;
}

TunedChoice ChunkTuner::next() {
  if (continuation_left_ > 0) {
    // A chunk of the open measurement launch: the same proposal, no report of its own.
    --continuation_left_;
    ++chunks_;
    if (continuation_searching_) ++chunks_searching_;
    exploiting_ = false;
    TunedChoice out = continuation_;
    out.span = 1;
    out.continues = true;
    return out;
  }
  const Plan p = plan();
  warm_draw_.reset();
  defer_search_ = false;
  Slot* s = p.slot;
  const bool search = p.search;
  const LaunchConfig c = search ? s->search->next_configuration() : s->search->best();
  ++chunks_;
  const bool searching = search && !(current_ && s->variant == *current_ && s->search->converged());
  if (searching) ++chunks_searching_;
  exploiting_ = exploits(p);
  TunedChoice out;
  out.variant = s->variant;
  out.config = s->base;
  out.config.launch = c;
  if (race_slice_ > 0 && race_abandon_factor_ > 0 && refine_ && !current_ && search && !screen_outstanding_ &&
      !s->screen_passed && !s->best_time() && s->search->state().measuring_times.empty() &&
      std::none_of(unreported_.begin(), unreported_.end(), [&](const auto& u) { return u.first == s->variant; })) {
    // The race's first look at a variant: a screen on a slice of the chunk
    // against the best measured variant (the reference), which runs the rest.
    const Slot* ref = nullptr;
    for (const auto& o : slots_) {
      if (o.get() != s && o->best_time() && (!ref || *o->best_time() < *ref->best_time())) ref = o.get();
    }
    if (ref && s->screen_share > 0) {
      out.screen_share = s->screen_share;
      out.reference_variant = ref->variant;
      out.reference_config = ref->base;
      out.reference_config.launch = ref->search->best();
      screen_outstanding_ = true;
      // The other raced variants still to be screened join this chunk
      // (kMaxJointScreenShare), each on its own slice.
      // The raced slices' share, and the largest, which the reference's slice matches.
      double share = s->screen_share, largest = s->screen_share;
      for (const auto& o : slots_) {
        if (!joint_screens_) break;
        if (o.get() == s || o.get() == ref || !o->worth_measuring || o->best_time() || o->screen_passed ||
            !(o->screen_share > 0) || share + o->screen_share + std::max(largest, o->screen_share) > kMaxJointScreenShare ||
            1.0 - (share + o->screen_share + std::max(largest, o->screen_share)) <
                kMinJointRestOverReference * std::max(largest, o->screen_share) ||
            !o->search->state().measuring_times.empty() ||
            std::any_of(unreported_.begin(), unreported_.end(), [&](const auto& u) { return u.first == o->variant; }))
          continue;
        TunedChoice::ScreenSlice slice;
        slice.variant = o->variant;
        slice.config = o->base;
        slice.config.launch = o->search->next_configuration();
        slice.share = o->screen_share;
        share += o->screen_share;
        largest = std::max(largest, o->screen_share);
        out.also_screened.push_back(slice);
      }
    }
  }
  if (!exploiting_ && refine_) {
    unreported_.emplace_back(s->variant, c);
    for (const auto& a : out.also_screened) unreported_.emplace_back(a.variant, a.config.launch);
    if (span_ > 1 && out.screen_share == 0) {
      // Timed over one launch of span_ chunks: the next span_ - 1 chunks continue it.
      out.span = span_;
      continuation_left_ = span_ - 1;
      continuation_searching_ = searching;
      continuation_ = out;
    }
  }
  if (exploring_ && s->variant == *exploring_) ++s->explore_chunks;
  pending_ = std::make_pair(s->variant, c);
  return out;
}

void ChunkTuner::report_partial(const TunedChoice& proposed, double seconds_per_row) {
  if (proposed.span <= 1 || proposed.continues) return;
  pending_.reset();
  forget_unreported(proposed.variant, proposed.config.launch);
  if (continuation_left_ > 0 && continuation_.variant == proposed.variant && continuation_.config.launch == proposed.config.launch)
    continuation_left_ = 0;
  const bool fresh = span_ > 1 && std::all_of(slots_.begin(), slots_.end(), [](const auto& o) {
    return o->search->state().measured.empty() && o->search->state().measuring_times.empty();
  });
  if (!fresh) return;
  // Nothing measured in launches of span_ chunks: this key is measured in
  // single chunks from here on (kMeasureChunks), starting with this one.
  span_ = 1;
  measure_window_ = std::max(single_measurement_.window, 1);
  for (auto& o : slots_) o->search->set_launch_chunks(1, single_measurement_, !resident_);
  record(proposed.variant, proposed.config.launch, seconds_per_row);
}

void ChunkTuner::forget_unreported(Variant v, const LaunchConfig& c) {
  const auto it = std::find(unreported_.begin(), unreported_.end(), std::make_pair(v, c));
  if (it != unreported_.end()) unreported_.erase(it);
}

void ChunkTuner::report(const VariantConfig& used, double seconds_per_row) {
  Variant v = current_ ? *current_ : slots_.front()->variant;
  LaunchConfig c = used.launch;
  if (pending_) {
    v = pending_->first;
    c = pending_->second;
    pending_.reset();
  }
  forget_unreported(v, c);
  record(v, c, seconds_per_row);
}

void ChunkTuner::report(const TunedChoice& proposed, double seconds_per_row) {
  if (proposed.continues) return;  // timed with the proposal it continues
  if (proposed.span > 1 && proposed.span != span_) {
    // Proposed in launches of another size before the query switched to
    // single chunks (report_partial): not in the search's unit.
    pending_.reset();
    forget_unreported(proposed.variant, proposed.config.launch);
    return;
  }
  if (proposed.screen_share > 0) {
    // A caller that ran the screen on a whole chunk (too small to slice):
    // the screen is over and the variant is measured on whole launches.
    screen_outstanding_ = false;
    slot(proposed.variant).screen_passed = true;
    for (const auto& a : proposed.also_screened) {  // not run: measured on whole launches too
      slot(a.variant).screen_passed = true;
      forget_unreported(a.variant, a.config.launch);
    }
    if (span_ > 1) {  // one chunk: not a time in the search's unit
      pending_.reset();
      forget_unreported(proposed.variant, proposed.config.launch);
      return;
    }
  }
  pending_.reset();
  forget_unreported(proposed.variant, proposed.config.launch);
  record(proposed.variant, proposed.config.launch, seconds_per_row);
}

void ChunkTuner::record(Variant v, const LaunchConfig& c, double seconds_per_row) {
  if (!refine_ || !(seconds_per_row > 0) || !std::isfinite(seconds_per_row)) return;
  Slot& s = slot(v);
  const size_t before = s.search->state().measured.size();
  s.search->report(c, seconds_per_row);
  s.touched = true;
  if ((!current_ || (warm_ && v != *current_)) && !s.best_time()) {
    // Racing: a variant already abandon_factor x slower than a raced one on
    // its first chunk(s) is not worth a full measurement window.
    for (const auto& o : slots_) {
      if (o.get() != &s && o->best_time() && race_abandon_factor_ > 0 &&
          seconds_per_row > race_abandon_factor_ * *o->best_time()) {
        s.search->abandon_measurement();
        break;
      }
    }
  }
  if (s.search->state().measured.size() > before) {
    count(engine_counters().tuner_measurements);
    // Chunks of it still running (kWindowRunAhead) cannot change what comes
    // next (their times are dropped): the next proposal need not wait for
    // them, and they keep the GPU busy while it is enqueued.
    unreported_.erase(std::remove(unreported_.begin(), unreported_.end(), std::make_pair(v, c)), unreported_.end());
  }
  // Warm: a variant measured on search chunks that beats the cached best
  // takes over (vw-greedy).
  if (warm_ && current_ && v != *current_ && s.best_time() && slot(*current_).best_time() &&
      *s.best_time() < *slot(*current_).best_time()) {
    current_ = v;
  }
}

Variant ChunkTuner::current_variant() const {
  if (current_) return *current_;
  return slots_.front()->variant;
}

bool ChunkTuner::converged() const {
  return current_ && !exploring_ && slot(*current_).search->converged();
}

std::string ChunkTuner::explain() const {
  const Slot& s = slot(current_variant());
  const SearchState& st = s.search->state();
  // cache: the entry existed before this query; explored: measured as
  // vw-greedy exploration; rule: a cold start searched from the rules.
  const std::string source = (current_reason_ == ChoiceReason::cache || s.cached) ? "cache" : s.explored ? "explored" : "rule";
  std::string out = fmt::format("Tuning: estimate {} groups (bucket 2^{}), variant={} ({}), config={}", estimated_groups_,
                                bucket_, variant_name(s.variant), source, to_string(s.search->best()));
  if (const auto t = s.best_time()) out += " at " + ns_per_row(*t);
  int better = 0, plateau = 0, worse = 0;
  for (const auto& step : st.path) {
    better += step.event == StepEvent::better;
    plateau += step.event == StepEvent::plateau;
    worse += step.event == StepEvent::worse;
  }
  out += fmt::format("; search {} after {} configurations ({} better, {} plateau, {} worse) from {}",
                     st.converged ? "converged" : "running", st.measured.size(), better, plateau, worse, to_string(s.start));
  out += fmt::format("; {} of {} chunks searching", chunks_searching_, chunks_);
  if (span_ > 1) out += fmt::format(" (measured on launches of {} chunks)", span_);
  if (remeasured_) out += "; the cached single-chunk times of a query that copied its chunks set aside";
  std::string others;
  for (const auto& o : slots_) {
    if (o->variant == s.variant || !o->best_time()) continue;
    others += fmt::format("{}{} {}{}", others.empty() ? "" : ", ", variant_name(o->variant), ns_per_row(*o->best_time()),
                          o->touched ? (o->screened ? fmt::format(" screened out on a slice ({:.1f}% of a chunk)", 100 * o->screen_share)
                                                    : o->explored ? " explored" : " raced")
                                     : "");
  }
  if (!others.empty()) out += "; other variants: " + others;
  return out;
}

std::vector<tally::TuningRecord> ChunkTuner::records() const {
  std::vector<tally::TuningRecord> out;
  for (const auto& s : slots_) {
    if (!s->touched) continue;
    const SearchState& st = s->search->state();
    // A variant whose first measurement is still open (a short cold query:
    // fewer chunks than a window) is recorded too, as "measuring" with the median of its times
    // so far: the next query continues that measurement (usable_state)
    // instead of starting cold again, and a restart keeps it.
    const auto choice = recorded_choice(st);
    if (!choice) continue;
    const bool open = choice->open;
    tally::TuningRecord r;
    r.device = fingerprint_;
    r.signature = signature_;
    r.variant = std::string(variant_name(s->variant));
    r.bucket = bucket_;
    r.best_config = to_string(choice->config);
    r.seconds_per_row = choice->seconds_per_row;
    r.observations = s->observations + 1;
    r.search_state = to_json(st).dump();
    remember_parsed(r.search_state, st);  // the next query on this key reads it without parsing
    r.source = open ? "measuring" : s->explored ? "explored" : (*st.best == s->start ? "rule" : "search");
    out.push_back(std::move(r));
  }
  return out;
}


}  // namespace tally::gpu
