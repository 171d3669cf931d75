#include "gpu/rules/variant.hpp"

namespace tally::gpu {

std::string_view variant_name(Variant v) {
  switch (v) {
    case Variant::dense: return "dense";
    case Variant::shared_hash: return "shared_memory";
    case Variant::global_hash: return "global";
    case Variant::sort: return "sort";
    case Variant::partitioned_hash: return "partitioned";
  }
  return "?";
}

std::optional<Variant> parse_variant(std::string_view name) {
  for (Variant v : kAllVariants)
    if (variant_name(v) == name) return v;
  return std::nullopt;
}

}  // namespace tally::gpu
