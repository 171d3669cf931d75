#include "gpu/pipeline/program_source.hpp"


namespace tally::gpu {
namespace {

// The call of op_step for `step`, the launch's step `at`: its operation and
// arg (which columns, how many steps) constants, its value and fvalue read
// from the launch's steps, so that statements that differ only in their
// constants (a date range, a prepared statement's parameters) share one
// kernel. A load or lookup names the shape of the column it reads.
// `next` is the expression of the step after it.
std::string step_call(const tally::ProgramStep& step, int at, const std::vector<int>& shapes, const std::string& next) {
  const std::string read = "steps[" + std::to_string(at) + "]";
  std::string shape;
  if ((step.op == ProgramOp::load || step.op == ProgramOp::lookup) && step.arg >= 0 &&
      static_cast<size_t>(step.arg) < shapes.size())
    shape = ", " + std::to_string(shapes[static_cast<size_t>(step.arg)]);
  return "op_step<static_cast<ProgramOp>(" + std::to_string(static_cast<int>(step.op)) + ")" + shape + ">(" +
         std::to_string(step.arg) + ", " + read + ".value, " + read + ".fvalue, " + next +
         ", st, top, args.columns, row, error)";
}

class ProgramWriter {
 public:
  ProgramWriter(const std::vector<tally::ProgramStep>& steps, int offset, const std::vector<int>& shapes)
      : steps_(steps), offset_(offset), shapes_(shapes) {}

  // The body of one program's function: false where its steps do not nest.
  bool write(std::string& out) {
    out += "    ProgramSlot st[kProgramStackDepth];\n    int top = -1;\n";
    int top = -1;
    if (!write_steps(0, static_cast<int>(steps_.size()), top, 2, out)) return false;
    out += top >= 0 ? "    return st[" + std::to_string(top) + "];\n" : "    return ProgramSlot{0, 0, true};\n";
    return true;
  }

 private:
  // Steps [begin, end) from a stack whose top is `top` (updated).
  bool write_steps(int begin, int end, int& top, int indent, std::string& out) {
    const std::string pad(static_cast<size_t>(indent) * 2, ' ');
    for (int s = begin; s < end; ++s) {
      const tally::ProgramStep& step = steps_[static_cast<size_t>(s)];
      const std::string call =
          step_call(step, offset_ + s, shapes_,
                    step.op == ProgramOp::in_list ? "steps + " + std::to_string(offset_ + s + 1) : "nullptr");
      out += pad + "top = " + std::to_string(top) + ";\n";
      if (step.op == ProgramOp::skip_if_false || step.op == ProgramOp::skip_if_true) {
        const int skipped_end = s + 1 + step.arg;
        if (step.arg < 0 || skipped_end > end) return false;
        out += pad + "if (" + call + " == 0) {\n";
        int inner = top;
        if (!write_steps(s + 1, skipped_end, inner, indent + 1, out) || inner != top) return false;
        out += pad + "}\n";
        s = skipped_end - 1;
        continue;
      }
      out += pad + call + ";\n";
      if (step.op == ProgramOp::in_list) {
        if (step.arg < 0 || s + 1 + step.arg > end) return false;
        s += step.arg;  // its data, never run as steps
        continue;
      }
      top += tally::step_stack_change(step.op);
      if (top < -1 || top >= tally::kProgramStackDepth) return false;
    }
    return true;
  }

  const std::vector<tally::ProgramStep>& steps_;
  int offset_;  // where the steps sit in the launch's array (an in_list's data)
  const std::vector<int>& shapes_;
};

}  // namespace

std::optional<std::string> program_kernel_source(const tally::ColumnProgram& filter,
                                                 const std::vector<tally::ColumnProgram>& inputs,
                                                 const std::vector<int>& column_shapes) {
  std::string out =
      "#include \"gpu/pipeline/program_rows.cuh\"\n"
      "using namespace tally;\n"
      "namespace {\n"
      "struct CompiledPrograms {\n"
      "  static constexpr int kInputs = " + std::to_string(inputs.size()) + ";\n"
      "  __device__ __forceinline__ static ProgramSlot filter(const ProgramStep* steps, const gpu::ProgramArgs& args,\n"
      "                                                       size_t row, uint32_t* error) {\n";
  int offset = 0;
  if (!ProgramWriter(filter.steps, offset, column_shapes).write(out)) return std::nullopt;
  offset += static_cast<int>(filter.steps.size());
  out += "  }\n"
         "  __device__ __forceinline__ static ProgramSlot input(int i, const ProgramStep* steps,\n"
         "                                                      const gpu::ProgramArgs& args, size_t row,\n"
         "                                                      uint32_t* error) {\n"
         "    switch (i) {\n";
  for (size_t i = 0; i < inputs.size(); ++i) {
    out += "    case " + std::to_string(i) + ": {\n";
    if (!ProgramWriter(inputs[i].steps, offset, column_shapes).write(out)) return std::nullopt;
    out += "    }\n";
    offset += static_cast<int>(inputs[i].steps.size());
  }
  out += "    }\n"
         "    return ProgramSlot{0, 0, true};\n"
         "  }\n"
         "};\n"
         "}  // namespace\n"
         "extern \"C\" __global__ void " + std::string(kProgramKernelName) +
         "(const ProgramStep* __restrict__ steps, const __grid_constant__ gpu::ProgramArgs args, int64_t rows) {\n"
         "  gpu::program_rows<CompiledPrograms>(steps, args, rows);\n"
         "}\n";
  return out;
}

}  // namespace tally::gpu
