#include "gpu/pipeline/device_texts.cuh"

#include <algorithm>
#include <mutex>
#include <thread>
#include <vector>

#include "common/for_parts.hpp"
#include "gpu/cuda_check.cuh"

namespace tally::gpu {

namespace {

__global__ void match_texts_kernel(const uint64_t* offsets, const char* bytes, int32_t count, const RunsPattern pattern,
                                   int32_t* verdicts) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < count; c += stride) {
    const uint64_t begin = offsets[c];
    verdicts[c] = runs_match(bytes + begin, offsets[c + 1] - begin, pattern) ? 1 : 0;
  }
}

// Dictionaries kept at most: a query matches one or two text columns; the
// oldest copy goes first.
constexpr size_t kKeptDictionaries = 4;

struct Kept {
  int device = 0;
  std::weak_ptr<const void> identity;
  std::shared_ptr<const DeviceTexts> texts;
  uint64_t last_use = 0;
};

struct Cache {
  std::mutex mutex;
  std::vector<Kept> kept;
  uint64_t uses = 0;
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: copies may be freed after the CUDA runtime at exit
  return *c;
}

bool same(const std::weak_ptr<const void>& a, const std::weak_ptr<const void>& b) {
  return !a.owner_before(b) && !b.owner_before(a);
}

// The entries' offsets and bytes gathered on the host, then copied. Tens
// of millions of entries take most of a second on one thread: the gather
// runs on every core, in ranges of a million entries at least.
std::shared_ptr<DeviceTexts> copy_entries(const TextEntries& entries, int32_t count, cudaStream_t stream) {
  const auto n = static_cast<size_t>(count);
  const size_t parts = std::clamp<size_t>(n >> 20, 1, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<uint64_t> offsets(n + 1, 0);
  for_parts(parts, n, [&](size_t, size_t begin, size_t end) {
    for (size_t c = begin; c < end; ++c) offsets[c + 1] = entries.at(static_cast<int32_t>(c)).size();
  });
  for (size_t c = 0; c < n; ++c) offsets[c + 1] += offsets[c];
  // Not zeroed: the threads' copies touch its pages first, in parallel.
  const uint64_t byte_count = std::max<uint64_t>(offsets.back(), 1);
  std::unique_ptr<char[]> bytes(new char[byte_count]);
  for_parts(parts, n, [&](size_t, size_t begin, size_t end) {
    for (size_t c = begin; c < end; ++c) {
      const std::string_view t = entries.at(static_cast<int32_t>(c));
      std::copy(t.begin(), t.end(), bytes.get() + offsets[c]);
    }
  });
  auto texts = std::make_shared<DeviceTexts>();
  void* o = nullptr;
  void* b = nullptr;
  TALLY_CUDA_CHECK(cudaMalloc(&o, offsets.size() * sizeof(uint64_t)));
  texts->offsets = static_cast<const uint64_t*>(o);
  TALLY_CUDA_CHECK(cudaMalloc(&b, byte_count));
  texts->bytes = static_cast<const char*>(b);
  texts->count = count;
  texts->byte_count = offsets.back();
  TALLY_CUDA_CHECK(cudaMemcpyAsync(o, offsets.data(), offsets.size() * sizeof(uint64_t), cudaMemcpyHostToDevice, stream));
  TALLY_CUDA_CHECK(cudaMemcpyAsync(b, bytes.get(), byte_count, cudaMemcpyHostToDevice, stream));
  TALLY_CUDA_CHECK(cudaStreamSynchronize(stream));  // the host arrays go out of scope
  return texts;
}

}  // namespace

DeviceTexts::~DeviceTexts() {
  // cudaFree waits for the device: no kernel still reads a copy whose last
  // holder let it go.
  if (offsets != nullptr) (void)cudaFree(const_cast<uint64_t*>(offsets));
  if (bytes != nullptr) (void)cudaFree(const_cast<char*>(bytes));
}

std::shared_ptr<const DeviceTexts> device_texts(const TextEntries& entries, int32_t count, cudaStream_t stream) {
  int device = 0;
  TALLY_CUDA_CHECK(cudaGetDevice(&device));
  const std::weak_ptr<const void> identity = entries.identity();
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    for (Kept& k : c.kept) {
      if (k.device == device && same(k.identity, identity) && k.texts->count >= count) {
        k.last_use = ++c.uses;
        return k.texts;
      }
    }
  }
  // Copied outside the lock: another query's lookups wait for none of it.
  std::shared_ptr<const DeviceTexts> texts = copy_entries(entries, count, stream);
  std::lock_guard<std::mutex> lock(c.mutex);
  std::erase_if(c.kept, [&](const Kept& k) {
    return k.identity.expired() || (k.device == device && same(k.identity, identity) && k.texts->count <= count);
  });
  if (c.kept.size() >= kKeptDictionaries) {
    c.kept.erase(std::min_element(c.kept.begin(), c.kept.end(),
                                  [](const Kept& a, const Kept& b) { return a.last_use < b.last_use; }));
  }
  c.kept.push_back(Kept{device, identity, texts, ++c.uses});
  return texts;
}

void match_device_texts(const DeviceTexts& texts, int32_t count, const RunsPattern& pattern, int32_t* verdicts,
                        cudaStream_t stream) {
  count = std::min(count, texts.count);
  if (count <= 0) return;
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((static_cast<int64_t>(count) + threads - 1) / threads, 8192);
  match_texts_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(texts.offsets, texts.bytes, count,
                                                                             pattern, verdicts);
  TALLY_CUDA_CHECK_LAUNCH("match_texts_kernel");
}

}  // namespace tally::gpu
