#pragma once
// A device column of zeros, grown as launches need it: the key of a global
// aggregate (no GROUP BY), which the host would otherwise copy to the
// device row by row for every query (8 bytes a row for nothing).
// Host-only header: builds without CUDA (gpu_stub.cpp throws).
#include <cstdint>
#include <memory>

#include "gpu/group_by.hpp"

namespace tally::gpu {

class ZeroColumn {
 public:
  ZeroColumn();
  ~ZeroColumn();
  ZeroColumn(const ZeroColumn&) = delete;
  ZeroColumn& operator=(const ZeroColumn&) = delete;

  // `rows` zeros of `width_bytes` each, ready in stream order on `stream`;
  // valid until a call for more.
  const void* get(int64_t rows, uint32_t width_bytes, StreamHandle stream);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tally::gpu
