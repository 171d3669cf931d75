#pragma once
// The CUDA source of a compiled column-program kernel: the row filter and
// the input programs of one launch (as DeviceProgramEvaluator lays them
// out: the filter's steps first, then each input's) written as straight-line
// calls of op_step (common/program_eval.hpp), each step's operation a
// template argument, its arg a constant and the stack's depth known, so that
// no step is dispatched and the stack stays in registers; the steps' values
// are read from the launch's steps, so one source serves every statement of
// the same shape. A load or lookup is written for the shape of the column it
// reads (column_shape: its width, a lookup's form), given per column of the
// launch in the order the steps' args index them. A short circuit becomes
// an `if` around the steps it passes over. The kernel (kProgramKernelName)
// takes the interpreting kernel's arguments and stores what it stores.
// Host-only: builds without CUDA.
#include <optional>
#include <string>
#include <vector>

#include "common/column_program.hpp"

namespace tally::gpu {

inline constexpr const char* kProgramKernelName = "tally_programs";

// nullopt where a program's steps do not nest as the column-program
// compiler writes them (a short circuit that leaves the stack at another
// depth, a stack past kProgramStackDepth): those stay interpreted.
std::optional<std::string> program_kernel_source(const tally::ColumnProgram& filter,
                                                 const std::vector<tally::ColumnProgram>& inputs,
                                                 const std::vector<int>& column_shapes);

}  // namespace tally::gpu
