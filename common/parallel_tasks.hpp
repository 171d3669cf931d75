#pragma once
// A way for common/ and gpu/ code to run host work on the executor's
// threads without depending on executor/ (the layer above them): the
// executor hands in a function that runs task(0) .. task(tasks - 1) on up to
// `threads` threads (0 = every hardware thread, as AggregationSpec::threads
// says; executor/cpu/parallel.hpp's parallel_tasks over its worker pool),
// and returns once every task has run, rethrowing the first exception a
// task threw. Tasks are taken in order by whichever thread is free; they
// must not depend on each other.
#include <cstddef>
#include <functional>

namespace tally {

using ParallelTasks = std::function<void(int threads, size_t tasks, const std::function<void(size_t task)>& run)>;

// Runs the tasks through `parallel`, or one after the other on the calling
// thread when there is none (or one thread, or one task).
inline void run_tasks(const ParallelTasks& parallel, int threads, size_t tasks, const std::function<void(size_t)>& run) {
  if (tasks == 0) return;
  if (parallel && tasks > 1 && threads != 1) {
    parallel(threads, tasks, run);
    return;
  }
  for (size_t t = 0; t < tasks; ++t) run(t);
}

}  // namespace tally
