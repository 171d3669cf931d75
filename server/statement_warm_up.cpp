#include "server/statement_warm_up.hpp"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "executor/parser.hpp"
#include "executor/select_plan.hpp"
#include "executor/table_provider.hpp"

namespace tally::server {
namespace {

// Rows of the private relation: enough for two groups per key, far below the
// CPU engine's multi-thread threshold, so the run costs microseconds.
constexpr size_t kWarmUpRows = 64;
// Its oid: outside the catalog's range (it starts at 16384) so it can never
// alias a user table in anything keyed by oid.
constexpr uint32_t kWarmUpOid = 1;

// The shapes clients send first: a plain GROUP BY, count/sum/avg/min/max over
// each integer width and float8, HAVING on an aggregate with a negative
// constant, WHERE, an expression key, ORDER BY/LIMIT, count(DISTINCT), a
// global aggregate. Each names only the private relation.
constexpr const char* kStatements[] = {
    "SELECT g, min(v) FROM tally_warm_up GROUP BY g",
    "SELECT g, count(*), sum(v) FROM tally_warm_up GROUP BY g HAVING sum(v) < -95377",
    "SELECT g, count(v), avg(v), max(v) FROM tally_warm_up WHERE v > 0 GROUP BY g ORDER BY g LIMIT 10",
    "SELECT g, sum(b), avg(b), min(f), max(f), sum(f) FROM tally_warm_up GROUP BY 1 HAVING count(*) > 1",
    "SELECT g % 3 AS k, count(DISTINCT v), sum(v::int8) FROM tally_warm_up GROUP BY g % 3 ORDER BY 2 DESC",
    "SELECT count(*), sum(v), avg(f) FROM tally_warm_up WHERE g BETWEEN 1 AND 5 AND v <> 7",
};

template <class T>
storage::ColumnVector column(TypeId id, const std::vector<T>& values) {
  storage::ColumnVector c;
  c.type = SqlType{id};
  c.rows = values.size();
  c.data.resize(values.size() * sizeof(T));
  std::memcpy(c.data.data(), values.data(), c.data.size());
  return c;
}

std::shared_ptr<executor::MemoryTable> warm_up_table() {
  auto table = std::make_shared<executor::MemoryTable>(
      "tally_warm_up",
      std::vector<executor::TableColumn>{{"g", {TypeId::int4}}, {"v", {TypeId::int4}}, {"b", {TypeId::int8}},
                                         {"f", {TypeId::float8}}},
      kWarmUpOid);
  std::vector<int32_t> g(kWarmUpRows), v(kWarmUpRows);
  std::vector<int64_t> b(kWarmUpRows);
  std::vector<double> f(kWarmUpRows);
  for (size_t i = 0; i < kWarmUpRows; ++i) {
    g[i] = static_cast<int32_t>(i % 32);
    v[i] = static_cast<int32_t>(i * 7 % 19) - 9;
    b[i] = static_cast<int64_t>(i) * 1000003;
    f[i] = static_cast<double>(i) / 4;
  }
  auto chunk = std::make_shared<storage::ChunkBatch>();
  chunk->rows = kWarmUpRows;
  chunk->columns = {column(TypeId::int4, g), column(TypeId::int4, v), column(TypeId::int8, b),
                    column(TypeId::float8, f)};
  table->append(std::move(chunk));
  return table;
}

}  // namespace

StatementWarmUp warm_up_statement_path() {
  StatementWarmUp outcome;
  const auto start = std::chrono::steady_clock::now();
  try {
    executor::MemoryTableProvider tables;
    tables.put(warm_up_table());
    for (const char* sql : kStatements) {
      try {
        const auto parsed = executor::parse_sql_shared(sql);
        std::vector<uint32_t> parameter_types;
        executor::PlanContext plan_context;
        plan_context.tables = &tables;
        plan_context.parameter_types = &parameter_types;
        const auto plan = executor::plan_select(parsed->at(0).body(), plan_context);
        executor::ExecContext exec_context;
        exec_context.engine = "cpu";  // never the GPU engine: no tuner, no tuning cache
        exec_context.threads = 1;
        // The sessions' path (streamed result columns); the statement
        // timeline of this thread is off, so nothing is stamped or logged.
        exec_context.stream_to_client = true;
        (void)executor::run_select(*plan, exec_context);
        ++outcome.statements;
      } catch (const std::exception&) {
        ++outcome.failed;
      }
    }
  } catch (const std::exception&) {
    ++outcome.failed;
  }
  outcome.micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  return outcome;
}

}  // namespace tally::server
