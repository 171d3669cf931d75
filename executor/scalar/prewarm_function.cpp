#include "executor/scalar/prewarm_function.hpp"

#include <numeric>
#include <string>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "common/error.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/database.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar/relation_size_functions.hpp"
#include "executor/stored_width.hpp"
#include "executor/table_provider.hpp"
#include "storage/column_vector.hpp"

namespace tally::executor {

namespace {

// One chunk read (into the host's chunk cache) and its columns handed to
// the engine at the widths queries read them at (engine_aggregator_sink.cpp).
void prewarm_chunk(const TableSnapshot& table, const EngineTableSnapshot* engine_table, AggregateEngine* engine,
                   const std::vector<int>& all, size_t chunk) {
  const std::shared_ptr<const storage::ChunkBatch> batch = table.read_chunk(chunk, all);
  if (engine == nullptr || engine_table == nullptr) return;
  const std::optional<uint64_t> id = engine_table->chunk_id(chunk);
  if (!id) return;
  KeptChunk kept;
  kept.table = table.oid();
  kept.chunk = *id;
  kept.rows = batch->rows;
  std::vector<std::vector<int32_t>> widened;
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
  engine->keep(kept);
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
      cpu::parallel_tasks(cpu::WorkerPool::shared().workers() + 1, table->chunk_count(), [&](int, size_t chunk) {
        prewarm_chunk(*table, engine_table, engine, all, chunk);
      });
    }
    return static_cast<int64_t>(relation_bytes(*table) / 8192);
  }, false);
}

}  // namespace tally::executor
