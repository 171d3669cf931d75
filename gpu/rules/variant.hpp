#pragma once
// The aggregation variants, the one vocabulary gpu/ uses for them. Their
// names are what the tuning cache stores, EXPLAIN shows and a forced
// variant (SET tally.variant) gives: variant_name and parse_variant are the
// only translation between the two.
#include <optional>
#include <string_view>

namespace tally::gpu {

enum class Variant {
  dense,             // direct-indexed per-block shared-memory arrays over [min,max]
  shared_hash,       // block-private open addressing in shared memory, merged into the global table
  global_hash,       // one open-addressing table in device memory, CAS on keys, atomics on aggregates
  sort,              // CUB radix sort + run aggregation, merged into the global table
  partitioned_hash,  // CUB radix partition on key bits, then shared-memory tables per partition
};
inline constexpr Variant kAllVariants[] = {Variant::dense, Variant::shared_hash, Variant::global_hash,
                                           Variant::sort, Variant::partitioned_hash};

// "dense", "shared_memory", "global", "sort", "partitioned".
std::string_view variant_name(Variant v);
std::optional<Variant> parse_variant(std::string_view name);

}  // namespace tally::gpu
