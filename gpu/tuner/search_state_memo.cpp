#include "gpu/tuner/search_state_memo.hpp"

#include <mutex>
#include <unordered_map>

#include "gpu/tuner/search_state_json.hpp"

namespace tally::gpu {

namespace {
// Bounded: the whole memo is dropped when it reaches this many entries.
constexpr size_t kParsedStateMemo = 256;
struct ParsedStates {
  std::mutex mutex;
  std::unordered_map<std::string, SearchState> by_text;
};
ParsedStates& parsed_states() {
  static ParsedStates* memo = new ParsedStates;  // never destroyed: used until exit
  return *memo;
}
}  // namespace

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

std::optional<SearchState> usable_state(const tally::TuningRecord& r, const SearchSpace& space) {
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

void preparse_search_states(const std::vector<tally::TuningRecord>& records) {
  for (const auto& r : records)
    if (!r.search_state.empty()) (void)parse_state(r.search_state);
}

}  // namespace tally::gpu
