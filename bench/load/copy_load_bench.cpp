// COPY load benchmark: N rows (int4, int4, float8, text, date; CSV) loaded
//   1. into Tally in-process (COPY ... FROM 'file': parse + convert + write +
//      fsync + catalog commit, no network),
//   2. into tallyd over the wire with psql \copy (when --tallyd PATH is given),
//   3. into a PostgreSQL 15 started by this program, with psql \copy,
// printing rows/s for each and the ratio to PostgreSQL. Correctness: row count
// and sum of the first column are checked on every side.
//
// Usage: copy_load_bench [--rows N] [--tallyd PATH] [--pg-bin DIR] [--keep]
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "catalog/catalog.hpp"
#include "executor/ddl/ddl.hpp"
#include "executor/dml/dml.hpp"
#include "executor/parser.hpp"
#include "storage/table_store.hpp"
#include "protocol/discarding_result_writer.hpp"

namespace fs = std::filesystem;
using namespace tally;

namespace {

// Distinct text values: realistic dictionary size for a GROUP BY key.
constexpr int label_count = 10000;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int run(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

int free_port() {
  for (int port = 25000 + getpid() % 5000;; ++port)
    if (run("(exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(port) + ") 2>/dev/null") != 0) return port;
}

// Writes the CSV; returns the sum of column a.
long long write_csv(const std::string& path, long long rows) {
  std::ofstream f(path, std::ios::binary);
  std::string buf;
  buf.reserve(1 << 22);
  char tmp[64];
  long long sum = 0;
  uint64_t x = 88172645463325252ull;
  for (long long i = 0; i < rows; ++i) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    const int a = static_cast<int>(x % 2000000) - 1000000;
    sum += a;
    buf.append(tmp, static_cast<size_t>(std::to_chars(tmp, tmp + 64, a).ptr - tmp));
    buf += ',';
    buf.append(tmp, static_cast<size_t>(std::to_chars(tmp, tmp + 64, static_cast<int>(i % 1000)).ptr - tmp));
    buf += ',';
    const double c = static_cast<double>(x % 1000000) / 100.0;
    buf.append(tmp, static_cast<size_t>(std::to_chars(tmp, tmp + 64, c).ptr - tmp));
    buf += ",customer_";
    buf.append(tmp, static_cast<size_t>(std::to_chars(tmp, tmp + 64, static_cast<int>((x >> 20) % label_count)).ptr - tmp));
    const int day = static_cast<int>(i % 3650);
    const int year = 2000 + day / 365, month = day % 365 / 31 + 1, dom = day % 28 + 1;
    std::snprintf(tmp, sizeof tmp, ",%04d-%02d-%02d\n", year, month, dom);
    buf += tmp;
    if (buf.size() > (1 << 22) - 256) {
      f.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
  }
  f.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  return sum;
}

using NullWriter = protocol::DiscardingResultWriter;

struct Result {
  std::string system;
  double seconds = 0;
  long long rows = 0;
  bool correct = false;
};

constexpr const char* create_sql = "CREATE TABLE load_t (a int4, b int4, c float8, d text, e date)";

Result bench_in_process(const std::string& dir, const std::string& csv, long long rows, long long sum) {
  catalog::Catalog cat(dir);
  storage::TableStore store(cat);
  NullWriter out;
  auto exec = [&](const std::string& sql) {
    for (const auto& st : executor::parse_sql(sql)) {
      executor::StatementContext ctx{store, out, sql, nullptr};
      if (st.type() == "CreateStmt") return executor::ddl::create_table(st.body(), ctx);
      return executor::dml::copy(st.body(), ctx);
    }
    return std::string();
  };
  exec(create_sql);
  const double t0 = now_s();
  const std::string tag = exec("COPY load_t FROM '" + csv + "' (FORMAT csv)");
  Result r{"tally (in-process COPY FROM file)", now_s() - t0, rows, false};
  // Verify from storage: row count and sum(a).
  auto snap = cat.find_table("load_t");
  long long got_sum = 0;
  const int cols[] = {0};
  for (size_t c = 0; c < snap->chunks.size(); ++c) {
    auto b = store.read_chunk(*snap, c, cols);
    for (size_t i = 0; i < b->rows; ++i) got_sum += b->columns[0].values<int32_t>()[i];
  }
  r.correct = tag == "COPY " + std::to_string(rows) && snap->row_count() == static_cast<uint64_t>(rows) && got_sum == sum;
  return r;
}

Result bench_psql(const std::string& name, const std::string& conn, const std::string& csv, long long rows, long long sum) {
  Result r{name, 0, rows, false};
  if (run("psql -X -q " + conn + " -c \"" + create_sql + "\"") != 0) return r;
  const double t0 = now_s();
  const int rc = run("psql -X -q " + conn + " -c \"\\copy load_t from '" + csv + "' (format csv)\"");
  r.seconds = now_s() - t0;
  const std::string check = capture("psql -X -A -t " + conn + " -c \"select count(*), sum(a) from load_t\"");
  r.correct = rc == 0 && check == std::to_string(rows) + "|" + std::to_string(sum);
  if (!r.correct) std::fprintf(stderr, "%s: check failed: rc=%d got '%s'\n", name.c_str(), rc, check.c_str());
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  long long rows = 10'000'000;
  std::string tallyd, pg_bin = "/usr/lib/postgresql/15/bin";
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rows" && i + 1 < argc) rows = std::stoll(argv[++i]);
    else if (a == "--tallyd" && i + 1 < argc) tallyd = argv[++i];
    else if (a == "--pg-bin" && i + 1 < argc) pg_bin = argv[++i];
    else if (a == "--keep") keep = true;
    else {
      std::fprintf(stderr, "usage: copy_load_bench [--rows N] [--tallyd PATH] [--pg-bin DIR] [--keep]\n");
      return 2;
    }
  }
  const std::string root = (fs::temp_directory_path() / ("tally_load_bench_" + std::to_string(getpid()))).string();
  fs::create_directories(root);
  fs::permissions(root, fs::perms::all);
  const std::string csv = root + "/data.csv";
  std::printf("generating %lld rows ...\n", rows);
  const long long sum = write_csv(csv, rows);
  fs::permissions(csv, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  std::printf("CSV: %.1f MB\n", static_cast<double>(fs::file_size(csv)) / 1e6);

  std::vector<Result> results;
  results.push_back(bench_in_process(root + "/tally-inproc", csv, rows, sum));

  pid_t tally_pid = -1;
  std::fflush(stdout);  // the forked child must not repeat buffered output
  if (!tallyd.empty()) {
    const int port = free_port();
    tally_pid = fork();
    if (tally_pid == 0) {
      freopen((root + "/tallyd.log").c_str(), "w", stdout);
      freopen((root + "/tallyd.log").c_str(), "a", stderr);
      execl(tallyd.c_str(), tallyd.c_str(), "--port", std::to_string(port).c_str(), "--data-dir",
            (root + "/tally-wire").c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    const std::string conn = "-h 127.0.0.1 -p " + std::to_string(port) + " -U tally -d tally";
    for (int i = 0; i < 100 && run("psql -X -q " + conn + " -c 'select 1' >/dev/null 2>&1") != 0; ++i) usleep(100000);
    results.push_back(bench_psql("tallyd (psql \\copy)", conn, csv, rows, sum));
  }

  // PostgreSQL 15, run as user postgres (never as root).
  const std::string pg_dir = root + "/pg";
  const int pg_port = free_port();
  const std::string as_pg = getuid() == 0 ? "runuser -u postgres -- " : "";
  if (getuid() == 0) run("chown postgres " + root);
  bool pg_ok = run(as_pg + pg_bin + "/initdb -D " + pg_dir + " -A trust -U postgres >/dev/null 2>&1") == 0 &&
               run(as_pg + pg_bin + "/pg_ctl -D " + pg_dir + " -o \"-p " + std::to_string(pg_port) + " -k " + root +
                   " -c listen_addresses=''\" -l " + root + "/pg.log -w -t 60 start >/dev/null") == 0;
  if (pg_ok) {
    results.push_back(bench_psql("postgresql 15 (psql \\copy)", "-h " + root + " -p " + std::to_string(pg_port) + " -U postgres -d postgres", csv, rows, sum));
    run(as_pg + pg_bin + "/pg_ctl -D " + pg_dir + " -m fast -w stop >/dev/null");
  } else {
    std::fprintf(stderr, "could not start PostgreSQL (see %s/pg.log)\n", root.c_str());
  }
  if (tally_pid > 0) {
    kill(tally_pid, SIGTERM);
    waitpid(tally_pid, nullptr, 0);
  }

  double pg_rate = 0;
  for (const auto& r : results)
    if (r.system.rfind("postgresql", 0) == 0 && r.correct) pg_rate = static_cast<double>(r.rows) / r.seconds;
  std::printf("\n%-36s %12s %10s %14s %10s %8s\n", "system", "rows", "seconds", "rows/s", "vs PG", "correct");
  bool all_correct = true;
  for (const auto& r : results) {
    const double rate = static_cast<double>(r.rows) / r.seconds;
    std::printf("%-36s %12lld %10.3f %14.0f %9.2fx %8s\n", r.system.c_str(), r.rows, r.seconds, rate,
                pg_rate > 0 ? rate / pg_rate : 0.0, r.correct ? "yes" : "NO");
    all_correct = all_correct && r.correct;
  }
  if (!keep) fs::remove_all(root);
  return all_correct && pg_ok ? 0 : 1;
}
