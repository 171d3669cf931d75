#include "gpu/tuner_bridge.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numeric>
#include <unordered_map>
#include <fmt/format.h>

#include "common/engine_counters.hpp"
#include "common/error.hpp"
#include "gpu/tuner/cardinality_bucket.hpp"
#include "gpu/tuner/query_tuner.hpp"
#include "gpu/tuner/search_state_json.hpp"

namespace tally::gpu {

DeviceProperties to_device_properties(const DeviceInfo& d) {
  DeviceProperties p;
  p.name = d.name;
  p.compute_major = d.compute_major;
  p.compute_minor = d.compute_minor;
  p.sm_count = d.sm_count;
  p.warp_size = d.warp_size;
  p.max_threads_per_block = d.max_threads_per_block;
  p.max_threads_per_sm = d.max_threads_per_sm;
  p.max_blocks_per_sm = d.max_blocks_per_sm;
  p.shared_memory_per_block = static_cast<int64_t>(d.shared_memory_per_block_optin);
  p.shared_memory_per_sm = static_cast<int64_t>(d.shared_memory_per_sm);
  p.l2_cache_bytes = static_cast<int64_t>(d.l2_bytes);
  p.global_memory_bytes = static_cast<int64_t>(d.total_memory);
  p.driver_version = d.driver_version;
  return p;
}

std::string device_fingerprint(const DeviceInfo& d) { return to_device_properties(d).fingerprint(); }

namespace {

std::string_view width_name(executor::ColumnWidth w) {
  switch (w) {
    case executor::ColumnWidth::int32: return "int4";
    case executor::ColumnWidth::int64: return "int8";
    case executor::ColumnWidth::float32: return "float4";
    case executor::ColumnWidth::float64: return "float8";
  }
  return "?";
}

std::string_view op_name(executor::PartialOp op) {
  using executor::PartialOp;
  switch (op) {
    case PartialOp::count_rows: return "count_rows";
    case PartialOp::count_valid: return "count_valid";
    case PartialOp::sum_int: return "sum_int";
    case PartialOp::sum_float: return "sum_float";
    case PartialOp::min_int: return "min_int";
    case PartialOp::max_int: return "max_int";
    case PartialOp::min_float: return "min_float";
    case PartialOp::max_float: return "max_float";
    case PartialOp::moments_int: return "moments_int";
    case PartialOp::moments_float: return "moments_float";
    case PartialOp::moments2_float: return "moments2_float";
  }
  return "?";
}

std::string ns_per_row(double seconds_per_row) { return fmt::format("{:.3f} ns/row", seconds_per_row * 1e9); }

}  // namespace

std::string tuning_signature(const executor::AggregationSpec& spec) {
  std::vector<std::string> aggs;
  for (const auto& a : spec.aggregates) {
    std::string s(op_name(a.op));
    if (a.input >= 0) s += "(" + std::to_string(a.input) + (a.input2 >= 0 ? "," + std::to_string(a.input2) : "") + ")";
    aggs.push_back(std::move(s));
  }
  std::sort(aggs.begin(), aggs.end());
  std::string out = "key=" + std::string(width_name(spec.key_width)) + ";values=";
  for (size_t i = 0; i < spec.value_widths.size(); ++i) out += (i ? "," : "") + std::string(width_name(spec.value_widths[i]));
  out += ";aggs=";
  for (size_t i = 0; i < aggs.size(); ++i) out += (i ? "," : "") + aggs[i];
  return out;
}

namespace {
std::optional<executor::ColumnWidth> parse_width(std::string_view name) {
  for (auto w : {executor::ColumnWidth::int32, executor::ColumnWidth::int64, executor::ColumnWidth::float32,
                 executor::ColumnWidth::float64})
    if (width_name(w) == name) return w;
  return std::nullopt;
}
std::optional<executor::PartialOp> parse_op(std::string_view name) {
  using executor::PartialOp;
  for (auto op : {PartialOp::count_rows, PartialOp::count_valid, PartialOp::sum_int, PartialOp::sum_float, PartialOp::min_int,
                  PartialOp::max_int, PartialOp::min_float, PartialOp::max_float, PartialOp::moments_int,
                  PartialOp::moments_float, PartialOp::moments2_float})
    if (op_name(op) == name) return op;
  return std::nullopt;
}
// Splits on `sep`; an empty text gives no parts.
std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const size_t at = text.find(sep);
    out.push_back(text.substr(0, at));
    if (at == std::string_view::npos) break;
    text.remove_prefix(at + 1);
  }
  return out;
}
std::optional<int> parse_index(std::string_view text) {
  if (text.empty() || text.size() > 4) return std::nullopt;
  int v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}
}  // namespace

std::optional<SignatureShape> parse_tuning_signature(std::string_view signature) {
  const auto parts = split(signature, ';');
  if (parts.size() != 3 || !parts[0].starts_with("key=") || !parts[1].starts_with("values=") ||
      !parts[2].starts_with("aggs="))
    return std::nullopt;
  SignatureShape out;
  const auto key = parse_width(parts[0].substr(4));
  if (!key) return std::nullopt;
  out.key_width = *key;
  for (std::string_view v : split(parts[1].substr(7), ',')) {
    const auto w = parse_width(v);
    if (!w) return std::nullopt;
    out.value_widths.push_back(*w);
  }
  // Aggregates: name or name(i) or name(i,j); the commas inside parentheses
  // are not separators.
  std::string_view aggs = parts[2].substr(5);
  while (!aggs.empty()) {
    size_t end = 0;
    int depth = 0;
    while (end < aggs.size() && (aggs[end] != ',' || depth > 0)) {
      depth += aggs[end] == '(' ? 1 : aggs[end] == ')' ? -1 : 0;
      ++end;
    }
    std::string_view item = aggs.substr(0, end);
    aggs.remove_prefix(std::min(end + 1, aggs.size()));
    executor::PartialAggregate a;
    const size_t open = item.find('(');
    const auto op = parse_op(item.substr(0, open));
    if (!op) return std::nullopt;
    a.op = *op;
    if (open != std::string_view::npos) {
      if (!item.ends_with(")")) return std::nullopt;
      const auto args = split(item.substr(open + 1, item.size() - open - 2), ',');
      if (args.empty() || args.size() > 2) return std::nullopt;
      const auto first = parse_index(args[0]);
      if (!first || *first >= static_cast<int>(out.value_widths.size())) return std::nullopt;
      a.input = *first;
      if (args.size() == 2) {
        const auto second = parse_index(args[1]);
        if (!second || *second >= static_cast<int>(out.value_widths.size())) return std::nullopt;
        a.input2 = *second;
      }
    }
    out.aggregates.push_back(a);
  }
  if (out.aggregates.empty()) return std::nullopt;
  return out;
}

std::vector<executor::TuningRecord> load_tuning_records(executor::TuningStore* store, const std::string& device,
                                                        const std::string& signature, int bucket) {
  if (!store) return {};
  try {
    return store->load(device, signature, bucket);
  } catch (const std::exception&) {
    // An unreadable cache must not fail the query: it runs from the rules.
    return {};
  }
}

// One usable variant: its grid, its rule start, and its search (continued
// from the cache when the cache has one).
struct ChunkTuner::Slot {
  Variant variant = Variant::global_hash;
  std::string name;
  VariantConfig base;        // gpu/'s default for the parameters the tuner does not search
  LaunchConfig start;        // the cold-start rule's configuration, on the grid
  std::optional<DamonSearch> search;
  bool cached = false;       // the cache had a measured entry
  int64_t observations = 0;  // as loaded
  bool explored = false;     // measured as exploration (vw-greedy) or raced beside a known variant
  bool touched = false;      // measured in this query
  bool worth_measuring = true;  // raced on a cold cache and explored by vw-greedy (worth_measuring())
  size_t measured_at_explore = 0;
  long explore_chunks = 0;
  bool screen_passed = false;  // its race screen did not end it: measured on whole chunks
  bool screened = false;       // left the race on its screen
  double screen_share = 0;     // the share of a chunk its race screen runs on (ChunkTuner::screen_share_for)

  std::optional<double> best_time() const { return search->best_seconds_per_row(); }
};

namespace {

// Whether a variant can win for this estimate, so that a cold query races it
// and vw-greedy explores it. The shared-memory hash whose per-block table
// cannot hold the estimated groups (even at twice the estimate's error
// budget) sends every row past its capacity on to the global table: global
// hash's work plus its own, so it cannot beat global hash and a race chunk of
// it is pure loss (H100, 2^16 groups: 0.22 ns/row against partitioned's 0.021,
// 3.6 ms of a 15 ms query; bench/tuner/RESULTS.md, session 5). It stays in
// the pool: a query that forces it, or a cache that knows it, still runs it.
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
// paid by the first query: on the H100 at 2^16 groups global ran a full
// window (4 chunks) at 1.76x partitioned, ~1 ms of a ~6 ms cold query,
// once awaits_reports() made the cold query race at all (bench/tuner/RESULTS.md,
// session 6, 20:45). The risk: a variant whose rule configuration is 1.5-2x
// slower than the leader's but whose optimum is faster. In the recorded H100
// spaces, with each variant's median configuration standing in for its rule
// one, 8 (G, pair) cases are lost at 1.5 and not at 2 (optimum 1.02-1.35x
// better, once 2.5x: shared vs sort at 2^10, where shared is raced first);
// rule configurations sit closer to each variant's optimum than the median,
// and warm queries still explore an abandoned variant (vw-greedy), so such a
// loss does not last.
constexpr double kRaceAbandonFactor = 1.5;

// Chunks a measurement runs ahead of the times it waits for. A chunk
// proposed after a wait starts on an idle GPU and is timed with the host's
// enqueue of its launches (~85 us of a ~300 us chunk in a cold query on the
// H100 at 2^16 groups), so a window holding one is ~25% uneven and
// DaMoN'19's v_max (1.9%) rejects it: the session-8 cold queries measured
// windows of 5-6 chunks, 1-2 configurations in 16 chunks
// (bench/tuner/RESULTS.md, session 8). Each configuration's first chunk
// follows a wait whatever we do (the search is sequential), so its window
// most likely needs one chunk more: kWindowRunAhead sends it with the
// others; and a search neighbour's second chunk is enqueued before its first
// time is in (kFirstTimeRunAhead), so that it does not start on an idle GPU
// as well. A chunk beyond what a stable window needed is still the measured
// configuration's (its time is dropped), a near neighbour of the best.
constexpr size_t kWindowRunAhead = 1;
constexpr size_t kFirstTimeRunAhead = 2;

// Search states by their JSON text. A query's records() puts the states it
// serialized here, so the next query on the same key (the records the engine
// keeps in memory) copies the state instead of parsing the JSON, which was
// most of the tuner's set-up (~0.1 ms per query on the H100 host).
// Bounded: the whole memo is dropped when it reaches kParsedStateMemo entries.
constexpr size_t kParsedStateMemo = 256;
struct ParsedStates {
  std::mutex mutex;
  std::unordered_map<std::string, SearchState> by_text;
};
ParsedStates& parsed_states() {
  static ParsedStates* memo = new ParsedStates;  // never destroyed: used until exit
  return *memo;
}
void remember_parsed(const std::string& text, const SearchState& state) {
  ParsedStates& m = parsed_states();
  std::lock_guard lock(m.mutex);
  if (m.by_text.size() >= kParsedStateMemo) m.by_text.clear();
  m.by_text.insert_or_assign(text, state);
}
std::optional<SearchState> parse_state(const std::string& text) {
  {
    ParsedStates& m = parsed_states();
    std::lock_guard lock(m.mutex);
    const auto it = m.by_text.find(text);
    if (it != m.by_text.end()) return it->second;
  }
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto state = search_state_from_json(json);
  if (state) remember_parsed(text, *state);
  return state;
}

// The state loaded from a record, or nullopt when it is unreadable or was
// measured on another grid (another version's search space): then the search
// starts afresh rather than walking off the grid.
std::optional<SearchState> usable_state(const executor::TuningRecord& r, const SearchSpace& space) {
  auto state = parse_state(r.search_state);
  // No best yet: usable while it has initial configurations left or a
  // measurement open (a short query's, ChunkTuner::records) in this grid.
  if (!state || (!state->best && state->pending_initial.empty() && !state->measuring)) return std::nullopt;
  if (state->measuring && !space.contains(*state->measuring)) return std::nullopt;
  for (const auto& [c, t] : state->measured) {
    if (!space.contains(c) || !(t > 0)) return std::nullopt;
  }
  if (state->best && !state->measured.count(*state->best)) return std::nullopt;
  for (const auto& c : state->queue) {
    if (!state->measured.count(c)) return std::nullopt;
  }
  return state;
}

}  // namespace

void preparse_search_states(const std::vector<executor::TuningRecord>& records) {
  for (const auto& r : records)
    if (!r.search_state.empty()) (void)parse_state(r.search_state);
}

namespace {

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

ChunkTuner::ChunkTuner(const ChunkTunerInput& in)
    : fingerprint_(device_fingerprint(in.device)),
      signature_(in.signature),
      bucket_(cardinality_bucket(static_cast<double>(in.facts.estimated_groups))),
      estimated_groups_(in.facts.estimated_groups),
      refine_(in.tuning.enabled),
      search_share_(std::clamp(in.tuning.warm_search_share, 0.0, 1.0)),
      rng_(in.seed ^ 0x5eed5eedULL) {
  const DeviceProperties props = to_device_properties(in.device);
  // The working pool, most preferred first: gpu/'s rule choice, then the
  // tuner's rule order, then any other variant can_use allows.
  std::vector<Variant> pool;
  const auto add = [&](Variant v) {
    if (std::find(pool.begin(), pool.end(), v) == pool.end() && can_use(v, in.spec, in.device, in.facts)) pool.push_back(v);
  };
  if (!in.forced_variant.empty()) {
    const auto v = parse_variant(in.forced_variant);
    if (!v) throw Error(SqlState::invalid_parameter_value, "GPU: unknown aggregation variant \"" + in.forced_variant + "\"");
    pool.push_back(*v);  // the caller forced it: run it even where the rules would not
  } else {
    add(choose_variant(in.spec, in.device, in.facts));
    const bool dense = can_use(Variant::dense, in.spec, in.device, in.facts);
    for (const auto& name : rule_variant_order(props, shape_of(in.spec, in.facts, dense))) {
      if (const auto v = parse_variant(name)) add(*v);
    }
    for (Variant v : kAllVariants) add(v);
  }
  if (pool.empty()) throw Error(SqlState::feature_not_supported, "GPU: no aggregation variant can run this query");

  const AggregationShape shape = shape_of(in.spec, in.facts, can_use(Variant::dense, in.spec, in.device, in.facts));
  // The unit of this key's times: a cached search continues in the one it
  // was measured in (a cache written before pairs, or by a query that could
  // not join its chunks, stays in single chunks); a fresh one takes the input's.
  span_ = std::max(in.measure_chunks, 1);
  for (const auto& r : in.records) {
    if (r.device != fingerprint_ || r.search_state.empty()) continue;
    if (const auto st = parse_state(r.search_state); st && (!st->measured.empty() || !st->measuring_times.empty())) {
      span_ = st->launch_chunks;
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
  bool any_cached = false;
  for (Variant v : pool) {
    auto s = std::make_unique<Slot>();
    s->variant = v;
    s->name = std::string(variant_name(v));
    s->base = default_launch_config(v, in.spec, in.device, in.facts);
    s->worth_measuring = !in.forced_variant.empty() || worth_measuring(v, in.spec, in.device, in.facts);
    s->screen_share = screen_share_for(rules_prior_slowdown(props, shape, s->name), in.facts.rows, in.device);
    const SearchSpace grid = default_search_space(props, s->name);
    SearchSpace space(grid.axes(), s->base.launch);
    // The search starts from gpu/'s own rule configuration
    // (default_launch_config), computed from the device's limits.
    s->start = space.snap(s->base.launch);
    for (int d = 0; d < kConfigDimensionCount; ++d) {  // dimensions off the grid keep gpu/'s defaults
      const auto dim = static_cast<ConfigDimension>(d);
      if (std::none_of(space.axes().begin(), space.axes().end(), [dim](const GridAxis& a) { return a.dimension == dim; }))
        s->start.set(dim, space.base().get(dim));
    }
    std::optional<SearchState> state;
    for (const auto& r : in.records) {
      if (r.variant != s->name || r.device != fingerprint_) continue;  // never another GPU's entry
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
    // many queries (recorded H100 spaces at 2^10 groups, 16-chunk queries:
    // the cold query's last pair measured dense 0.0068 ns/row against the
    // best's 0.0101, runs 2-5 ran 0.0101, 1.17-1.86x the best fixed choice).
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
  // reach (H100, 2^16 groups: 0.4-14% apart), so its second chunk goes out
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

// Why a slice is enough, and why its bias is acceptable. A launch costs a
// fixed part (set-up, the partitioned variant's partition pass, the tail of
// the grid: ~30 us on the H100 at 2^16 groups) plus a part per row, and on a
// quarter chunk the fixed part weighs four times what it does on a whole
// one. The reference runs a slice of the same size in the same chunk, and
// its rest gives its time per row, so its fixed part f is measured here, not
// assumed: f = t_ref_slice - rows_slice * (t_rest - t_ref_slice) / (rows_rest
// - rows_slice). The verdict compares the two slices less f, i.e. the raced
// variant's kernel on the slice as if its fixed part were the reference's.
// A variant with a smaller fixed part (global hash, no partition pass) then
// looks no worse than it is; one with a larger fixed part looks worse by
// (its f - the reference's f) / rows_slice per row. It is wrongly dropped
// only if that excess exceeds (abandon - its true ratio) x the reference's
// kernel time on the slice, i.e. for a variant that would win on whole chunks
// (ratio < 1), a fixed part more than half (abandon 1.5) of the reference's
// slice kernel (~75 us at 2^16 groups) above the reference's own: a variant
// paying that much per launch loses most of its gain on every chunk anyway,
// and warm queries still explore a screened-out variant (vw-greedy). A
// variant that passes is measured on whole chunks as before, so the screen
// can only shorten the race, never change what a finished race measured.
// Since session 9 every raced variant still to be screened shares the
// chunk (kMaxJointScreenShare): one chunk, one wait, a launch per raced
// variant and two, where separate screens took three launches and a wait
// each. Without the reference's slice its measured best (a launch of span_
// chunks) and the rest give the same two unknowns, but not on a slice's
// scale: on the H100 at 2^16 groups a pair runs cheaper per row than the
// line through a 0.7-chunk rest predicts, the fixed part came out high and
// global's ratio 1.5-1.6 (twice passed to whole launches at 0.033 ns/row)
// where the slice form measured 1.8, so the engine runs the slice.
void ChunkTuner::report_screen(const TunedChoice& proposed, const ScreenTimes& t) {
  screen_outstanding_ = false;
  pending_.reset();
  forget_unreported(proposed.variant, proposed.config.launch);
  for (const auto& a : proposed.also_screened) forget_unreported(a.variant, a.config.launch);
  if (!refine_) return;
  const Slot& ref = slot(proposed.reference_variant);
  const auto ref_best = ref.best_time();
  const auto no_verdict = [&] {  // measure them on whole chunks
    slot(proposed.variant).screen_passed = true;
    for (const auto& a : proposed.also_screened) slot(a.variant).screen_passed = true;
  };
  if (!ref_best || !(t.rest_ms > 0) || !std::isfinite(t.rest_ms)) return no_verdict();
  double raced_min = t.raced_ms > 0 ? t.raced_ms : t.rest_ms;
  for (const auto& a : t.also)
    if (a.ms > 0) raced_min = std::min(raced_min, a.ms);
  double fixed = 0, per_row = 0;  // the reference's fixed launch part (ms) and kernel (ms per row)
  if (t.reference_ms > 0) {
    // A reference slice beside the raced ones: its fixed part from slice vs rest.
    const int64_t ref_rows = t.reference_rows > 0 ? t.reference_rows : t.slice_rows;
    if (t.rest_rows > ref_rows && t.rest_ms > t.reference_ms) {
      per_row = (t.rest_ms - t.reference_ms) / static_cast<double>(t.rest_rows - ref_rows);
      fixed = std::clamp(t.reference_ms - per_row * static_cast<double>(ref_rows), 0.0,
                         0.9 * std::min(t.reference_ms, raced_min));
    }
    if (ref_rows > 0) per_row = (t.reference_ms - fixed) / static_cast<double>(ref_rows);
  } else {
    // No reference slice: its measured best is one launch of span_ chunks
    // (rows_m rows, time T = best x rows_m), the rest one launch of rest_rows;
    // both pay the same fixed part f, so per row (T - rest) / (rows_m -
    // rest_rows) and f = rest - per_row x rest_rows. rows_m - rest_rows is
    // at least a quarter chunk (kMaxJointScreenShare): a 2% error in T moves
    // per_row ~4%, but launches of 2 chunks and of a slice do not lie on one
    // line (see above), which biases the verdict low.
    const double rows_m = static_cast<double>(span_) * static_cast<double>(chunk_rows_);
    const double measured_ms = *ref_best * rows_m * 1e3;
    const double rest_rows = static_cast<double>(t.rest_rows);
    if (rows_m > rest_rows && measured_ms > t.rest_ms) {
      per_row = (measured_ms - t.rest_ms) / (rows_m - rest_rows);
      fixed = std::clamp(t.rest_ms - per_row * rest_rows, 0.0, 0.9 * std::min(t.rest_ms, raced_min));
      per_row = rest_rows > 0 ? (t.rest_ms - fixed) / rest_rows : per_row;
    } else {
      per_row = *ref_best * 1e3;  // no fixed part separable: the measured per-row time
    }
  }
  if (!(per_row > 0) || !std::isfinite(per_row)) return no_verdict();
  // A raced slice faster than the reference's (ratio m < 1) is the bar the
  // screen's other slices are judged by: each is m times the reference's
  // per-row time away from it. Judged against the reference alone, a variant
  // between the two passed to whole launches though the faster one would
  // then be the best (recorded H100 spaces at 2^26 groups: sort 1.35x
  // partitioned passed beside global 0.89x, and ran a pair at 1.51x global;
  // one screen at a time judged it against global and dropped it).
  const auto slice_ratio = [&](double ms, int64_t rows) {
    return ms > 0 && std::isfinite(ms) && rows > 0 ? (ms - fixed) / (per_row * static_cast<double>(rows)) : INFINITY;
  };
  double bar = std::min(1.0, slice_ratio(t.raced_ms, t.slice_rows));
  for (size_t i = 0; i < proposed.also_screened.size() && i < t.also.size(); ++i)
    bar = std::min(bar, slice_ratio(t.also[i].ms, t.also[i].rows));
  bar = std::max(bar, 1e-3);  // a slice of no time: no bar from it
  const auto judge = [&](Variant v, const LaunchConfig& c, double share, double ms, int64_t rows) {
    const double own = slice_ratio(ms, rows);
    const double by = own > bar ? bar : 1.0;  // the fastest slice is judged against the reference
    judge_screen(v, c, share, ms, rows, fixed, per_row * by, *ref_best * by);
  };
  judge(proposed.variant, proposed.config.launch, proposed.screen_share, t.raced_ms, t.slice_rows);
  for (size_t i = 0; i < proposed.also_screened.size(); ++i) {
    const auto& a = proposed.also_screened[i];
    if (i < t.also.size()) judge(a.variant, a.config.launch, a.share, t.also[i].ms, t.also[i].rows);
    else slot(a.variant).screen_passed = true;  // its slice did not run: whole chunks
  }
}

double ChunkTuner::judge_screen(Variant v, const LaunchConfig& c, double share, double raced_ms, int64_t rows,
                                double fixed_ms, double ref_ms_per_row, double ref_best) {
  Slot& s = slot(v);
  if (!(raced_ms > 0) || !std::isfinite(raced_ms) || rows <= 0) {
    s.screen_passed = true;  // no verdict: measure it on whole chunks
    return 0;
  }
  const double ratio = (raced_ms - fixed_ms) / (ref_ms_per_row * static_cast<double>(rows));
  last_screen_ratio_ = ratio;
  if (ratio > screen_abandon_factor(share)) {
    // Its time, for the records and explain(): the reference's per-row time
    // scaled by the slices' ratio (an estimate: what a whole chunk would show).
    s.search->report(c, ratio * ref_best);
    s.search->abandon_measurement();
    s.touched = true;
    s.screened = true;
    count(engine_counters().tuner_measurements);
  } else if (share < race_slice_ && ratio > 1) {
    // Slower than the reference but within the small slice's tolerance for
    // a larger fixed part: undecided, so it gets the full slice's screen
    // next (a variant 1.5-3x off costs a small screen more than without the
    // prior, one far off a quarter of its screen). A small slice only drops
    // or clears a faster variant: its pass for one up to 1.5x slower rested
    // on a fixed part that is most of a slice of ~50 K rows per SM, and in
    // the replay of the recorded H100 spaces (sort vs partitioned at 2^16,
    // 1.7x) it passed a loser to whole launches.
    s.screen_share = race_slice_;
  } else {
    s.screen_passed = true;
  }
  return ratio;
}

// A winner (true ratio <= 1) whose fixed launch part exceeds the
// reference's by x is dropped when x > (abandon - 1) * the reference's slice
// kernel time, and that kernel time shrinks with the slice: a slice k times
// smaller than race_slice_ gets (abandon - 1) * k + 1, the same tolerance in
// microseconds (~37 us at 2^16 groups on the H100) as the full slice.
double ChunkTuner::screen_share_for(double prior, uint64_t chunk_rows, const DeviceInfo& d) const {
  if (!(race_slice_ > 0) || !(prior > 1) || !(race_abandon_factor_ > 1) || chunk_rows == 0) return race_slice_;
  // screen_abandon_factor(share) = 1 + (r - 1) / margin.
  const double excess = (prior - 1) / kScreenPriorMargin;
  const double share = (race_abandon_factor_ - 1) * race_slice_ / excess;
  const double resident_threads = static_cast<double>(std::max(d.sm_count, 1)) * std::max(d.max_threads_per_sm, 1);
  const double floor = resident_threads / static_cast<double>(chunk_rows);
  return std::min(race_slice_, std::max(share, floor));
}

double ChunkTuner::screen_abandon_factor(double share) const {
  if (!(share > 0) || !(race_slice_ > 0) || share >= race_slice_) return race_abandon_factor_;
  return 1.0 + (race_abandon_factor_ - 1.0) * (race_slice_ / share);
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
  for (auto& o : slots_) o->search->set_launch_chunks(1, single_measurement_);
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
                                bucket_, s.name, source, to_string(s.search->best()));
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
  std::string others;
  for (const auto& o : slots_) {
    if (o->variant == s.variant || !o->best_time()) continue;
    others += fmt::format("{}{} {}{}", others.empty() ? "" : ", ", o->name, ns_per_row(*o->best_time()),
                          o->touched ? (o->screened ? fmt::format(" screened out on a slice ({:.1f}% of a chunk)", 100 * o->screen_share)
                                                    : o->explored ? " explored" : " raced")
                                     : "");
  }
  if (!others.empty()) out += "; other variants: " + others;
  return out;
}

std::vector<executor::TuningRecord> ChunkTuner::records() const {
  std::vector<executor::TuningRecord> out;
  for (const auto& s : slots_) {
    if (!s->touched) continue;
    const SearchState& st = s->search->state();
    // A variant whose first measurement is still open (a short cold query:
    // fewer chunks than a window, H100 session 9: 7 of 8 six-chunk cold
    // queries) is recorded too, as "measuring" with the median of its times
    // so far: the next query continues that measurement (usable_state)
    // instead of starting cold again, and a restart keeps it.
    const auto choice = recorded_choice(st);
    if (!choice) continue;
    const bool open = choice->open;
    executor::TuningRecord r;
    r.device = fingerprint_;
    r.signature = signature_;
    r.variant = s->name;
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
