#pragma once
// LaunchConfig: the explicit launch configuration a GPU aggregation launcher
// receives from the tuner (STYLE.md: kernels never choose their own). It is a
// point of the tuner's search grid: threads per block x blocks per SM (powers
// of two, DaMoN'19 section 3.5) plus the variant's own parameters. Host-only,
// trivially copyable, so it can be passed by value and stored in the cache.
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tally::gpu {

// The axes of the search grid. A variant declares which of them it uses
// (gpu/tuner/search_space.hpp); the others keep their defaults.
enum class ConfigDimension : uint8_t {
  threads_per_block,
  blocks_per_sm,
  fill_factor_percent,
  rows_per_thread,
};
inline constexpr int kConfigDimensionCount = 4;

struct LaunchConfig {
  int32_t threads_per_block = 256;
  // Grid size = blocks_per_sm x the device's SM count, so one configuration
  // means the same occupancy on GPUs with different SM counts.
  int32_t blocks_per_sm = 4;
  // Hash-table load in percent of slots (Karnagel ADMS'15: 25/50/83 %);
  // ignored by variants without a hash table (dense, sort).
  int32_t fill_factor_percent = 50;
  // Rows each thread processes per grid-stride step.
  int32_t rows_per_thread = 1;

  int64_t grid_blocks(int sm_count) const { return int64_t{blocks_per_sm} * sm_count; }
  int32_t get(ConfigDimension dimension) const;
  void set(ConfigDimension dimension, int32_t value);

  friend auto operator<=>(const LaunchConfig&, const LaunchConfig&) = default;
};

std::string_view dimension_name(ConfigDimension dimension);
std::optional<ConfigDimension> dimension_from_name(std::string_view name);

// "tpb=256,bps=4,ff=50,rpt=1": the stable text form used in the tuning cache,
// EXPLAIN ANALYZE and the admin page.
std::string to_string(const LaunchConfig& config);
// Inverse of to_string; missing keys keep their defaults; nullopt when malformed.
std::optional<LaunchConfig> parse_launch_config(std::string_view text);

struct LaunchConfigHash {
  size_t operator()(const LaunchConfig& c) const noexcept {
    uint64_t h = static_cast<uint32_t>(c.threads_per_block);
    h = h * 0x9E3779B97F4A7C15ull + static_cast<uint32_t>(c.blocks_per_sm);
    h = h * 0x9E3779B97F4A7C15ull + static_cast<uint32_t>(c.fill_factor_percent);
    h = h * 0x9E3779B97F4A7C15ull + static_cast<uint32_t>(c.rows_per_thread);
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

}  // namespace tally::gpu
