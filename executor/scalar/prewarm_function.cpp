#include "executor/scalar/prewarm_function.hpp"

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "common/error.hpp"
#include "executor/cancel_point.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/database.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar/relation_size_functions.hpp"
#include "executor/stored_width.hpp"
#include "executor/table_provider.hpp"
#include "storage/column_vector.hpp"

namespace tally::executor {

namespace {

// Chunks handed to the engine in the table's order, however the reads that
// precede them finish: the device's column cache places each column's copy
// right after the one it placed last (gpu/pipeline/column_regions.hpp), and
// only copies of consecutive chunks that are adjacent there run as one
// launch. Reads are taken in increasing order (parallel_tasks), so every
// chunk before one that waits is being read and will take its turn.
class ChunkTurns {
 public:
  // Runs `f` once every chunk before `chunk` has had its turn. A cancelled
  // statement ends the wait: a chunk claimed just before the cancel never
  // takes its turn.
  template <class F>
  void in_turn(size_t chunk, F&& f) {
    std::unique_lock lock(mutex_);
    while (!turn_changed_.wait_for(lock, std::chrono::milliseconds(10), [&] { return next_ == chunk; }))
      check_cancel_point();
    struct Pass {
      ChunkTurns& turns;
      ~Pass() {
        ++turns.next_;
        turns.turn_changed_.notify_all();
      }
    } pass{*this};
    f();
  }

 private:
  std::mutex mutex_;
  std::condition_variable turn_changed_;
  size_t next_ = 0;
};

// One chunk read (into the host's chunk cache) and its columns handed to
// the engine, in the chunk's turn, at the widths queries read them at
// (engine_aggregator_sink.cpp). A chunk whose read fails still takes its
// turn, so that the chunks after it take theirs.
void prewarm_chunk(const TableSnapshot& table, const EngineTableSnapshot* engine_table, AggregateEngine* engine,
                   const std::vector<int>& all, size_t chunk, ChunkTurns& turns) {
  if (engine == nullptr || engine_table == nullptr) {
    (void)table.read_chunk(chunk, all);  // no device to keep it: no turn to wait for
    return;
  }
  KeptChunk kept;
  std::vector<std::vector<int32_t>> widened;
  std::shared_ptr<const storage::ChunkBatch> batch;
  std::exception_ptr failed;
  try {
    batch = table.read_chunk(chunk, all);
    if (const std::optional<uint64_t> id = engine_table->chunk_id(chunk)) {
      kept.table = table.oid();
      kept.chunk = *id;
      kept.rows = batch->rows;
      widened.reserve(all.size());
      for (size_t i = 0; i < all.size(); ++i) {
        const storage::ColumnVector& col = batch->columns[i];
        const void* data =
            stored_narrower(col.type.id) ? static_cast<const void*>(widened.emplace_back(widened_to_int32(col)).data())
                                         : static_cast<const void*>(col.data.data());
        kept.columns.push_back(static_cast<uint32_t>(all[i]));
        kept.widths.push_back(stored_width(col.type.id));
        kept.host.push_back({data, col.has_nulls() ? col.validity.data() : nullptr});
      }
    }
  } catch (...) {
    failed = std::current_exception();
  }
  turns.in_turn(chunk, [&] {
    if (!failed && !kept.columns.empty()) engine->keep(kept);
  });
  if (failed) std::rethrow_exception(failed);
}

}  // namespace

ExprPtr bind_prewarm_call(const nlohmann::json& node, TableProvider& tables) {
  if (!node.contains("FuncCall")) return nullptr;
  const auto& call_node = node["FuncCall"];
  const auto& names = call_node.value("funcname", nlohmann::json::array());
  if (names.empty() || !names.back().contains("String") || names.back()["String"].value("sval", "") != "pg_prewarm")
    return nullptr;
  const auto args = call_node.value("args", nlohmann::json::array());
  if (args.empty() || args.size() > 2) return nullptr;
  const std::shared_ptr<const TableSnapshot> table = find_regclass_literal(args[0], tables);
  if (!table) return nullptr;
  if (args.size() == 2) {
    const auto& mode = args[1];
    const std::string text = mode.contains("A_Const") && mode["A_Const"].contains("sval")
                                 ? mode["A_Const"]["sval"].value("sval", std::string())
                                 : std::string();
    if (text != "buffer" && text != "read" && text != "prefetch") {
      throw Error(SqlState::invalid_parameter_value, "invalid prewarm type")
          .with_hint("Valid prewarm types are \"prefetch\", \"read\", and \"buffer\".");
    }
  }
  return scalar::call({TypeId::int8}, "pg_prewarm", {}, [table](std::span<const Value>) -> Value {
    const auto* engine_table = dynamic_cast<const EngineTableSnapshot*>(table.get());
    AggregateEngine* engine = engine_table != nullptr ? engine_table->gpu_engine() : nullptr;
    std::vector<int> all(table->columns().size());
    std::iota(all.begin(), all.end(), 0);
    if (!all.empty()) {
      ChunkTurns turns;
      cpu::parallel_tasks(cpu::WorkerPool::shared().workers() + 1, table->chunk_count(), [&](int, size_t chunk) {
        prewarm_chunk(*table, engine_table, engine, all, chunk, turns);
      });
    }
    return static_cast<int64_t>(relation_bytes(*table) / 8192);
  }, false);
}

}  // namespace tally::executor
