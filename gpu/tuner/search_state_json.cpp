#include "gpu/tuner/search_state_json.hpp"

#include <cmath>

namespace tally::gpu {

namespace {

std::optional<LaunchConfig> config_from(const nlohmann::json& j) {
  if (!j.is_string()) return std::nullopt;
  return parse_launch_config(j.get<std::string>());
}

std::optional<StepEvent> event_from(const std::string& name) {
  for (StepEvent e : {StepEvent::initial, StepEvent::plateau, StepEvent::better, StepEvent::worse}) {
    if (step_event_name(e) == name) return e;
  }
  return std::nullopt;
}

}  // namespace

nlohmann::json to_json(const SearchStep& step) {
  return {{"config", to_string(step.config)},
          {"seconds_per_row", step.seconds_per_row},
          {"chunks", step.chunks},
          {"event", std::string(step_event_name(step.event))}};
}

nlohmann::json to_json(const SearchState& state) {
  nlohmann::json j;
  j["version"] = 1;
  j["pending_initial"] = nlohmann::json::array();
  for (const auto& c : state.pending_initial) j["pending_initial"].push_back(to_string(c));
  j["queue"] = nlohmann::json::array();
  for (const auto& c : state.queue) j["queue"].push_back(to_string(c));
  j["measured"] = nlohmann::json::array();  // the measured grid
  for (const auto& [c, t] : state.measured) j["measured"].push_back({{"config", to_string(c)}, {"seconds_per_row", t}});
  j["came_from"] = nlohmann::json::array();
  for (const auto& [c, from] : state.came_from) j["came_from"].push_back({to_string(c), to_string(from)});
  j["best"] = state.best ? nlohmann::json(to_string(*state.best)) : nlohmann::json(nullptr);
  j["path"] = nlohmann::json::array();
  for (const auto& s : state.path) j["path"].push_back(to_json(s));
  j["measuring"] = state.measuring ? nlohmann::json(to_string(*state.measuring)) : nlohmann::json(nullptr);
  j["measuring_reference"] =
      state.measuring_reference ? nlohmann::json(to_string(*state.measuring_reference)) : nlohmann::json(nullptr);
  j["measuring_times"] = state.measuring_times;
  j["chunks"] = state.chunks;
  j["launch_chunks"] = state.launch_chunks;
  if (state.single_for_copies) j["single_for_copies"] = true;
  j["since_improvement"] = state.since_improvement;
  j["converged"] = state.converged;
  return j;
}

std::optional<SearchState> search_state_from_json(const nlohmann::json& j) {
  try {
    if (!j.is_object() || j.value("version", 0) != 1) return std::nullopt;
    SearchState s;
    for (const auto& c : j.at("pending_initial")) {
      auto config = config_from(c);
      if (!config) return std::nullopt;
      s.pending_initial.push_back(*config);
    }
    for (const auto& c : j.at("queue")) {
      auto config = config_from(c);
      if (!config) return std::nullopt;
      s.queue.push_back(*config);
    }
    for (const auto& m : j.at("measured")) {
      auto config = config_from(m.at("config"));
      if (!config) return std::nullopt;
      s.measured[*config] = m.at("seconds_per_row").get<double>();
    }
    if (j.contains("came_from")) {
      for (const auto& pair : j.at("came_from")) {
        auto c = config_from(pair.at(0));
        auto from = config_from(pair.at(1));
        if (!c || !from) return std::nullopt;
        s.came_from[*c] = *from;
      }
    }
    if (!j.at("best").is_null()) {
      s.best = config_from(j.at("best"));
      if (!s.best || !s.measured.count(*s.best)) return std::nullopt;
    }
    for (const auto& p : j.at("path")) {
      auto config = config_from(p.at("config"));
      auto event = event_from(p.at("event").get<std::string>());
      if (!config || !event) return std::nullopt;
      s.path.push_back({*config, p.at("seconds_per_row").get<double>(), p.at("chunks").get<int>(), *event});
    }
    if (!j.at("measuring").is_null()) {
      s.measuring = config_from(j.at("measuring"));
      if (!s.measuring) return std::nullopt;
    }
    if (!j.at("measuring_reference").is_null()) {
      s.measuring_reference = config_from(j.at("measuring_reference"));
      if (!s.measuring_reference) return std::nullopt;
    }
    if (j.contains("measuring_times")) {  // absent in states written before it existed
      for (const auto& t : j.at("measuring_times")) {
        const double v = t.get<double>();
        if (!(v > 0) || !std::isfinite(v)) return std::nullopt;
        s.measuring_times.push_back(v);
      }
      if (!s.measuring && !s.measuring_times.empty()) return std::nullopt;
    }
    s.chunks = j.at("chunks").get<long>();
    s.since_improvement = j.value("since_improvement", 0);  // absent in states written before it existed
    s.launch_chunks = j.value("launch_chunks", 1);          // absent: written when every launch was one chunk
    if (s.launch_chunks < 1) return std::nullopt;
    s.single_for_copies = j.value("single_for_copies", false);  // absent: not known to be, or not single
    s.converged = j.at("converged").get<bool>();
    // Every reference in the queue must have been measured (Algorithm 1 reads t(c_i)).
    for (const auto& c : s.queue) {
      if (!s.measured.count(c)) return std::nullopt;
    }
    if (!s.queue.empty() && !s.best) return std::nullopt;
    return s;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace tally::gpu
