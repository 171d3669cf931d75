#pragma once
// The memory this process may use: the host's physical memory, or less
// where a cgroup (a container's memory limit, docker compose's
// mem_limit) allows less. The automatic sizes of the chunk cache and the
// memory budgets are shares of it, so that a server in a container sizes
// itself to the container, not to the machine under it.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>

#include <unistd.h>

namespace tally {

namespace detail {

// The limit in a cgroup memory file; 0 where none is set ("max" in cgroup
// v2, a number near 2^63 in v1) or the file is missing.
inline uint64_t cgroup_limit(const std::string& path) {
  std::ifstream in(path);
  std::string value;
  if (!(in >> value) || value.empty() || value == "max") return 0;
  try {
    const uint64_t limit = std::stoull(value);
    return limit < (uint64_t{1} << 62) ? limit : 0;
  } catch (...) {
    return 0;
  }
}

}  // namespace detail

inline uint64_t host_memory_bytes() {
  uint64_t bytes =
      static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  auto bound = [&bytes](const std::string& path) {
    if (const uint64_t limit = detail::cgroup_limit(path); limit > 0) bytes = std::min(bytes, limit);
  };
  // Inside a container the process's cgroup is the mount's root; elsewhere
  // /proc/self/cgroup names it ("0::/path" in v2, "N:memory:/path" in v1).
  bound("/sys/fs/cgroup/memory.max");
  bound("/sys/fs/cgroup/memory/memory.limit_in_bytes");
  std::ifstream cgroups("/proc/self/cgroup");
  for (std::string line; std::getline(cgroups, line);) {
    const size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1), path = line.substr(second + 1);
    if (controllers.empty()) bound("/sys/fs/cgroup" + path + "/memory.max");
    else if (controllers == "memory") bound("/sys/fs/cgroup/memory" + path + "/memory.limit_in_bytes");
  }
  return bytes;
}

}  // namespace tally
