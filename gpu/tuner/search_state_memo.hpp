#pragma once
// Parsed search states by their JSON text. Parsing a record's search state is
// most of a ChunkTuner's set-up, so the states a tuner serializes, and those
// read from a store at start, are kept parsed for the next query on the key.
#include <optional>
#include <string>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "gpu/tuner/damon_search.hpp"
#include "gpu/tuner/search_space.hpp"

namespace tally::gpu {

// The state a JSON text holds (from the memo when it was parsed before).
std::optional<SearchState> parse_state(const std::string& text);
// Remembers the state `text` serializes.
void remember_parsed(const std::string& text, const SearchState& state);
// The state loaded from a record, or nullopt when it is unreadable or was
// measured on another grid (another version's search space): then the search
// starts afresh rather than walking off the grid.
std::optional<SearchState> usable_state(const tally::TuningRecord& r, const SearchSpace& space);
// Parses the records' search states into the memo, so that the first query
// on each key after a restart does not parse its own.
void preparse_search_states(const std::vector<tally::TuningRecord>& records);

}  // namespace tally::gpu
