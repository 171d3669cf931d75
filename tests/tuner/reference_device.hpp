#pragma once
// A large data-center GPU's properties as the CUDA runtime reports them, for the tuner tests
// that drive ChunkTuner on CPU: the rules derive every limit from these; and
// the live benchmark's query as a ChunkTuner input.
#include <cstdint>

#include "gpu/rules/device_info.hpp"
#include "gpu/tuner/chunk_tuner.hpp"

namespace tally::gpu::testing {

inline DeviceInfo reference_gpu(int driver = 13000) {
  DeviceInfo d;
  d.ordinal = 0;
  d.name = "reference GPU";
  d.compute_major = 9;
  d.compute_minor = 0;
  d.sm_count = 132;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.shared_memory_per_block = 48 * 1024;
  d.shared_memory_per_block_optin = 227 * 1024;
  d.shared_memory_per_sm = 228 * 1024;
  d.reserved_shared_memory_per_block = 1024;
  d.l2_bytes = 50u << 20;
  d.total_memory = 80ull << 30;
  d.driver_version = driver;
  return d;
}

// The live benchmark's query on that device: count(*), sum(int4) by an int4
// key, 2^16 groups, no key range (dense cannot run), 2^24-row chunks. Each
// chunk is its own measurement (measure_chunks 1) unless a test says
// otherwise: the tests of the race and the search feed one time per chunk.
inline ChunkTunerInput live_count_sum_query(uint64_t seed) {
  ChunkTunerInput in;
  in.device = reference_gpu();
  in.spec.key_type = KeyType::int32;
  in.spec.columns = {{ValueType::int32, true}};
  in.spec.aggregates = {{AggOp::count_star, -1}, {AggOp::sum, 0}};
  in.facts.rows = 1u << 24;
  in.facts.estimated_groups = 1u << 16;
  in.signature = "key=int4;values=int4;aggs=count_rows,sum_int(0)";
  in.tuning.explore_rate = 0.0;
  in.seed = seed;
  in.measure_chunks = 1;
  return in;
}

}  // namespace tally::gpu::testing
