#pragma once
// Column programs (common/column_program.hpp) evaluated on the device: one
// thread per row, the row filter and every input program of the row in one
// kernel, over device columns (a staged chunk's, resident in the column
// cache or copied). The per-row code is the header's run_program_row, the
// same the CPU engine runs on the host.
// Host-only header: builds without CUDA (gpu_stub.cpp throws).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "gpu/group_by.hpp"
#include "gpu/pipeline/program_limits.hpp"

namespace tally::gpu {

// Whether the spec's WHERE and input programs fit one launch of the
// evaluator (the GPU run evaluates them on the device then; otherwise the
// host does, before the chunks go to the device).
inline bool programs_fit_device(const tally::AggregationSpec& spec) {
  // Key programs follow one entry per value column (GpuRun::evaluate_programs).
  const size_t programs =
      spec.key_programs.empty() ? spec.value_programs.size() : spec.value_widths.size() + spec.key_programs.size();
  if (programs > static_cast<size_t>(kMaxDevicePrograms)) return false;
  size_t steps = 0;
  int32_t columns = 0;
  auto count = [&](const tally::ColumnProgram& p) {
    steps += p.steps.size();
    for (const tally::ProgramStep& s : p.steps)
      if (s.op == tally::ProgramOp::load) columns = std::max(columns, s.arg + 1);
  };
  count(spec.row_filter);
  for (const tally::ColumnProgram& p : spec.value_programs) count(p);
  for (const tally::ColumnProgram& p : spec.key_programs) count(p);
  const size_t all_columns = static_cast<size_t>(columns) + spec.lookup_columns.size();
  return steps <= static_cast<size_t>(kMaxDeviceSteps) && all_columns <= static_cast<size_t>(kMaxDeviceProgramColumns);
}

// Which kernel evaluates the programs: the interpreting one (`interpret`:
// SET jit = off), a compiled one where it is built (`compile`: its first
// statement queues it and interprets), or a compiled one built before the
// launch (`compile_now`: tests).
struct ProgramArgs;  // program_rows.cuh

enum class ProgramKernel { interpret, compile, compile_now };

class DeviceProgramEvaluator {
 public:
  DeviceProgramEvaluator();
  ~DeviceProgramEvaluator();
  DeviceProgramEvaluator(const DeviceProgramEvaluator&) = delete;
  DeviceProgramEvaluator& operator=(const DeviceProgramEvaluator&) = delete;

  // Enqueues on `stream` the evaluation of `filter` (may be empty) and of
  // `inputs` (empty programs skipped) over rows [0, rows) of the device
  // columns (widths[i]: how column i is stored). Results stay in device
  // arrays this object owns until the next call: mask() one byte per row
  // (1 = the filter passes; all 1 without a filter), input(i) 8 bytes per
  // row (int64 or double) and input_validity(i) one byte per row, the rows
  // the filter drops NULL. Error flags accumulate on the device over every
  // call of this object's life; errors() waits for `stream` and reads them.
  // The lookup columns set_lookups copied follow `columns`.
  void evaluate(const tally::ColumnProgram& filter, const std::vector<tally::ColumnProgram>& inputs,
                const std::vector<ColumnPointer>& columns, const std::vector<tally::ColumnWidth>& widths, int64_t rows,
                StreamHandle stream, ProgramKernel kernel = ProgramKernel::interpret);
  // Copies the lookup columns (AggregationSpec::lookup_columns, host
  // memory) to the device once, for every evaluate() after it.
  // A column made from keys (LookupColumn::from_keys) is scattered on the
  // device from them.
  void set_lookups(const std::vector<tally::LookupColumn>& host, StreamHandle stream);
  const uint8_t* mask() const;
  const void* input(size_t i) const;
  const uint8_t* input_validity(size_t i) const;
  uint32_t errors(StreamHandle stream);
  // For EXPLAIN: which kernels ran the launches so far, e.g. "compiled
  // (NVRTC 13.0), 3 of 3 launches", or why they were interpreted.
  std::string kernel_report() const;
  // Whether the last launch ran a compiled kernel.
  bool last_compiled() const;

  struct Impl;

 private:
  // The compiled kernel of these programs over the columns of `args` where
  // it is built (asking for it the first time they are launched), else nullptr.
  const void* compiled_kernel(const tally::ColumnProgram& filter, const std::vector<tally::ColumnProgram>& inputs,
                              const ProgramArgs& args, ProgramKernel kernel);
  std::unique_ptr<Impl> impl_;
};

// Host in, host out (tests, and chunks the host already has): evaluates the
// programs on the current device over host columns and returns the mask,
// the inputs (8 bytes per row each) and their validity, and the error flags.
struct DeviceProgramResult {
  std::vector<uint8_t> mask;
  std::vector<std::vector<int64_t>> inputs;
  std::vector<std::vector<uint8_t>> validity;
  uint32_t errors = 0;
  bool compiled = false;  // a compiled kernel ran them
};
DeviceProgramResult evaluate_programs_on_device(const tally::ColumnProgram& filter,
                                                const std::vector<tally::ColumnProgram>& inputs,
                                                const std::vector<tally::ColumnView>& columns, int64_t rows,
                                                const std::vector<tally::LookupColumn>& lookups = {},
                                                ProgramKernel kernel = ProgramKernel::interpret);

}  // namespace tally::gpu
