#include "executor/introspection/tuning_cache_relation.hpp"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/aggregate_engine.hpp"

namespace tally::executor::introspection {

namespace {

// Days from 1970-01-01 to y-m-d (proleptic Gregorian; H. Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// The cache's "YYYY-MM-DDTHH:MM:SS.sssZ" as a timestamptz Value (microseconds
// since 2000-01-01 UTC); NULL when it does not parse.
Value timestamptz_of(const std::string& text) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0;
  double s = 0;
  if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%lfZ", &y, &mo, &d, &h, &mi, &s) != 6) return Value{Null{}};
  constexpr int64_t kPostgresEpochDays = 10957;  // 2000-01-01 - 1970-01-01
  const int64_t days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) - kPostgresEpochDays;
  const int64_t micros = ((days * 24 + h) * 60 + mi) * 60'000'000LL + std::llround(s * 1e6);
  return Value{micros};
}

}  // namespace

bool is_tuning_cache_relation(std::string_view schema, std::string_view name) {
  return (schema.empty() || schema == "pg_catalog") && name == kTuningCacheRelation;
}

Relation tuning_cache_relation() {
  Relation r;
  r.columns = {{"device", SqlType{TypeId::text}},           {"signature", SqlType{TypeId::text}},
               {"variant", SqlType{TypeId::text}},          {"bucket", SqlType{TypeId::int4}},
               {"groups_from", SqlType{TypeId::int8}},      {"groups_to", SqlType{TypeId::int8}},
               {"configuration", SqlType{TypeId::text}},    {"seconds_per_row", SqlType{TypeId::float8}},
               {"ns_per_row", SqlType{TypeId::float8}},     {"observations", SqlType{TypeId::int8}},
               {"source", SqlType{TypeId::text}},           {"converged", SqlType{TypeId::boolean}},
               {"search_chunks", SqlType{TypeId::int8}},    {"updated", SqlType{TypeId::timestamptz}}};
  TuningStore* store = process_tuning_store().load();
  if (store == nullptr) return r;
  for (const TuningRecord& t : store->all()) {
    const auto state = nlohmann::json::parse(t.search_state, nullptr, /*allow_exceptions=*/false);
    const bool has_state = state.is_object();
    // Bucket b holds estimates in [2^b, 2^(b+1)); bucket 0 also holds 0 and 1 group.
    const int64_t from = t.bucket <= 0 ? 0 : (int64_t{1} << std::min(t.bucket, 62));
    const int64_t to = (int64_t{1} << std::min(t.bucket + 1, 62)) - 1;
    r.rows.push_back({Value{t.device}, Value{t.signature}, Value{t.variant}, Value{int64_t{t.bucket}}, Value{from},
                      Value{to}, Value{t.best_config}, Value{t.seconds_per_row}, Value{t.seconds_per_row * 1e9},
                      Value{t.observations}, Value{t.source},
                      has_state && state.contains("converged") && state["converged"].is_boolean()
                          ? Value{state["converged"].get<bool>()}
                          : Value{Null{}},
                      has_state && state.contains("chunks") && state["chunks"].is_number_integer()
                          ? Value{state["chunks"].get<int64_t>()}
                          : Value{Null{}},
                      timestamptz_of(t.updated_at)});
  }
  return r;
}

}  // namespace tally::executor::introspection
