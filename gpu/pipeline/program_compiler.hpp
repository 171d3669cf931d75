#pragma once
// Compiled column-program kernels: the sources program_source.hpp writes,
// built by NVRTC into kernels for a device's architecture and kept for the
// life of the process, one per source. NVRTC is the CUDA toolkit's
// libnvrtc, opened at run time: where it is missing, or refuses a source,
// the interpreting kernel runs and the kernel's state says why.
//
// A source is compiled on a background thread (a few work at once) while
// the statement that asked runs the interpreting kernel (a compile takes
// about a hundred milliseconds to a second, more than most launches it
// would speed up): the next statement with the same programs launches the
// compiled kernel. Tests ask to wait for it instead.
// Host-only header: builds without CUDA.
#include <atomic>
#include <memory>
#include <string>

namespace tally::gpu {

struct CompiledPrograms {
  std::atomic<const void*> kernel{nullptr};  // a cudaKernel_t once built; nullptr until then, or never
  std::atomic<bool> settled{false};          // built, or failed (then `failure` says why)
  std::string failure;                       // written before settled is set
  double compile_ms = 0;                     // NVRTC's time and the load's, written before settled
};

// The compiled kernel of `source` for architecture `arch` (major * 10 +
// minor): queued for the background thread at the first request, or built
// before the call returns where `wait`.
std::shared_ptr<const CompiledPrograms> compiled_programs(const std::string& source, int arch, bool wait);

// Compiles `source` for architecture `arch` into `cubin` (no device
// needed): empty, or why it did not compile.
std::string program_cubin(const std::string& source, int arch, std::string& cubin);

// Starts NVRTC in the background (its library, its parse of the headers)
// with a program of one step, so that the first statement's compile does
// not pay for it: the GPU engine's start-up.
void warm_program_compiler(int arch);

// Waits for the compiles under way and drops the queued ones (their
// statements went on interpreting; a later request queues a source again).
// An engine calls it as it goes: a compile must not be running when the
// process exits, whose handlers tear down libnvrtc's state under it (the
// process then crashed or hung in its exit).
void finish_program_compiles();

// "NVRTC <version>", or why programs cannot be compiled here.
std::string program_compiler_state();

}  // namespace tally::gpu
