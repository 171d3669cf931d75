#pragma once
// JSON form of the tuner's search state and path: what the tuning cache
// persists to continue a search, and what EXPLAIN ANALYZE and the admin page
// (/tuning) show. Configurations are written in LaunchConfig's text form.
#include <nlohmann/json.hpp>
#include <optional>

#include "gpu/tuner/damon_search.hpp"

namespace tally::gpu {

nlohmann::json to_json(const SearchStep& step);
nlohmann::json to_json(const SearchState& state);
// nullopt when the JSON does not have the expected shape (e.g. written by a
// newer version); the caller then starts a fresh search.
std::optional<SearchState> search_state_from_json(const nlohmann::json& json);

}  // namespace tally::gpu
