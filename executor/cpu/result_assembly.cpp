// CpuRun's result arrays: the compact result form and sizing and moving the
// arrays the variants write groups into.
#include <cstring>
#include <functional>
#include <utility>

#include "executor/cpu/cpu_run.hpp"
#include "executor/cpu/parallel.hpp"

namespace tally::executor::cpu {

// The compact result form (AggregationSpec::compact_result), fixed before
// the first group is emitted: aggregates that counted every row of their
// group (no FILTER, no NULL input seen) give one count array, and int64
// sums stay int64. One pass only: a later pass could still widen a sum.
void CpuRun::choose_result_form() {
  count_free_.assign(spec_.aggregates.size(), 0);
  if (!spec_.compact_result || passes_ != 1) return;
  int first = -1;
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    compact_sum_[a] = narrow_[a];
    if (!counts_group_rows_[a]) continue;
    if (first < 0) {
      first = static_cast<int>(a);
      continue;
    }
    count_source_[a] = first;
    const PartialOp op = spec_.aggregates[a].op;
    count_free_[a] = op == PartialOp::count_rows || op == PartialOp::count_valid || op == PartialOp::sum_int ||
                     op == PartialOp::min_int || op == PartialOp::max_int;
  }
}

// Resizes every result array the aggregates use to `groups` entries.
// grow_result for an empty result_, every array zero-filled (first touched)
// on its own task: the page faults of hundreds of MB spread over the threads.
void CpuRun::grow_result_parallel(size_t groups) {
  reserve_result(groups);
  result_.states.assign(spec_.aggregates.size(), {});
  std::vector<std::function<void()>> tasks;
  tasks.emplace_back([&] { result_.keys.resize(groups); });
  tasks.emplace_back([&] { result_.key_valid.resize(groups); });
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    visit_result_fields(a, [&](auto member) {
      tasks.emplace_back([&, a, member] { (result_.states[a].*member).resize(groups); });
    });
  }
  parallel_tasks(threads_, tasks.size(), [&](int, size_t t) { tasks[t](); });
}

// Moves result rows [from, from + n) to [to, to + n) (to < from) in every array.
void CpuRun::move_result_rows(size_t from, size_t to, size_t n) {
  auto move = [&](auto& v) { std::memmove(v.data() + to, v.data() + from, n * sizeof(v[0])); };
  move(result_.keys);
  move(result_.key_valid);
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    visit_result_fields(a, [&](auto member) { move(result_.states[a].*member); });
  }
}

void CpuRun::shrink_result(size_t groups) {
  result_.keys.resize(groups);
  result_.key_valid.resize(groups);
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    visit_result_fields(a, [&](auto member) { (result_.states[a].*member).resize(groups); });
  }
}

// Holds the result arrays' bytes for `groups` against the statement's
// budget, before they grow.
void CpuRun::reserve_result(size_t groups) {
  if (groups * result_bytes_per_group_ <= result_memory_.bytes()) return;
  if (result_bytes_per_group_ == 0) {
    result_bytes_per_group_ = sizeof(int64_t) + sizeof(uint8_t);  // keys, key_valid
    for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
      visit_result_fields(a, [&](auto member) {
        result_bytes_per_group_ += sizeof((std::declval<PartialStates&>().*member)[0]);
      });
    }
  }
  result_memory_.resize(groups * result_bytes_per_group_);
}

void CpuRun::grow_result(size_t groups) {
  reserve_result(groups);
  if (result_.states.empty()) result_.states.resize(spec_.aggregates.size());
  result_.keys.resize(groups);
  result_.key_valid.resize(groups);
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    visit_result_fields(a, [&](auto member) { (result_.states[a].*member).resize(groups); });
  }
}

}  // namespace tally::executor::cpu
