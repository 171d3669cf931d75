#include "gpu/rules/variant_config.hpp"

#include <fmt/format.h>

namespace tally::gpu {

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
