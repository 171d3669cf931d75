#pragma once
// RecordedSpaces: full configuration search spaces recorded by sweep_spaces
// (every configuration, every variant, per group count, several chunk
// repetitions each) or generated synthetically, and the CSV file format the
// replay benchmark reads:
//
//   # tally tuner search space v1
//   # <key>=<value>            device properties and run metadata (see keys below)
//   variant,groups,threads_per_block,blocks_per_sm,fill_factor_percent,rows_per_thread,repetition,seconds_per_row
//   global,1024,256,4,50,1,0,1.93e-11
//
// Repetitions of one configuration are in the order they ran (repetition 0
// first), so start-up outliers replay where they happened.
// Header keys: device, sm_count, warp_size, max_threads_per_block,
// max_threads_per_sm, max_blocks_per_sm, shared_memory_per_block,
// shared_memory_per_sm, l2_cache_bytes, global_memory_bytes, driver_version,
// compute_major, compute_minor, chunk_rows, key_bytes, state_bytes, source.
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "gpu/rules/device_info.hpp"
#include "gpu/tuner/launch_config.hpp"

namespace tally::bench {

struct SpaceCell {
  std::string variant;
  uint64_t groups = 0;
  // Per configuration, the time per row of each repetition, in run order.
  std::map<gpu::LaunchConfig, std::vector<double>> times;
};

struct RecordedSpaces {
  std::map<std::string, std::string> metadata;  // header keys
  std::vector<SpaceCell> cells;

  gpu::DeviceInfo device() const;
  int64_t metadata_int(const std::string& key, int64_t fallback) const;
};

// Throws std::runtime_error with the line number on malformed input.
RecordedSpaces read_spaces(std::istream& in);
void write_spaces(std::ostream& out, const RecordedSpaces& spaces);

}  // namespace tally::bench
