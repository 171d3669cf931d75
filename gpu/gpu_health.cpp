#include "gpu/gpu_health.hpp"

#include <atomic>
#include <mutex>

namespace tally::gpu {
namespace {
std::atomic<bool> g_unusable{false};
std::mutex g_mutex;
std::string g_reason;
}  // namespace

bool gpu_usable() { return !g_unusable.load(std::memory_order_acquire); }

std::string gpu_unusable_reason() {
  std::lock_guard lock(g_mutex);
  return g_reason;
}

void mark_gpu_unusable(const std::string& reason) {
  std::lock_guard lock(g_mutex);
  if (!g_unusable.load()) g_reason = reason;
  g_unusable.store(true, std::memory_order_release);
}

}  // namespace tally::gpu
