// End to end on the GPU machine, through the wire protocol (libpq): starts
// tallyd (fresh data directory), loads N rows of (g_k int4 uniform in
// [0, 2^k) for each k asked, v int4) with COPY (formatted on --gen-threads
// threads, no file), starts tallyd again on the loaded data with each
// configuration's arguments in turn (--tallyd-args, given once per
// configuration: "--gpu-devices 0", then "--gpu-devices all"), and for each G = 2^k runs
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
// With two configurations or more, a last table gives per G each one's e2e
// and device-span medians and the first's over each other's (the speed-up);
// every configuration's rows must equal the first's. The CPU engine runs
// (--cpu-runs of them, default --runs) in the first configuration only.
//
// Usage: e2e_bench --tallyd PATH [--log2-rows 28] [--log2-groups 0,4,8,12,16]
//                  [--runs 5] [--cpu-runs R] [--chunk-rows 16777216] [--csv FILE] [--gen-threads T]
//                  [--tallyd-args "..."]...
//                  [--variant dense --launch-config tpb=256,bps=8,ff=50,rpt=4]  (fixed, no tuner)
#include <libpq-fe.h>
#include <unistd.h>

#include "bench/common/copy_text.hpp"
#include "bench/common/ordered_blocks.hpp"
#include "bench/common/pg_copy.hpp"

#include "bench/cpu/wire_client.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
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

// EXPLAIN ANALYZE: the engine line and the device time ("GPU: device time X ms";
// the largest of the devices' when the query ran on several).
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
    // Over several GPUs each device has its lines: the query waits for the slowest.
    const auto at = line.find("device time ");
    if (at != std::string::npos) p.device_ms = std::max(p.device_ms, std::atof(line.c_str() + at + 12));
    const auto sp = line.find("device span ");
    if (sp != std::string::npos) p.span_ms = std::max(p.span_ms, std::atof(line.c_str() + sp + 12));
  }
  PQclear(r);
  return p;
}

struct Options {
  std::string tallyd, csv_path, variant, launch_config;
  std::vector<std::string> configurations;  // tallyd's arguments, one entry per configuration
  int log2_rows = 28, runs = 5, cpu_runs = -1;  // cpu_runs -1: as many as runs
  unsigned gen_threads = std::clamp(std::thread::hardware_concurrency() / 4, 1u, 8u);
  uint64_t chunk_rows = uint64_t{1} << 24;
  std::vector<int> log2_groups = {0, 4, 8, 12, 16};
};

// Loads the rows with text COPY (one CopyData message per 2^16 rows),
// formatted on o.gen_threads threads while this one sends; returns the sum
// of every v loaded.
__int128 load(PGconn* c, const Options& o, uint64_t rows) {
  PGresult* r = PQexec(c, "COPY r FROM STDIN");
  if (PQresultStatus(r) != PGRES_COPY_IN) {
    std::fprintf(stderr, "COPY failed: %s\n", PQerrorMessage(c));
    std::exit(1);
  }
  PQclear(r);
  constexpr uint64_t kBatchRows = 1 << 16;
  std::mutex total_mutex;
  __int128 total = 0;
  tally::bench::OrderedBlocks blocks((rows + kBatchRows - 1) / kBatchRows, o.gen_threads,
                                     [&](uint64_t block, std::string& out) {
                                       const uint64_t first = block * kBatchRows, end = std::min(rows, first + kBatchRows);
                                       out.resize((end - first) * 12 * (o.log2_groups.size() + 1));
                                       char* p = out.data();
                                       int64_t sum = 0;
                                       for (uint64_t i = first; i < end; ++i) {
                                         for (int k : o.log2_groups) {
                                           p = tally::bench::put_int(p, tally::bench::uniform_key(i, k));
                                           *p++ = '\t';
                                         }
                                         const int32_t v = value_of(i);
                                         sum += v;
                                         p = tally::bench::put_int(p, v);
                                         *p++ = '\n';
                                       }
                                       out.resize(static_cast<size_t>(p - out.data()));
                                       std::lock_guard lock(total_mutex);
                                       total += sum;
                                     });
  const auto start = std::chrono::steady_clock::now();
  auto last = start;
  for (std::string block; blocks.next(block);) {
    if (PQputCopyData(c, block.data(), static_cast<int>(block.size())) != 1) {
      std::fprintf(stderr, "COPY data failed: %s\n", PQerrorMessage(c));
      std::exit(1);
    }
    if (std::chrono::steady_clock::now() - last > std::chrono::seconds(10)) {
      last = std::chrono::steady_clock::now();
      const double s = std::chrono::duration<double>(last - start).count();
      const double done = static_cast<double>(std::min(rows, blocks.blocks_read() * kBatchRows));
      std::fprintf(stderr, "[e2e] COPY %.1fM of %.1fM rows in %.0f s (%.2fM rows/s)\n", done / 1e6, rows / 1e6, s,
                   done / s / 1e6);
    }
  }
  if (std::string error; !tally::bench::finish_copy(c, &error)) {
    std::fprintf(stderr, "COPY failed: %s\n", error.c_str());
    std::exit(1);
  }
  return total;
}

// One configuration's figures at one G.
struct Point {
  double e2e_ms = 0, device_ms = 0, span_ms = 0;
  Rows rows;  // the GPU's answer
  std::string check;
};

// Runs the sweep on configuration `config` (tallyd already started on the
// loaded data). The first configuration's CPU-engine answers (o.cpu_runs > 0)
// become `cpu_reference`; a later configuration's answers are compared with
// the first's (`first`, empty for the first itself).
std::vector<Point> run_configuration(const Options& o, size_t config, const tally::testing::TallyServer& server,
                                     uint64_t rows, __int128 loaded_total, FILE* csv,
                                     std::vector<Rows>& cpu_reference, const std::vector<Point>& first) {
  PGconn* c = connect(server.conninfo());
  tally::bench::WireClient lean(server.conninfo());
  tally::bench::WireClient phased(server.conninfo());
  // Page faults per query in tallyd: fresh (not reused) host memory for the
  // result costs a fault per 4 KiB page.
  const int server_pid = tallyd_pid(server.conninfo());
  const int cpu_runs = config == 0 ? (o.cpu_runs < 0 ? o.runs : o.cpu_runs) : 0;
  const std::string label = o.configurations.size() > 1 ? " C" + std::to_string(config + 1) : "";
  std::string phase_lines;
  {
    std::vector<double> bind;
    for (int r = 0; r < 20; ++r) bind.push_back(phased.query_phases("SELECT 1").bind_us);
    char line[160];
    std::snprintf(line, sizeof line, "SELECT 1: Parse+Bind round trip %.1f us (median of 20: the floor of bind_us)\n", median(bind));
    phase_lines += line;
  }
  std::printf("%-8s %10s %10s %8s %7s %10s %10s %10s %8s %11s %12s %s\n", "G", "e2e_ms", "device_ms", "span_ms", "ratio", "lean_ms",
              "lean_ratio", "cpu_ms", "speedup", "cold_ms", "e2e_Grow/s", "check");
  std::vector<Point> points;
  std::string first_plan, plans;
  for (size_t gi = 0; gi < o.log2_groups.size(); ++gi) {
    const int k = o.log2_groups[gi];
    const int runs = o.runs;
    const std::string g = "g" + std::to_string(k);
    const std::string sql = "SELECT " + g + ", sum(v) FROM r GROUP BY " + g;
    PQclear(exec(c, "SET tally.engine = auto"));
    // A fixed variant and configuration (no tuner) isolates the engine's
    // per-chunk cost from the search's choices.
    if (!o.variant.empty()) PQclear(exec(c, "SET tally.variant = '" + o.variant + "'"));
    if (!o.launch_config.empty()) PQclear(exec(c, "SET tally.launch_config = '" + o.launch_config + "'"));
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
          line.find("GPU: start path") != std::string::npos || line.find("GPU: end path") != std::string::npos ||
          line.find("Partial states merged") != std::string::npos)
        plans += "  " + line + "\n";
      if (end == std::string::npos) break;
      at = end + 1;
    }
    // The CPU engine's answer and time (the first configuration only: later
    // ones are compared with the first's answers).
    std::vector<double> cpu;
    Plan cpu_plan;
    if (cpu_runs > 0) {
      PQclear(exec(c, "SET tally.engine = cpu"));
      cpu_reference.push_back(fetch(c, sql, &t));  // warm-up (and the reference)
      for (int r = 0; r < cpu_runs; ++r) {
        (void)fetch(c, sql, &t);
        cpu.push_back(t * 1e3);
      }
      cpu_plan = explain(c, sql);
      PQclear(exec(c, "SET tally.engine = auto"));
    }

    std::string check = "ok";
    if (plan.engine != "gpu") check = "FAIL: ran on " + plan.engine;
    else if (cpu_runs > 0 && cpu_plan.engine != "cpu") check = "FAIL: cpu run on " + cpu_plan.engine;
    else if (gi < cpu_reference.size() && gpu_rows.rows != cpu_reference[gi].rows) check = "FAIL: GPU rows != CPU rows";
    else if (gi < first.size() && gpu_rows.rows != first[gi].rows.rows) check = "FAIL: rows != C1's rows";
    else if (gpu_rows.rows.size() != (uint64_t{1} << k)) check = "FAIL: " + std::to_string(gpu_rows.rows.size()) + " groups";
    else if (gpu_rows.total != loaded_total) check = "FAIL: sum of sums != loaded total";
    else if (lean_result.rows != gpu_rows.rows.size() || lean_result.checksum != gpu_rows.checksum)
      check = "FAIL: lean client rows differ from libpq's";
    else if (!phase_rows_ok) check = "FAIL: phase client row count differs";
    const double m_e2e = median(e2e), m_dev = median(device), m_lean = median(lean_ms);
    const double m_cpu = cpu.empty() ? -1 : median(cpu);
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
    char cpu_text[32] = "-", speedup_text[32] = "-";
    if (m_cpu >= 0) {
      std::snprintf(cpu_text, sizeof cpu_text, "%.2f", m_cpu);
      std::snprintf(speedup_text, sizeof speedup_text, "%.1f", m_cpu / m_e2e);
    }
    std::printf("2^%-6d %10.3f %10.3f %8.3f %7.2f %10.3f %10.2f %10s %8s %11.1f %12.2f %s%s\n", k, m_e2e, m_dev, m_span,
                m_e2e / m_dev, m_lean, m_lean / m_dev, cpu_text, speedup_text, cold * 1e3,
                static_cast<double>(rows) / m_e2e / 1e6, check.c_str(), label.c_str());
    std::fflush(stdout);
    if (csv)
      std::fprintf(csv, "%llu,%llu,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.2f,%.3f,%s,%zu\n", static_cast<unsigned long long>(rows),
                   static_cast<unsigned long long>(uint64_t{1} << k), m_e2e, m_dev, m_span, m_e2e / m_dev, m_lean,
                   m_lean / m_dev, m_cpu, m_cpu >= 0 ? m_cpu / m_e2e : -1, cold * 1e3, check.c_str(), config + 1);
    points.push_back({m_e2e, m_dev, m_span, gpu_rows, check});
  }
  std::printf("\nPhases through the phase client (medians of %d; WireClient::query_phases): bind = Parse+Bind\n"
              "round trip, first row = Execute until the first DataRow, rest = until ReadyForQuery:\n%s",
              o.runs, phase_lines.c_str());
  std::printf("\nEXPLAIN ANALYZE of the first query on the GPU%s:\n%s", label.c_str(), first_plan.c_str());
  std::printf("\nPer G, the last EXPLAIN ANALYZE's timing lines:\n%s", plans.c_str());
  PQfinish(c);
  return points;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--tallyd") o.tallyd = argv[i + 1];
    else if (flag == "--log2-rows") o.log2_rows = std::atoi(argv[i + 1]);
    else if (flag == "--runs") o.runs = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "--cpu-runs") o.cpu_runs = std::max(0, std::atoi(argv[i + 1]));
    else if (flag == "--gen-threads") o.gen_threads = static_cast<unsigned>(std::max(1, std::atoi(argv[i + 1])));
    else if (flag == "--chunk-rows") o.chunk_rows = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--csv") o.csv_path = argv[i + 1];
    else if (flag == "--tallyd-args") o.configurations.push_back(argv[i + 1]);
    else if (flag == "--variant") o.variant = argv[i + 1];
    else if (flag == "--launch-config") o.launch_config = argv[i + 1];
    else if (flag == "--log2-groups") {
      o.log2_groups.clear();
      for (const char* p = argv[i + 1]; *p;) {
        o.log2_groups.push_back(std::atoi(p));
        while (*p && *p != ',') ++p;
        if (*p == ',') ++p;
      }
    } else {
      o.tallyd.clear();  // an unknown flag: the usage line
      break;
    }
  }
  if (o.configurations.empty()) o.configurations.push_back("");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (o.tallyd.empty()) {
    std::fprintf(stderr,
                 "usage: e2e_bench --tallyd PATH [--log2-rows N] [--log2-groups 0,4,..] [--runs R] [--cpu-runs R]\n"
                 "         [--chunk-rows N] [--csv FILE] [--gen-threads T] [--tallyd-args \"...\"]...\n"
                 "         [--variant V --launch-config C]\n");
    return 2;
  }
  const uint64_t rows = uint64_t{1} << o.log2_rows;
  const std::string chunk_args = "--chunk-rows " + std::to_string(o.chunk_rows) + " ";
  // Loaded once, by a tallyd of the first configuration; then each
  // configuration's tallyd starts on the same data directory in turn.
  tally::testing::TallyServer server(o.tallyd, chunk_args + o.configurations.front());
  for (size_t i = 0; i < o.configurations.size(); ++i) {
    std::printf("C%zu: tallyd %s %s%s\n", i + 1, o.tallyd.c_str(), chunk_args.c_str(), o.configurations[i].c_str());
  }
  __int128 loaded_total = 0;
  {
    PGconn* c = connect(server.conninfo());
    std::string create = "CREATE TABLE r (";
    for (int k : o.log2_groups) create += "g" + std::to_string(k) + " int, ";
    create += "v int)";
    PQclear(exec(c, create));
    std::printf("loading %llu rows (%zu key columns + v), chunks of %llu rows, generated on %u threads...\n",
                static_cast<unsigned long long>(rows), o.log2_groups.size(), static_cast<unsigned long long>(o.chunk_rows),
                o.gen_threads);
    std::fflush(stdout);
    const auto load_start = std::chrono::steady_clock::now();
    loaded_total = load(c, o, rows);
    const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
    std::printf("COPY: %.1f s (%.2f M rows/s)\n", load_s, static_cast<double>(rows) / load_s / 1e6);
    PQfinish(c);
  }
  uint64_t data_bytes = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(server.data_dir(), ec))
    if (entry.is_regular_file(ec)) data_bytes += entry.file_size(ec);
  std::printf("tallyd's data directory: %.2f GB\n", static_cast<double>(data_bytes) / 1e9);

  FILE* csv = o.csv_path.empty() ? nullptr : std::fopen(o.csv_path.c_str(), "w");
  if (csv) std::fprintf(csv, "rows,groups,e2e_ms,device_ms,span_ms,ratio,lean_ms,lean_ratio,cpu_ms,speedup,gpu_cold_ms,check,config\n");
  std::vector<std::vector<Point>> results;
  std::vector<Rows> cpu_reference;
  for (size_t config = 0; config < o.configurations.size(); ++config) {
    const auto start = std::chrono::steady_clock::now();
    server.restart(chunk_args + o.configurations[config]);
    std::printf("\nC%zu: tallyd started on the loaded data in %.1f s: %s\n", config + 1,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                o.configurations[config].c_str());
    std::fflush(stdout);
    results.push_back(run_configuration(o, config, server, rows, loaded_total, csv, cpu_reference,
                                        config == 0 ? std::vector<Point>{} : results.front()));
  }
  std::printf("\ne2e_ms: median wall time of PQexec (text results) over %d runs; device_ms: median of the engine's\n"
              "CUDA-event time over %d EXPLAIN ANALYZE runs (summed per launch); span_ms: median of the GPU's span of\n"
              "the query's launches (first launch's start to last launch's end, CUDA events); lean_ms: median wall time of the same query through\n"
              "the lean wire client (text results, rows parsed in place, checked against libpq's); ratios are\n"
              "to device_ms; cold_ms: first run (columns copied into the cache); cpu_ms: SET tally.engine = cpu\n"
              "(the first configuration only).\n",
              o.runs, o.runs);
  bool all_ok = true;
  for (const auto& points : results)
    for (const auto& p : points) all_ok &= p.check == "ok";
  if (results.size() > 1) {
    // The speed-up of every other configuration over the first, per G.
    std::printf("\nConfigurations compared (speed-up = C1's time / the configuration's; rows checked against C1's):\n");
    std::printf("%-8s", "G");
    for (size_t i = 0; i < results.size(); ++i) std::printf(" %10s %10s", ("C" + std::to_string(i + 1) + "_e2e").c_str(),
                                                            ("C" + std::to_string(i + 1) + "_span").c_str());
    for (size_t i = 1; i < results.size(); ++i) std::printf(" %12s %12s", ("e2e_C1/C" + std::to_string(i + 1)).c_str(),
                                                            ("span_C1/C" + std::to_string(i + 1)).c_str());
    std::printf(" check\n");
    for (size_t gi = 0; gi < o.log2_groups.size(); ++gi) {
      std::printf("2^%-6d", o.log2_groups[gi]);
      for (const auto& points : results) std::printf(" %10.3f %10.3f", points[gi].e2e_ms, points[gi].span_ms);
      for (size_t i = 1; i < results.size(); ++i) {
        std::printf(" %12.2f %12.2f", results[0][gi].e2e_ms / results[i][gi].e2e_ms,
                    results[0][gi].span_ms / results[i][gi].span_ms);
      }
      std::string check = "ok";
      for (const auto& points : results)
        if (points[gi].check != "ok") check = points[gi].check;
      std::printf(" %s\n", check.c_str());
    }
  }
  if (csv) std::fclose(csv);
  return all_ok ? 0 : 1;
}
