// In-process cost of a statement text the process has not seen, before its
// executor starts: libpg_query's parse with the JSON round trip
// (executor/parser.cpp) and the binder/planner (plan_select), for the
// GROUP BY ... HAVING shape of issue 6, each text new (the HAVING constant
// counts up), next to the same text again (the parse cache's hit) measured in
// the same run.
//
//   statement_analysis_bench [--texts N]   (default 3000)
//
// Prints median and p90 microseconds per stage. Every plan is checked: three
// result columns g int4, count int8, sum int8.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/sql_type.hpp"
#include "executor/parser.hpp"
#include "executor/select_plan.hpp"
#include "executor/table_provider.hpp"

namespace {

using namespace tally;
using Clock = std::chrono::steady_clock;

double micros(Clock::time_point from) { return std::chrono::duration<double, std::micro>(Clock::now() - from).count(); }

struct Quantiles {
  double median = 0, p90 = 0;
};

Quantiles quantiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v[v.size() * 9 / 10]};
}

}  // namespace

int main(int argc, char** argv) {
  size_t texts = 3000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--texts") == 0 && i + 1 < argc) texts = std::strtoul(argv[++i], nullptr, 10);
  }
  if (texts < 10) texts = 10;
  executor::MemoryTableProvider tables;
  tables.put(std::make_shared<executor::MemoryTable>(
      "r", std::vector<executor::TableColumn>{{"g", {TypeId::int4}}, {"v", {TypeId::int4}}}));

  std::vector<double> parse_new, plan_new, parse_hit;
  size_t bad = 0;
  for (size_t i = 0; i < texts; ++i) {
    const std::string sql =
        "SELECT g, count(*), sum(v) FROM r GROUP BY g HAVING sum(v) < -" + std::to_string(100000 + i);
    auto t0 = Clock::now();
    const auto parsed = executor::parse_sql_shared(sql);
    parse_new.push_back(micros(t0));
    t0 = Clock::now();
    (void)executor::parse_sql_shared(sql);
    parse_hit.push_back(micros(t0));
    std::vector<uint32_t> parameter_types;
    executor::PlanContext context;
    context.tables = &tables;
    context.parameter_types = &parameter_types;
    t0 = Clock::now();
    const auto plan = executor::plan_select(parsed->at(0).body(), context);
    plan_new.push_back(micros(t0));
    const auto fields = executor::select_fields(*plan);
    if (fields.size() != 3 || fields[0].type_oid != oid::int4 || fields[1].type_oid != oid::int8 ||
        fields[2].type_oid != oid::int8) {
      ++bad;
    }
  }
  const auto pn = quantiles(parse_new), pl = quantiles(plan_new), ph = quantiles(parse_hit);
  std::printf("%zu new texts: SELECT g, count(*), sum(v) FROM r GROUP BY g HAVING sum(v) < -N\n", texts);
  std::printf("%-34s %10s %10s\n", "stage", "median us", "p90 us");
  std::printf("%-34s %10.1f %10.1f\n", "parse, new text (JSON round trip)", pn.median, pn.p90);
  std::printf("%-34s %10.1f %10.1f\n", "plan_select, new text", pl.median, pl.p90);
  std::printf("%-34s %10.1f %10.1f\n", "parse + plan, new text", pn.median + pl.median, pn.p90 + pl.p90);
  std::printf("%-34s %10.2f %10.2f\n", "parse, same text again (cache hit)", ph.median, ph.p90);
  std::printf("plans with wrong result columns: %zu\n", bad);
  return bad == 0 ? 0 : 1;
}
