// End to end on the GPU machine, through the wire protocol (libpq): starts
// tallyd (fresh data directory), loads N rows of (g_k int4 uniform in
// [0, 2^k) for each k asked, v int4) with COPY, and for each G = 2^k runs
//   SELECT g_k, sum(v) FROM r GROUP BY g_k
// with the columns resident in the GPU's device column cache. Per G it
// prints the median end-to-end time over --runs runs after warm-up, the
// aggregation's device time of the same query (EXPLAIN ANALYZE: CUDA events
// around each chunk's launches), their ratio, the same query with
// SET tally.engine = cpu (same machine, same run) and the GPU's speed-up.
// Checks: the GPU and CPU results are the same rows, there are G of them, and
// the sum of all sums equals the total loaded; the plan says the GPU ran.
// The same query is also timed with a lean wire client (bench/cpu/wire_client.hpp:
// DataRows parsed in place, nothing materialized) whose rows must checksum to
// libpq's: at G = 2^16 libpq's per-row PGresult allocations are a large part
// of what a libpq-timed end-to-end figure measures. And once more, in phases
// (WireClient::query_phases): Parse+Bind until BindComplete, Execute
// until the first DataRow, the rest until ReadyForQuery; printed per G after
// the table with Execution Time next to them, so the time outside the GPU is
// split into planning, what precedes the first row, and streaming the rows.
//
// Usage: e2e_bench --tallyd PATH [--log2-rows 28] [--log2-groups 0,4,8,12,16]
//                  [--runs 5] [--chunk-rows 16777216] [--csv FILE] [--tallyd-args "..."]
//                  [--variant dense --launch-config tpb=256,bps=8,ff=50,rpt=4]  (fixed, no tuner)
#include <libpq-fe.h>
#include <unistd.h>

#include "bench/common/copy_text.hpp"
#include "bench/common/pg_copy.hpp"

#include "bench/cpu/wire_client.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tests/sql/pg_servers.hpp"

namespace {

PGconn* connect(const std::string& conninfo) {
  PGconn* c = PQconnectdb(conninfo.c_str());
  if (PQstatus(c) != CONNECTION_OK) {
    std::fprintf(stderr, "connect failed: %s\n", PQerrorMessage(c));
    std::exit(1);
  }
  return c;
}

PGresult* exec(PGconn* c, const std::string& sql, ExecStatusType want = PGRES_TUPLES_OK) {
  PGresult* r = PQexec(c, sql.c_str());
  if (PQresultStatus(r) != want && PQresultStatus(r) != PGRES_COMMAND_OK) {
    std::fprintf(stderr, "%s failed: %s\n", sql.c_str(), PQerrorMessage(c));
    std::exit(1);
  }
  return r;
}

// tallyd's process id: the process whose command line has "--port <port>"
// (TallyServer starts it through sh -c; -1 when not found).
int tallyd_pid(const std::string& conninfo) {
  const auto at = conninfo.find("port=");
  if (at == std::string::npos) return -1;
  const std::string want = "--port" + std::string(1, '\0') + conninfo.substr(at + 5, conninfo.find(' ', at) - at - 5);
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find("tallyd") != std::string::npos && cmdline.find(want) != std::string::npos) return std::stoi(name);
  }
  return -1;
}

// Minor page faults of a process so far (/proc/PID/stat field 10); -1 if unreadable.
long long minor_faults(int pid) {
  if (pid < 0) return -1;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 10 && fields >> field; ++i) {
    if (i == 10) return std::atoll(field.c_str());
  }
  return -1;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Value of row i: a mixed hash, so values are not constant (never time on
// zeros), negatives included; keys come from tally::bench::uniform_key.
int32_t value_of(uint64_t i) { return static_cast<int32_t>(tally::bench::mix(i * 2 + 1) % 2000001) - 1000000; }


struct Rows {
  std::vector<std::string> rows;  // "key|sum", sorted
  __int128 total = 0;
  uint64_t checksum = 0;  // WireClient's order-independent row checksum
};

Rows fetch(PGconn* c, const std::string& sql, double* seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  PGresult* r = exec(c, sql);
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Rows out;
  for (int i = 0; i < PQntuples(r); ++i) {
    out.rows.push_back(std::string(PQgetvalue(r, i, 0)) + "|" + PQgetvalue(r, i, 1));
    out.total += std::strtoll(PQgetvalue(r, i, 1), nullptr, 10);
    uint64_t h = tally::bench::kRowHashSeed;
    for (int f = 0; f < 2; ++f) h = tally::bench::field_hash(h, PQgetvalue(r, i, f), f);
    out.checksum += h;
  }
  PQclear(r);
  std::sort(out.rows.begin(), out.rows.end());
  return out;
}

// EXPLAIN ANALYZE: the engine line and the device time ("GPU: device time X ms").
struct Plan {
  std::string engine;
  double device_ms = -1;
  double span_ms = -1;  // the GPU's span of the query's launches ("device span X ms")
  std::string text;
};
Plan explain(PGconn* c, const std::string& sql) {
  PGresult* r = exec(c, "EXPLAIN ANALYZE " + sql);
  Plan p;
  for (int i = 0; i < PQntuples(r); ++i) {
    const std::string line = PQgetvalue(r, i, 0);
    p.text += line + "\n";
    if (line.rfind("Engine: ", 0) == 0) p.engine = line.substr(8, line.find(',') - 8);
    const auto at = line.find("device time ");
    if (at != std::string::npos) p.device_ms = std::atof(line.c_str() + at + 12);
    const auto sp = line.find("device span ");
    if (sp != std::string::npos) p.span_ms = std::atof(line.c_str() + sp + 12);
  }
  PQclear(r);
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  std::string tallyd, csv_path, tallyd_args, variant, launch_config;
  int log2_rows = 28, runs = 5;
  uint64_t chunk_rows = uint64_t{1} << 24;
  std::vector<int> log2_groups = {0, 4, 8, 12, 16};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--tallyd") tallyd = argv[i + 1];
    else if (flag == "--log2-rows") log2_rows = std::atoi(argv[i + 1]);
    else if (flag == "--runs") runs = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "--chunk-rows") chunk_rows = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--csv") csv_path = argv[i + 1];
    else if (flag == "--tallyd-args") tallyd_args = argv[i + 1];
    else if (flag == "--variant") variant = argv[i + 1];
    else if (flag == "--launch-config") launch_config = argv[i + 1];
    else if (flag == "--log2-groups") {
      log2_groups.clear();
      for (const char* p = argv[i + 1]; *p;) {
        log2_groups.push_back(std::atoi(p));
        while (*p && *p != ',') ++p;
        if (*p == ',') ++p;
      }
    }
  }
  if (tallyd.empty()) {
    std::fprintf(stderr, "usage: e2e_bench --tallyd PATH [--log2-rows N] [--log2-groups 0,4,..] [--runs R] [--chunk-rows N] [--csv FILE]\n");
    return 2;
  }
  const uint64_t rows = uint64_t{1} << log2_rows;
  tally::testing::TallyServer server(tallyd, "--chunk-rows " + std::to_string(chunk_rows) + " " + tallyd_args);
  std::printf("tallyd %s --chunk-rows %llu %s\n", tallyd.c_str(), static_cast<unsigned long long>(chunk_rows), tallyd_args.c_str());
  PGconn* c = connect(server.conninfo());

  std::string create = "CREATE TABLE r (";
  for (int k : log2_groups) create += "g" + std::to_string(k) + " int, ";
  create += "v int)";
  PQclear(exec(c, create));

  // Load with text COPY, 2^16 rows per CopyData message.
  std::printf("loading %llu rows (%zu key columns + v), chunks of %llu rows...\n", static_cast<unsigned long long>(rows),
              log2_groups.size(), static_cast<unsigned long long>(chunk_rows));
  std::fflush(stdout);
  __int128 loaded_total = 0;
  const auto load_start = std::chrono::steady_clock::now();
  {
    PGresult* r = PQexec(c, "COPY r FROM STDIN");
    if (PQresultStatus(r) != PGRES_COPY_IN) {
      std::fprintf(stderr, "COPY failed: %s\n", PQerrorMessage(c));
      return 1;
    }
    PQclear(r);
    constexpr uint64_t kBatchRows = 1 << 16;
    std::vector<char> buffer(kBatchRows * 12 * (log2_groups.size() + 1) + 64);
    for (uint64_t b = 0; b < rows; b += kBatchRows) {
      char* p = buffer.data();
      for (uint64_t i = b; i < std::min(rows, b + kBatchRows); ++i) {
        for (int k : log2_groups) {
          p = tally::bench::put_int(p, tally::bench::uniform_key(i, k));
          *p++ = '\t';
        }
        const int32_t v = value_of(i);
        loaded_total += v;
        p = tally::bench::put_int(p, v);
        *p++ = '\n';
      }
      if (PQputCopyData(c, buffer.data(), static_cast<int>(p - buffer.data())) != 1) {
        std::fprintf(stderr, "COPY data failed: %s\n", PQerrorMessage(c));
        return 1;
      }
    }
    if (std::string error; !tally::bench::finish_copy(c, &error)) {
      std::fprintf(stderr, "COPY failed: %s\n", error.c_str());
      return 1;
    }
  }
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  std::printf("COPY: %.1f s (%.2f M rows/s)\n\n", load_s, static_cast<double>(rows) / load_s / 1e6);

  FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
  tally::bench::WireClient lean(server.conninfo());
  tally::bench::WireClient phased(server.conninfo());
  // Page faults per query in tallyd: fresh (not reused) host memory for the
  // result costs a fault per 4 KiB page.
  const int server_pid = tallyd_pid(server.conninfo());
  std::string phase_lines;
  {
    std::vector<double> bind;
    for (int r = 0; r < 20; ++r) bind.push_back(phased.query_phases("SELECT 1").bind_us);
    char line[160];
    std::snprintf(line, sizeof line, "SELECT 1: Parse+Bind round trip %.1f us (median of 20: the floor of bind_us)\n", median(bind));
    phase_lines += line;
  }
  if (csv) std::fprintf(csv, "rows,groups,e2e_ms,device_ms,span_ms,ratio,lean_ms,lean_ratio,cpu_ms,speedup,gpu_cold_ms,check\n");
  std::printf("%-8s %10s %10s %8s %7s %10s %10s %10s %8s %11s %12s %s\n", "G", "e2e_ms", "device_ms", "span_ms", "ratio", "lean_ms",
              "lean_ratio", "cpu_ms", "speedup", "cold_ms", "e2e_Grow/s", "check");
  bool all_ok = true;
  std::string first_plan, plans;
  const std::string label;
  for (int k : log2_groups) {
    const std::string g = "g" + std::to_string(k);
    const std::string sql = "SELECT " + g + ", sum(v) FROM r GROUP BY " + g;
    PQclear(exec(c, "SET tally.engine = auto"));
    // A fixed variant and configuration (no tuner) isolates the engine's
    // per-chunk cost from the search's choices.
    if (!variant.empty()) PQclear(exec(c, "SET tally.variant = '" + variant + "'"));
    if (!launch_config.empty()) PQclear(exec(c, "SET tally.launch_config = '" + launch_config + "'"));
    double cold = 0, t = 0;
    const Rows gpu_rows = fetch(c, sql, &cold);  // first run: columns copied into the cache
    (void)fetch(c, sql, &t);                      // warm-up
    std::vector<double> e2e, device, span;
    for (int r = 0; r < runs; ++r) {
      (void)fetch(c, sql, &t);
      e2e.push_back(t * 1e3);
    }
    std::vector<double> lean_ms;
    tally::bench::WireClient::Result lean_result;
    const long long faults_before = minor_faults(server_pid);
    for (int r = 0; r < runs; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      lean_result = lean.query(sql, false);
      lean_ms.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3);
    }
    const long long faults_after = minor_faults(server_pid);
    const double faults_per_query =
        faults_before >= 0 && faults_after >= 0 ? static_cast<double>(faults_after - faults_before) / runs : -1;
    std::vector<double> bind_us, first_us, rest_us;
    bool phase_rows_ok = true;
    for (int r = 0; r < runs; ++r) {
      const auto p = phased.query_phases(sql);
      phase_rows_ok &= p.rows == gpu_rows.rows.size();
      bind_us.push_back(p.bind_us);
      first_us.push_back(p.first_row_us);
      rest_us.push_back(p.rest_us);
    }
    Plan plan;
    std::vector<double> exec_ms;
    // Every run's end path but the last (whose plan lines follow): the
    // host's result build varies from query to query
    // (bench/gpu/end_path_stats.py summarizes them per G and setting).
    std::string end_paths;
    for (int r = 0; r < runs; ++r) {
      plan = explain(c, sql);
      const auto at = plan.text.find("Execution Time: ");
      if (at != std::string::npos) exec_ms.push_back(std::atof(plan.text.c_str() + at + 16));
      device.push_back(plan.device_ms);
      span.push_back(plan.span_ms);
      const size_t path = plan.text.find("GPU: end path");
      if (r + 1 < runs && path != std::string::npos)
        end_paths += "  run " + std::to_string(r + 1) + ": " + plan.text.substr(path, plan.text.find('\n', path) - path) + "\n";
    }
    if (first_plan.empty()) first_plan = plan.text;
    // Where the time between device and end to end goes (sink, finalize
    // steps, server execution time), per G.
    plans += "G = 2^" + std::to_string(k) + label + ":\n" + end_paths;
    for (size_t at = 0; at < plan.text.size();) {
      const size_t end = plan.text.find('\n', at);
      const std::string line = plan.text.substr(at, end - at);
      if (line.find("GPU: finalize") != std::string::npos || line.find("Aggregate rows") != std::string::npos ||
          line.find("Execution Time") != std::string::npos || line.find("device time") != std::string::npos ||
          line.find("Tuning:") != std::string::npos || line.find("host per chunk") != std::string::npos ||
          line.find("enqueue per chunk") != std::string::npos || line.find("GPU: timeline") != std::string::npos ||
          line.find("Planner side") != std::string::npos || line.find("GPU: launches") != std::string::npos ||
          line.find("GPU: start path") != std::string::npos || line.find("GPU: end path") != std::string::npos)
        plans += "  " + line + "\n";
      if (end == std::string::npos) break;
      at = end + 1;
    }
    PQclear(exec(c, "SET tally.engine = cpu"));
    const Rows cpu_rows = fetch(c, sql, &t);  // warm-up (and the reference)
    std::vector<double> cpu;
    for (int r = 0; r < runs; ++r) {
      (void)fetch(c, sql, &t);
      cpu.push_back(t * 1e3);
    }
    const Plan cpu_plan = explain(c, sql);
    PQclear(exec(c, "SET tally.engine = auto"));

    std::string check = "ok";
    if (plan.engine != "gpu") check = "FAIL: ran on " + plan.engine;
    else if (cpu_plan.engine != "cpu") check = "FAIL: cpu run on " + cpu_plan.engine;
    else if (gpu_rows.rows != cpu_rows.rows) check = "FAIL: GPU rows != CPU rows";
    else if (gpu_rows.rows.size() != (uint64_t{1} << k)) check = "FAIL: " + std::to_string(gpu_rows.rows.size()) + " groups";
    else if (gpu_rows.total != loaded_total) check = "FAIL: sum of sums != loaded total";
    else if (lean_result.rows != gpu_rows.rows.size() || lean_result.checksum != gpu_rows.checksum)
      check = "FAIL: lean client rows differ from libpq's";
    else if (!phase_rows_ok) check = "FAIL: phase client row count differs";
    all_ok &= check == "ok";
    const double m_e2e = median(e2e), m_dev = median(device), m_cpu = median(cpu), m_lean = median(lean_ms);
    const double m_span = median(span);
    {
      char line[320];
      std::snprintf(line, sizeof line,
                    "2^%-6d bind %8.1f us | first row %8.3f ms (execution %6.3f ms, device %6.3f ms) | rest %7.3f ms | "
                    "sum %7.3f ms vs lean %7.3f ms | tallyd minor faults per lean query %.0f%s\n",
                    k, median(bind_us), median(first_us) / 1e3, median(exec_ms), m_dev, median(rest_us) / 1e3,
                    (median(bind_us) + median(first_us) + median(rest_us)) / 1e3, m_lean, faults_per_query, label.c_str());
      phase_lines += line;
    }
    std::printf("2^%-6d %10.3f %10.3f %8.3f %7.2f %10.3f %10.2f %10.2f %8.1f %11.1f %12.2f %s%s\n", k, m_e2e, m_dev, m_span,
                m_e2e / m_dev, m_lean, m_lean / m_dev, m_cpu, m_cpu / m_e2e, cold * 1e3,
                static_cast<double>(rows) / m_e2e / 1e6, check.c_str(), label.c_str());
    std::fflush(stdout);
    if (csv)
      std::fprintf(csv, "%llu,%llu,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.2f,%.3f,%s\n", static_cast<unsigned long long>(rows),
                   static_cast<unsigned long long>(uint64_t{1} << k), m_e2e, m_dev, m_span, m_e2e / m_dev, m_lean,
                   m_lean / m_dev, m_cpu, m_cpu / m_e2e, cold * 1e3, check.c_str());
  }
  std::printf("\nPhases through the phase client (medians of %d; WireClient::query_phases): bind = Parse+Bind\n"
              "round trip, first row = Execute until the first DataRow, rest = until ReadyForQuery:\n%s",
              runs, phase_lines.c_str());
  std::printf("\nEXPLAIN ANALYZE of the first query on the GPU:\n%s", first_plan.c_str());
  std::printf("\nPer G, the last EXPLAIN ANALYZE's timing lines:\n%s", plans.c_str());
  std::printf("e2e_ms: median wall time of PQexec (text results) over %d runs; device_ms: median of the engine's\n"
              "CUDA-event time over %d EXPLAIN ANALYZE runs (summed per launch); span_ms: median of the GPU's span of\n"
              "the query's launches (first launch's start to last launch's end, CUDA events); lean_ms: median wall time of the same query through\n"
              "the lean wire client (text results, rows parsed in place, checked against libpq's); ratios are\n"
              "to device_ms; cold_ms: first run (columns copied into the cache).\n",
              runs, runs);
  if (csv) std::fclose(csv);
  PQfinish(c);
  return all_ok ? 0 : 1;
}
