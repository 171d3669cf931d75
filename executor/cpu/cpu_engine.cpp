// The CPU aggregation engine: starts one CpuRun (executor/cpu/cpu_run.hpp)
// per query, and keeps the heap's large free blocks between queries.
#include "common/column_program_run.hpp"
#include <atomic>
#include <chrono>
#include <memory>

#include "common/heap_retention.hpp"
#include "common/aggregate_engine.hpp"
#include "executor/cpu/cpu_run.hpp"
#include "executor/cpu/cpu_engine.hpp"
#include "executor/cpu/ordered_values_run.hpp"
#include "executor/cpu/tuple_key_run.hpp"

namespace tally::executor {
namespace {

// The engine's result arrays and the result columns made from them are the
// largest allocations of a query (1.4 GB at 8M groups): keep them in the
// heap between queries (common/heap_retention.hpp). A static initializer,
// since the policy must be set before any thread has its own arena; every
// program that can run the CPU engine links this file.
[[maybe_unused]] const bool kHeapRetained = (retain_large_allocations(), true);

// What earlier queries left free in the heap stays for the next one, up to
// retained_heap_bytes() resident. Measuring it can walk the heap's free lists
// (mallinfo2 takes tens of milliseconds with 100K free chunks), too much for
// every small query. So the heap is checked before runs whose estimate says
// they may allocate large arrays, and otherwise at most every
// kHeapCheckInterval.
constexpr uint64_t kHeapCheckGroups = uint64_t{1} << 16;  // 64K groups: arrays of 1-6 MB and more
constexpr std::chrono::seconds kHeapCheckInterval{10};

void release_heap_if_over_bound(uint64_t estimated_groups) {
  static std::atomic<int64_t> last_check_ms{INT64_MIN / 2};
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now().time_since_epoch()).count();
  const int64_t interval_ms = std::chrono::duration_cast<std::chrono::milliseconds>(kHeapCheckInterval).count();
  if (estimated_groups < kHeapCheckGroups && now_ms - last_check_ms.load(std::memory_order_relaxed) < interval_ms) return;
  last_check_ms.store(now_ms, std::memory_order_relaxed);
  release_retained_heap_over(retained_heap_bytes());
}

class CpuEngine final : public AggregateEngine {
 public:
  std::string name() const override { return "cpu"; }
  bool can_run(const AggregationSpec&) const override { return true; }
  std::unique_ptr<AggregationRun> start(const AggregationSpec& spec) override {
    release_heap_if_over_bound(spec.estimated_groups);
    // WHERE and input programs: evaluated on the host, then aggregated as
    // any chunk (the same code the GPU runs, common/column_program.hpp).
    if (has_programs(spec)) {
      return make_program_run(spec, [this](const AggregationSpec& inner) { return start(inner); });
    }
    // A key tuple gets its ids on the host; the run over them is this
    // engine's run of an int64 key.
    if (spec.key_tuple) {
      return std::make_unique<cpu::TupleKeyRun>(spec, [this](const AggregationSpec& inner) { return start(inner); });
    }
    if (cpu::has_ordered_aggregates(spec)) {
      return std::make_unique<cpu::OrderedValuesRun>(
          spec, [](const AggregationSpec& inner) { return std::make_unique<cpu::CpuRun>(inner); });
    }
    return std::make_unique<cpu::CpuRun>(spec);
  }
};

}  // namespace

std::unique_ptr<AggregateEngine> make_cpu_engine() { return std::make_unique<CpuEngine>(); }

}  // namespace tally::executor
