#include "gpu/pipeline/program_compiler.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nvrtc.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "gpu/pipeline/program_headers.hpp"
#include "gpu/pipeline/program_source.hpp"

namespace tally::gpu {
namespace {

// <cstdint> and <cstddef> as the headers use them: NVRTC compiles without
// a standard library.
constexpr const char* kCstdint = R"(#pragma once
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#define INT32_MIN (-2147483647 - 1)
#define INT32_MAX 2147483647
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT64_MAX 9223372036854775807LL
)";
constexpr const char* kCstddef = "#pragma once\ntypedef decltype(sizeof(0)) size_t;\n";

// The NVRTC calls used, from libnvrtc opened at run time: a server built
// with CUDA runs on a host with the driver alone, interpreting.
struct Nvrtc {
  decltype(&nvrtcCreateProgram) create = nullptr;
  decltype(&nvrtcCompileProgram) compile = nullptr;
  decltype(&nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&nvrtcGetProgramLog) log = nullptr;
  decltype(&nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&nvrtcGetCUBIN) cubin = nullptr;
  decltype(&nvrtcDestroyProgram) destroy = nullptr;
  int major = 0, minor = 0;
  std::string missing;  // why not, where it did not load
};

template <class F>
bool resolve(void* library, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(library, name));
  return f != nullptr;
}

const Nvrtc& nvrtc() {
  static const Nvrtc loaded = [] {
    Nvrtc n;
    void* library = nullptr;
    // The toolkit's soname first (the loader's path), then its usual place.
    for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so"}) {
      if ((library = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    }
    if (library == nullptr) {
      n.missing = "libnvrtc (the CUDA toolkit's runtime compiler) is not installed";
      return n;
    }
    decltype(&nvrtcVersion) version = nullptr;
    if (!resolve(library, "nvrtcCreateProgram", n.create) || !resolve(library, "nvrtcCompileProgram", n.compile) ||
        !resolve(library, "nvrtcGetProgramLogSize", n.log_size) || !resolve(library, "nvrtcGetProgramLog", n.log) ||
        !resolve(library, "nvrtcGetCUBINSize", n.cubin_size) || !resolve(library, "nvrtcGetCUBIN", n.cubin) ||
        !resolve(library, "nvrtcDestroyProgram", n.destroy) || !resolve(library, "nvrtcVersion", version)) {
      n = Nvrtc{};
      n.missing = "libnvrtc lacks the calls used (too old)";
      return n;
    }
    version(&n.major, &n.minor);
    return n;
  }();
  return loaded;
}

// Builds `source` for `arch` into `out` (settled either way).
void build(const std::string& source, int arch, CompiledPrograms& out) {
  const auto started = std::chrono::steady_clock::now();
  auto settle = [&](std::string failure) {
    out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    out.failure = std::move(failure);
    out.settled.store(true, std::memory_order_release);
  };
  std::string cubin;
  if (std::string failure = program_cubin(source, arch, cubin); !failure.empty()) return settle(std::move(failure));
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
  cudaError_t e = cudaLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (e == cudaSuccess) e = cudaLibraryGetKernel(&kernel, library, kProgramKernelName);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // not this thread's next call's error
    return settle(std::string("loading the compiled kernel: ") + cudaGetErrorString(e));
  }
  // The library stays loaded for the life of the process, as the kernel does.
  out.kernel.store(reinterpret_cast<const void*>(kernel), std::memory_order_release);
  settle({});
}

// Compiles that run at once: the host's cores are the queries' too.
constexpr int kCompileThreads = 4;

// Most sources kept: a bound on what generated queries can make the
// process hold (each a loaded module); past it, programs are interpreted.
constexpr size_t kMaxCompiledSources = 1024;

struct Compiler {
  using Key = std::pair<int, std::string>;
  std::mutex mutex;
  std::condition_variable queued, settled;
  std::map<Key, std::shared_ptr<CompiledPrograms>> sources;
  std::deque<std::pair<Key, std::shared_ptr<CompiledPrograms>>> queue;
  std::vector<std::thread> workers;
  bool stopping = false;

  ~Compiler() { finish(); }

  // The workers finish the compile they hold and stop; the queued sources
  // are dropped (settled as not compiled, and forgotten, so that a later
  // request queues them again). Requests meanwhile are not queued.
  void finish() {
    std::vector<std::thread> stopped;
    {
      std::lock_guard lock(mutex);
      stopping = true;
      for (auto& [key, entry] : queue) {
        entry->failure = "not compiled: the engine that asked stopped";
        entry->settled.store(true, std::memory_order_release);
        sources.erase(key);
      }
      queue.clear();
      stopped.swap(workers);
    }
    queued.notify_all();
    for (std::thread& t : stopped) t.join();
    {
      std::lock_guard lock(mutex);
      stopping = false;
    }
    settled.notify_all();
  }

  void work() {
    // The lowest priority the kernel gives a thread (nice 19, this thread
    // only on Linux): a compile takes 0.2 to 1.5 s of a core, and the
    // queries on the host's cores, whose programs are interpreted meanwhile,
    // go first.
    (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
    std::unique_lock lock(mutex);
    for (;;) {
      queued.wait(lock, [&] { return stopping || !queue.empty(); });
      if (stopping) return;
      auto [key, entry] = std::move(queue.front());
      queue.pop_front();
      lock.unlock();
      build(key.second, key.first, *entry);
      lock.lock();
      settled.notify_all();
    }
  }
};

Compiler& compiler() {
  static Compiler c;
  return c;
}

}  // namespace

std::string program_cubin(const std::string& source, int arch, std::string& cubin) {
  const Nvrtc& n = nvrtc();
  if (n.create == nullptr) return n.missing;
  std::vector<const char*> texts = {kCstdint, kCstddef}, names = {"cstdint", "cstddef"};
  for (const ProgramHeader& h : program_headers()) {
    texts.push_back(h.text);
    names.push_back(h.name);
  }
  nvrtcProgram program = nullptr;
  if (n.create(&program, source.c_str(), "tally_programs.cu", static_cast<int>(texts.size()), texts.data(),
               names.data()) != NVRTC_SUCCESS) {
    return "NVRTC did not take the source";
  }
  const std::string target = "--gpu-architecture=sm_" + std::to_string(arch);
  // -default-device: the headers' constexpr helpers carry no __device__.
  // -pch (NVRTC 12.4 on): the headers, the same in every source, are
  // parsed once per process (a compile after the first takes about a third less).
  const char* options[] = {target.c_str(), "-std=c++17", "--device-int128", "-default-device", "-pch"};
  const bool pch = n.major > 12 || (n.major == 12 && n.minor >= 4);
  const nvrtcResult compiled = n.compile(program, pch ? 5 : 4, options);
  std::string log;
  size_t size = 0;
  cubin.clear();
  if (compiled == NVRTC_SUCCESS && n.cubin_size(program, &size) == NVRTC_SUCCESS) {
    cubin.resize(size);
    n.cubin(program, cubin.data());
  } else if (n.log_size(program, &size) == NVRTC_SUCCESS) {
    log.resize(size);
    n.log(program, log.data());
  }
  n.destroy(&program);
  if (cubin.empty()) return "NVRTC: " + log.substr(0, log.find('\n'));
  return {};
}

std::shared_ptr<const CompiledPrograms> compiled_programs(const std::string& source, int arch, bool wait) {
  Compiler& c = compiler();
  std::unique_lock lock(c.mutex);
  Compiler::Key key{arch, source};
  auto found = c.sources.find(key);
  if (found == c.sources.end()) {
    auto entry = std::make_shared<CompiledPrograms>();
    if (c.stopping || c.sources.size() >= kMaxCompiledSources) {
      entry->failure = c.stopping ? "not compiled: compiles are being finished"
                                  : "more distinct programs than the process keeps compiled";
      entry->settled.store(true);
      return entry;
    }
    found = c.sources.emplace(key, entry).first;
    if (wait) {
      lock.unlock();
      build(source, arch, *entry);
      lock.lock();
      c.settled.notify_all();
      return entry;
    }
    c.queue.emplace_back(std::move(key), entry);
    while (c.workers.size() < static_cast<size_t>(kCompileThreads)) c.workers.emplace_back([&c] { c.work(); });
    c.queued.notify_one();
  }
  std::shared_ptr<CompiledPrograms> entry = found->second;
  if (wait) c.settled.wait(lock, [&] { return entry->settled.load(std::memory_order_acquire); });
  return entry;
}

void warm_program_compiler(int arch) {
  tally::ColumnProgram input;
  input.result = tally::ProgramResult::int64;
  input.steps = {tally::ProgramStep{tally::ProgramOp::load, 0, 0, 0}};
  const std::vector<int> shapes = {static_cast<int>(tally::ColumnWidth::int64)};
  if (const std::optional<std::string> source = program_kernel_source(tally::ColumnProgram{}, {input}, shapes)) {
    (void)compiled_programs(*source, arch, false);
  }
}

void finish_program_compiles() { compiler().finish(); }

std::string program_compiler_state() {
  const Nvrtc& n = nvrtc();
  if (n.create == nullptr) return n.missing;
  return "NVRTC " + std::to_string(n.major) + "." + std::to_string(n.minor);
}

}  // namespace tally::gpu
