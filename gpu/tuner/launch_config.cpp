#include "gpu/tuner/launch_config.hpp"

#include <charconv>

namespace tally::gpu {

namespace {
struct DimensionInfo {
  ConfigDimension dimension;
  std::string_view short_name;  // used in the text form
  std::string_view name;
};
constexpr DimensionInfo kDimensions[kConfigDimensionCount] = {
    {ConfigDimension::threads_per_block, "tpb", "threads_per_block"},
    {ConfigDimension::blocks_per_sm, "bps", "blocks_per_sm"},
    {ConfigDimension::fill_factor_percent, "ff", "fill_factor_percent"},
    {ConfigDimension::rows_per_thread, "rpt", "rows_per_thread"},
};
}  // namespace

int32_t LaunchConfig::get(ConfigDimension dimension) const {
  switch (dimension) {
    case ConfigDimension::threads_per_block: return threads_per_block;
    case ConfigDimension::blocks_per_sm: return blocks_per_sm;
    case ConfigDimension::fill_factor_percent: return fill_factor_percent;
    case ConfigDimension::rows_per_thread: return rows_per_thread;
  }
  return 0;
}

void LaunchConfig::set(ConfigDimension dimension, int32_t value) {
  switch (dimension) {
    case ConfigDimension::threads_per_block: threads_per_block = value; return;
    case ConfigDimension::blocks_per_sm: blocks_per_sm = value; return;
    case ConfigDimension::fill_factor_percent: fill_factor_percent = value; return;
    case ConfigDimension::rows_per_thread: rows_per_thread = value; return;
  }
}

std::string_view dimension_name(ConfigDimension dimension) {
  return kDimensions[static_cast<int>(dimension)].name;
}

std::optional<ConfigDimension> dimension_from_name(std::string_view name) {
  for (const auto& info : kDimensions) {
    if (info.name == name || info.short_name == name) return info.dimension;
  }
  return std::nullopt;
}

std::string to_string(const LaunchConfig& config) {
  std::string out;
  for (const auto& info : kDimensions) {
    if (!out.empty()) out += ',';
    out += info.short_name;
    out += '=';
    out += std::to_string(config.get(info.dimension));
  }
  return out;
}

std::optional<LaunchConfig> parse_launch_config(std::string_view text) {
  LaunchConfig config;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const auto dimension = dimension_from_name(item.substr(0, eq));
    if (!dimension) return std::nullopt;
    const std::string_view digits = item.substr(eq + 1);
    int32_t value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc{} || end != digits.data() + digits.size() || value <= 0) return std::nullopt;
    config.set(*dimension, value);
  }
  return config;
}

}  // namespace tally::gpu
