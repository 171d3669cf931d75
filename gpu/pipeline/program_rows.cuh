#pragma once
// The rows loop of the column-program kernels: one thread per row, the row
// filter and then every input program of the row. Shared by the interpreting
// kernel (column_programs.cu), which runs each program's steps from memory,
// and the compiled kernels (program_source.hpp writes them, NVRTC builds
// them), whose programs are straight-line code: both store the same mask,
// values, validity and error flags. Self-contained: NVRTC compiles it too.
#include "common/program_eval.hpp"
#include "gpu/pipeline/program_limits.hpp"

namespace tally::gpu {

struct ProgramArgs {
  tally::ProgramColumn columns[kMaxDeviceProgramColumns];
  int column_count = 0;
  int filter_begin = 0, filter_count = 0;  // steps of the row filter (count 0: none)
  int input_begin[kMaxDevicePrograms] = {};
  int input_count[kMaxDevicePrograms] = {};
  uint8_t input_float[kMaxDevicePrograms] = {};
  int inputs = 0;
  uint8_t* mask = nullptr;
  int64_t* values[kMaxDevicePrograms] = {};
  uint8_t* validity[kMaxDevicePrograms] = {};
  uint32_t* error = nullptr;
};

// `Programs` evaluates one row: filter(steps, args, row, error) and
// input(i, steps, args, row, error), with kInputs the number of inputs
// where it is fixed when compiled (-1: args.inputs).
template <class Programs>
__device__ __forceinline__ void program_rows(const tally::ProgramStep* steps, const ProgramArgs& args, int64_t rows) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int inputs = Programs::kInputs >= 0 ? Programs::kInputs : args.inputs;
  uint32_t error = 0;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += stride) {
    const size_t row = static_cast<size_t>(r);
    bool pass = true;
    if (args.filter_count > 0) pass = tally::program_passes(Programs::filter(steps, args, row, &error));
    args.mask[r] = pass ? 1 : 0;
#pragma unroll
    for (int i = 0; i < inputs; ++i) {
      if (args.input_count[i] == 0) continue;
      if (!pass) {
        // A row WHERE drops is not computed (no error from it) and stays NULL.
        args.values[i][r] = 0;
        args.validity[i][r] = 0;
        continue;
      }
      const tally::ProgramSlot v = Programs::input(i, steps, args, row, &error);
      args.values[i][r] = args.input_float[i] ? __double_as_longlong(v.f) : tally::program_int64(v, &error);
      args.validity[i][r] = v.null ? 0 : 1;
    }
  }
  if (error != 0) atomicOr(args.error, error);
}

// The programs as the interpreter runs them: each program's steps read
// from `steps` one at a time.
struct InterpretedPrograms {
  static constexpr int kInputs = -1;
  __device__ __forceinline__ static tally::ProgramSlot filter(const tally::ProgramStep* steps, const ProgramArgs& args,
                                                              size_t row, uint32_t* error) {
    return tally::run_program_row(steps + args.filter_begin, args.filter_count, args.columns, row, error);
  }
  __device__ __forceinline__ static tally::ProgramSlot input(int i, const tally::ProgramStep* steps,
                                                             const ProgramArgs& args, size_t row, uint32_t* error) {
    return tally::run_program_row(steps + args.input_begin[i], args.input_count[i], args.columns, row, error);
  }
};

}  // namespace tally::gpu
