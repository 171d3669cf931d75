#pragma once
// tally_tuning_cache: the per-device tuning cache as a SQL relation, so
// `SELECT * FROM tally_tuning_cache` (psql, any client) shows what the tuner
// learned: one row per device x operator signature x variant x cardinality
// bucket, with the best configuration, its time per row, observations, where
// it came from and whether its search has converged. Read from the process's
// tuning store (common/aggregate_engine.hpp: process_tuning_store); empty
// when tallyd has none (no catalog, or a build without the tuning cache).
#include <string_view>

#include "executor/introspection/catalog_relations.hpp"

namespace tally::executor::introspection {

inline constexpr std::string_view kTuningCacheRelation = "tally_tuning_cache";

// Unqualified or pg_catalog-qualified, as the other catalog relations.
bool is_tuning_cache_relation(std::string_view schema, std::string_view name);
Relation tuning_cache_relation();

}  // namespace tally::executor::introspection
