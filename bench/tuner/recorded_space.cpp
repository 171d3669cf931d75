#include "bench/tuner/recorded_space.hpp"

#include <istream>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace tally::bench {

int64_t RecordedSpaces::metadata_int(const std::string& key, int64_t fallback) const {
  const auto it = metadata.find(key);
  return it == metadata.end() ? fallback : std::stoll(it->second);
}

gpu::DeviceInfo RecordedSpaces::device() const {
  gpu::DeviceInfo d;
  const auto name = metadata.find("device");
  d.name = name == metadata.end() ? "unknown" : name->second;
  d.compute_major = static_cast<int>(metadata_int("compute_major", 0));
  d.compute_minor = static_cast<int>(metadata_int("compute_minor", 0));
  d.sm_count = static_cast<int>(metadata_int("sm_count", 0));
  d.warp_size = static_cast<int>(metadata_int("warp_size", 32));
  d.max_threads_per_block = static_cast<int>(metadata_int("max_threads_per_block", 1024));
  d.max_threads_per_sm = static_cast<int>(metadata_int("max_threads_per_sm", 2048));
  d.max_blocks_per_sm = static_cast<int>(metadata_int("max_blocks_per_sm", 32));
  // The recorded shared_memory_per_block is the opt-in maximum per block.
  d.shared_memory_per_block_optin = static_cast<size_t>(metadata_int("shared_memory_per_block", 48 * 1024));
  d.shared_memory_per_sm = static_cast<size_t>(metadata_int("shared_memory_per_sm", 0));
  d.l2_bytes = static_cast<size_t>(metadata_int("l2_cache_bytes", 0));
  d.total_memory = static_cast<size_t>(metadata_int("global_memory_bytes", 0));
  d.driver_version = static_cast<int>(metadata_int("driver_version", 0));
  return d;
}

RecordedSpaces read_spaces(std::istream& in) {
  RecordedSpaces spaces;
  std::map<std::tuple<std::string, uint64_t>, size_t> cell_index;
  std::string line;
  int line_number = 0;
  bool header_seen = false;
  auto fail = [&line_number](const std::string& what) {
    throw std::runtime_error("search space file line " + std::to_string(line_number) + ": " + what);
  };
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line[0] == '#') {
      const size_t eq = line.find('=');
      if (eq != std::string::npos) {
        const size_t start = line.find_first_not_of(" #");
        spaces.metadata[line.substr(start, eq - start)] = line.substr(eq + 1);
      }
      continue;
    }
    if (!header_seen) {
      if (line.rfind("variant,", 0) != 0) fail("expected the column header");
      header_seen = true;
      continue;
    }
    std::vector<std::string> fields;
    std::stringstream ss(line);
    std::string field;
    while (std::getline(ss, field, ',')) fields.push_back(field);
    if (fields.size() != 8) fail("expected 8 fields");
    try {
      gpu::LaunchConfig c;
      c.threads_per_block = std::stoi(fields[2]);
      c.blocks_per_sm = std::stoi(fields[3]);
      c.fill_factor_percent = std::stoi(fields[4]);
      c.rows_per_thread = std::stoi(fields[5]);
      const uint64_t groups = std::stoull(fields[1]);
      const int repetition = std::stoi(fields[6]);
      const double t = std::stod(fields[7]);
      if (!(t > 0) || repetition < 0) fail("non-positive time or negative repetition");
      const auto key = std::make_tuple(fields[0], groups);
      auto it = cell_index.find(key);
      if (it == cell_index.end()) {
        it = cell_index.emplace(key, spaces.cells.size()).first;
        spaces.cells.push_back({fields[0], groups, {}});
      }
      auto& reps = spaces.cells[it->second].times[c];
      if (static_cast<int>(reps.size()) != repetition) fail("repetitions out of order");
      reps.push_back(t);
    } catch (const std::logic_error&) {
      fail("malformed number");
    }
  }
  return spaces;
}

void write_spaces(std::ostream& out, const RecordedSpaces& spaces) {
  out << "# tally tuner search space v1\n";
  for (const auto& [k, v] : spaces.metadata) out << "# " << k << "=" << v << "\n";
  out << "variant,groups,threads_per_block,blocks_per_sm,fill_factor_percent,rows_per_thread,repetition,seconds_per_row\n";
  out.precision(6);
  for (const auto& cell : spaces.cells) {
    for (const auto& [c, reps] : cell.times) {
      for (size_t r = 0; r < reps.size(); ++r) {
        out << cell.variant << ',' << cell.groups << ',' << c.threads_per_block << ',' << c.blocks_per_sm << ','
            << c.fill_factor_percent << ',' << c.rows_per_thread << ',' << r << ',' << reps[r] << '\n';
      }
    }
  }
}

}  // namespace tally::bench
