#include "gpu/variant_config.hpp"

#include <fmt/format.h>

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

std::string_view hash_name(HashKind h) {
  switch (h) {
    case HashKind::identity: return "identity";
    case HashKind::murmur: return "murmur";
    case HashKind::range: return "range";
  }
  return "?";
}

std::string describe(const VariantConfig& c) {
  return fmt::format("{},hash={},warp={},pbits={},replicas={}", to_string(c.launch), hash_name(c.hash),
                     c.warp_preaggregate ? 1 : 0, c.partition_bits, c.shared_replicas);
}

}  // namespace tally::gpu
