#include "gpu/tuner/damon_search.hpp"

#include <algorithm>

namespace tally::gpu {

namespace {
// Weight of one chunk in the running time of a converged search's best
// configuration: about the last eight chunks count.
constexpr double kConvergedSmoothing = 1.0 / 8.0;
}  // namespace

SearchParams SearchParams::from_config(const config::TuningConfig& tuning) {
  SearchParams p;
  p.similarity_s = tuning.similarity_s;
  p.pruning_p = tuning.pruning_p;
  p.measurement.v_max = tuning.v_max;
  p.measurement.b_max = tuning.b_max;
  return p;
}

std::string_view step_event_name(StepEvent event) {
  switch (event) {
    case StepEvent::initial: return "initial";
    case StepEvent::plateau: return "plateau";
    case StepEvent::better: return "better";
    case StepEvent::worse: return "worse";
  }
  return "?";
}

DamonSearch::DamonSearch(SearchSpace space, std::vector<LaunchConfig> initial, SearchParams params)
    : space_(std::move(space)), params_(params), measurement_(params.measurement) {
  for (const auto& c : initial) {
    const LaunchConfig snapped = space_.snap(c);
    if (std::find(state_.pending_initial.begin(), state_.pending_initial.end(), snapped) == state_.pending_initial.end()) {
      state_.pending_initial.push_back(snapped);
    }
  }
  if (state_.pending_initial.empty()) state_.pending_initial.push_back(space_.base());
  advance();
}

DamonSearch::DamonSearch(SearchSpace space, SearchState state, SearchParams params)
    : space_(std::move(space)), params_(params), state_(std::move(state)), measurement_(params.measurement) {
  if (!state_.converged) advance();
}

void DamonSearch::start_measuring(const LaunchConfig& config, std::optional<LaunchConfig> reference) {
  state_.measuring = config;
  state_.measuring_reference = reference;
  state_.measuring_times.clear();
  measurement_ = Measurement(params_.measurement);
}

bool DamonSearch::similar(double a, double b) const {
  // s = 0 means "ignore plateaus" (the paper's strict baseline), even for equal times.
  if (params_.similarity_s <= 0) return false;
  return (1.0 - params_.similarity_s) * a <= b && b <= (1.0 + params_.similarity_s) * a;
}

bool DamonSearch::may_form_plateau(const LaunchConfig& from, const LaunchConfig& to) const {
  for (int d = 0; d < kConfigDimensionCount; ++d) {
    const auto dim = static_cast<ConfigDimension>(d);
    if (from.get(dim) == to.get(dim)) continue;
    if (std::find(params_.plateau_dimensions.begin(), params_.plateau_dimensions.end(), dim) ==
        params_.plateau_dimensions.end()) {
      return false;
    }
  }
  return true;
}

std::optional<RecordedChoice> recorded_choice(const SearchState& state) {
  if (state.best) return RecordedChoice{*state.best, state.measured.at(*state.best), false};
  if (!state.measuring || state.measuring_times.empty()) return std::nullopt;
  std::vector<double> times = state.measuring_times;
  std::sort(times.begin(), times.end());
  return RecordedChoice{*state.measuring, times[times.size() / 2], true};
}

LaunchConfig DamonSearch::best() const {
  if (state_.best) return *state_.best;
  if (state_.measuring) return *state_.measuring;
  return state_.pending_initial.empty() ? space_.base() : state_.pending_initial.front();
}

std::optional<double> DamonSearch::best_seconds_per_row() const {
  if (!state_.best) return std::nullopt;
  return state_.measured.at(*state_.best);
}

LaunchConfig DamonSearch::next_configuration() {
  if (state_.measuring) return *state_.measuring;
  return best();
}

void DamonSearch::report(const LaunchConfig& config, double seconds_per_row) {
  ++state_.chunks;
  if (state_.converged && state_.best && config == *state_.best) {
    // Keep the best configuration's time current (data changes between
    // queries), so vw-greedy compares variants on what they do today.
    double& t = state_.measured[*state_.best];
    t += (seconds_per_row - t) * kConvergedSmoothing;
    return;
  }
  if (!state_.measuring || config != *state_.measuring) return;
  state_.measuring_times.push_back(seconds_per_row);
  if (measurement_.add(seconds_per_row)) {
    finish_measurement();
  } else if (params_.abandon_factor > 0 && state_.best &&
             measurement_.minimum() > params_.abandon_factor * state_.measured.at(*state_.best)) {
    finish_measurement();  // clearly worse: its mean so far is enough to discard it
  }
}

void DamonSearch::abandon_measurement() {
  if (state_.measuring && measurement_.chunks() > 0) finish_measurement();
}

void DamonSearch::finish_measurement() {
  struct {
    LaunchConfig config;
    std::optional<LaunchConfig> reference;
  } done{*state_.measuring, state_.measuring_reference};
  state_.measuring.reset();
  state_.measuring_reference.reset();
  state_.measuring_times.clear();
  const double t = measurement_.result();
  state_.measured[done.config] = t;
  SearchStep step{done.config, t, measurement_.chunks(), StepEvent::initial};
  if (!done.reference) {
    state_.queue.push_back(done.config);  // initial configurations enter Q in order
  } else {
    const double t_ref = state_.measured.at(*done.reference);
    if (similar(t_ref, t) && may_form_plateau(*done.reference, done.config)) {  // lines 13-14: keep both branches
      step.event = StepEvent::plateau;
      state_.queue.push_front(done.config);
      state_.came_from[done.config] = *done.reference;
    } else if (t < t_ref) {  // lines 15-16: follow the gradient
      step.event = StepEvent::better;
      state_.came_from[done.config] = *done.reference;
      if (!state_.queue.empty() && state_.queue.front() == *done.reference) {
        state_.queue.front() = done.config;
      } else {
        state_.queue.push_front(done.config);
      }
    } else {
      step.event = StepEvent::worse;
    }
  }
  if (state_.best && t < (1.0 - params_.min_improvement) * state_.measured.at(*state_.best)) {
    state_.since_improvement = 0;
  } else if (state_.best) {
    ++state_.since_improvement;
  }
  if (!state_.best || t < state_.measured.at(*state_.best)) state_.best = done.config;  // lines 18-19
  state_.path.push_back(step);
  advance();
}

void DamonSearch::advance() {
  if (state_.converged) return;
  if (state_.measuring) {  // resumed in the middle of a measurement: continue its window
    const std::vector<double> times = std::move(state_.measuring_times);
    start_measuring(*state_.measuring, state_.measuring_reference);
    for (double t : times) {
      state_.measuring_times.push_back(t);
      measurement_.add(t);
    }
    if (measurement_.done()) finish_measurement();  // e.g. a smaller b_max than the state was made with
    return;
  }
  // Line 1 (and "multiple initial configurations"): measure each initial one first.
  while (!state_.pending_initial.empty()) {
    const LaunchConfig c = state_.pending_initial.front();
    state_.pending_initial.erase(state_.pending_initial.begin());
    if (state_.measured.count(c)) continue;
    start_measuring(c, std::nullopt);
    return;
  }
  if (params_.patience > 0 && state_.since_improvement >= params_.patience) {
    state_.queue.clear();  // flat: nothing left worth its chunks
  }
  while (!state_.queue.empty()) {  // line 4
    const LaunchConfig ci = state_.queue.front();
    const double t_best = state_.measured.at(*state_.best);
    if (state_.measured.at(ci) > params_.pruning_p * t_best) {  // lines 5-7: prune
      state_.queue.pop_front();
      continue;
    }
    std::optional<LaunchConfig> untested;  // lines 9-11
    std::vector<LaunchConfig> candidates = space_.neighbours(ci);
    if (const auto parent = state_.came_from.find(ci); parent != state_.came_from.end()) {
      if (const auto ahead = space_.step_beyond(parent->second, ci)) {
        const auto it = std::find(candidates.begin(), candidates.end(), *ahead);
        if (it != candidates.end()) std::rotate(candidates.begin(), it, it + 1);
      }
    }
    for (const auto& n : candidates) {
      if (!state_.measured.count(n)) {
        untested = n;
        break;
      }
    }
    if (!untested) {  // line 22: local minimum, backtrack
      state_.queue.pop_front();
      continue;
    }
    start_measuring(*untested, ci);
    return;
  }
  state_.converged = true;
}

}  // namespace tally::gpu
