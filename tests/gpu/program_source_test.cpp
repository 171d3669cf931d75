// Compiled column-program kernels (gpu/pipeline/program_source.hpp): the
// source written for programs of every kind of step (short circuits, IN
// lists, lookups, CASE, dates, floats) compiles with NVRTC for sm_90, no
// device needed, and is the same for programs that differ only in their
// constants; steps that do not nest are refused (they stay interpreted); a
// compile under way is finished before the process exits.
// gpu_column_programs_test runs the compiled kernels on a device against
// the host evaluator.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <string>
#include <thread>

#include "gpu/pipeline/program_compiler.hpp"
#include "gpu/pipeline/program_source.hpp"

namespace tally {
namespace {

ProgramStep step(ProgramOp o, int32_t arg = 0, int64_t v = 0, double f = 0) { return ProgramStep{o, arg, v, f}; }

// WHERE a > 0 AND (b IN (3, 5, 9) OR extract(year from d) = 1996), with the
// short circuits the compiler emits: skip_if_false passes over the AND's
// right operand and the and_, skip_if_true over the year test and the or_.
ColumnProgram short_circuit_filter() {
  ColumnProgram p;
  p.steps = {step(ProgramOp::load, 0),       step(ProgramOp::const_int, 0, 0), step(ProgramOp::gt_int),
             step(ProgramOp::skip_if_false, 12),
             step(ProgramOp::load, 1),       step(ProgramOp::in_list, 3),      step(ProgramOp::const_int, 0, 3),
             step(ProgramOp::const_int, 0, 5), step(ProgramOp::const_int, 0, 9),
             step(ProgramOp::skip_if_true, 5),
             step(ProgramOp::load, 2),       step(ProgramOp::year_of, 0),      step(ProgramOp::const_int, 0, 1996),
             step(ProgramOp::eq_int),        step(ProgramOp::or_),             step(ProgramOp::and_)};
  return p;
}

TEST(ProgramSource, WritesEveryStepAndCompilesWithNvrtc) {
  ColumnProgram joined;  // CASE WHEN lookup(a) > 1.5 THEN b * 100 ELSE -b END over a lookup by key
  joined.result = ProgramResult::int64;
  joined.steps = {step(ProgramOp::load, 0), step(ProgramOp::lookup, 3), step(ProgramOp::lookup, 4),
                  step(ProgramOp::const_float, 0, 0, 1.5), step(ProgramOp::gt_float),
                  step(ProgramOp::load, 1), step(ProgramOp::const_int, 0, 100), step(ProgramOp::mul_int),
                  step(ProgramOp::load, 1), step(ProgramOp::neg_int), step(ProgramOp::choose),
                  step(ProgramOp::check_range, 64)};
  ColumnProgram floating;  // f * 2.5 - infinity, a NaN constant compared
  floating.result = ProgramResult::float64;
  floating.steps = {step(ProgramOp::load, 2), step(ProgramOp::int_to_float), step(ProgramOp::const_float, 0, 0, 2.5),
                    step(ProgramOp::mul_float), step(ProgramOp::const_float, 0, 0, -1.0 / 0.0),
                    step(ProgramOp::sub_float)};
  // Columns 0-2 of the table, 3 the build rows by hashed key, 4 a value of
  // those rows.
  const std::vector<int> shapes = {static_cast<int>(ColumnWidth::int64), static_cast<int>(ColumnWidth::int64),
                                   static_cast<int>(ColumnWidth::int32),
                                   static_cast<int>(ColumnWidth::int64) | kShapeHashed,
                                   static_cast<int>(ColumnWidth::float64)};
  const std::optional<std::string> source =
      gpu::program_kernel_source(short_circuit_filter(), {joined, ColumnProgram{}, floating}, shapes);
  ASSERT_TRUE(source.has_value());
  EXPECT_NE(source->find(gpu::kProgramKernelName), std::string::npos);
  EXPECT_NE(source->find("kInputs = 3"), std::string::npos);
  // The IN list's data is read from the launch's steps, after the filter's
  // first five steps.
  EXPECT_NE(source->find("steps + 6"), std::string::npos);
  // Constants are read from the launch's steps: programs that differ in
  // them alone share one source.
  ColumnProgram other_filter = short_circuit_filter();
  other_filter.steps[1].value = 17;
  ColumnProgram other_floating = floating;
  other_floating.steps[2].fvalue = -0.25;
  EXPECT_EQ(gpu::program_kernel_source(other_filter, {joined, ColumnProgram{}, other_floating}, shapes), source);
  ColumnProgram other_shape = short_circuit_filter();
  other_shape.steps[0].arg = 3;  // another column
  EXPECT_NE(gpu::program_kernel_source(other_shape, {joined, ColumnProgram{}, floating}, shapes), source);
  // Each load and lookup is written for its column's shape: another width
  // is another source.
  EXPECT_NE(source->find("(35), " + std::to_string(shapes[3]) + ">"), std::string::npos) << *source;
  std::vector<int> narrower = shapes;
  narrower[1] = static_cast<int>(ColumnWidth::int32);
  EXPECT_NE(gpu::program_kernel_source(short_circuit_filter(), {joined, ColumnProgram{}, floating}, narrower), source);
  const std::string state = gpu::program_compiler_state();
  if (state.rfind("NVRTC ", 0) != 0) GTEST_SKIP() << "programs are not compiled here: " << state;
  std::string cubin;
  EXPECT_EQ(gpu::program_cubin(*source, 90, cubin), "") << *source;
  EXPECT_GT(cubin.size(), 1000u);
}

TEST(ProgramSource, QueuedCompilesSettle) {
  // A source queued for the background threads, then asked for again with
  // a wait: one entry, settled; a kernel where a device loads it, else
  // the reason (no device here, or no NVRTC).
  ColumnProgram input;
  input.result = ProgramResult::int64;
  input.steps = {step(ProgramOp::load, 0), step(ProgramOp::const_int, 0, 3), step(ProgramOp::add_int)};
  const std::optional<std::string> source = gpu::program_kernel_source(ColumnProgram{}, {input}, {static_cast<int>(ColumnWidth::int64)});
  ASSERT_TRUE(source.has_value());
  const auto queued = gpu::compiled_programs(*source, 90, false);
  const auto waited = gpu::compiled_programs(*source, 90, true);
  EXPECT_EQ(queued.get(), waited.get());
  EXPECT_TRUE(waited->settled.load());
  EXPECT_TRUE(waited->kernel.load() != nullptr || !waited->failure.empty());
}

// Run as a process of its own by the test below (and by ctest, which
// runs disabled tests too): a compile queued and under way is finished
// before the process exits, whose handlers tear down libnvrtc's state.
TEST(ProgramSource, DISABLED_ExitAfterFinishedCompiles) {
  ColumnProgram input;
  input.result = ProgramResult::int64;
  input.steps = {step(ProgramOp::load, 0), step(ProgramOp::const_int, 0, 7), step(ProgramOp::mul_int)};
  const std::optional<std::string> source = gpu::program_kernel_source(ColumnProgram{}, {input}, {static_cast<int>(ColumnWidth::int64)});
  ASSERT_TRUE(source.has_value());
  (void)gpu::compiled_programs(*source, 90, false);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the compile under way
  gpu::finish_program_compiles();
}

TEST(ProgramSource, FinishedCompilesLeaveTheExitClean) {
  const std::string state = gpu::program_compiler_state();
  if (state.rfind("NVRTC ", 0) != 0) GTEST_SKIP() << "programs are not compiled here: " << state;
  for (int run = 0; run < 3; ++run) {
    const char* argv[] = {"program_source_test", "--gtest_also_run_disabled_tests",
                          "--gtest_filter=ProgramSource.DISABLED_ExitAfterFinishedCompiles", nullptr};
    pid_t child = 0;
    ASSERT_EQ(posix_spawn(&child, "/proc/self/exe", nullptr, nullptr, const_cast<char* const*>(argv), environ), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "run " << run << ": " << (WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                                          : "exit status " + std::to_string(WEXITSTATUS(status)));
  }
}

TEST(ProgramSource, RefusesStepsThatDoNotNest) {
  // A short circuit over a push: the stack's depth differs after it.
  ColumnProgram p;
  p.steps = {step(ProgramOp::load, 0), step(ProgramOp::skip_if_false, 1), step(ProgramOp::load, 1)};
  EXPECT_FALSE(gpu::program_kernel_source(p, {}, {0, 0}).has_value());
  // A short circuit past the program's end.
  p.steps = {step(ProgramOp::load, 0), step(ProgramOp::skip_if_false, 5)};
  EXPECT_FALSE(gpu::program_kernel_source(p, {}, {0, 0}).has_value());
  // A stack deeper than a program may use.
  ColumnProgram deep;
  for (int i = 0; i <= kProgramStackDepth; ++i) deep.steps.push_back(step(ProgramOp::const_int, 0, i));
  EXPECT_FALSE(gpu::program_kernel_source(ColumnProgram{}, {deep}, {}).has_value());
}

}  // namespace
}  // namespace tally
