// COPY load benchmark: N rows of CSV loaded
//   1. into Tally in-process (COPY ... FROM 'file': parse + convert + write +
//      fsync + catalog commit, no network),
//   2. into tallyd over the wire with psql \copy (when --tallyd PATH is given),
//   3. into a PostgreSQL 15 started by this program, with psql \copy,
// printing rows/s for each and the ratio to PostgreSQL. Correctness: row count
// and sum of the first integer column are checked on every side.
// The data: by default (int4, int4, float8, text, date); with --h2o, the H2O
// db-benchmark groupby table at K=100 (bench/h2o/groupby_data.hpp: 3 varchar,
// 5 int, 1 float8; id3 has N/100 distinct values).
// --text-batches B: instead, B COPY statements of 100,000 rows each into a
// table with one high-cardinality text column (every value new), in process,
// printing each batch's time: a dictionary that rescans or copies itself per
// append makes the later batches slower than the first.
//
// Usage: copy_load_bench [--rows N] [--h2o] [--tallyd PATH] [--pg-bin DIR] [--keep]
//        copy_load_bench --text-batches B
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "bench/h2o/groupby_data.hpp"
#include "bench/h2o/questions.hpp"
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

// Writes the H2O groupby CSV (no header); returns the sum of v1 (column 7).
long long write_h2o_csv(const std::string& path, long long rows) {
  bench::h2o::GroupbyParams p;
  p.rows = static_cast<uint64_t>(rows);
  bench::h2o::GroupbyGenerator gen(p);
  std::ofstream f(path, std::ios::binary);
  std::string block;
  long long sum = 0;
  bool header = true;
  for (bool more = true; more;) {
    block.clear();
    more = gen.next_block(block, 1 << 22);
    size_t at = 0;
    if (header) {
      at = block.find('\n') + 1;
      header = false;
    }
    f.write(block.data() + at, static_cast<std::streamsize>(block.size() - at));
    // v1 is the 7th field of every line.
    for (size_t line = at; line < block.size();) {
      size_t p7 = line;
      for (int comma = 0; comma < 6; ++comma) p7 = block.find(',', p7) + 1;
      sum += std::atoll(block.c_str() + p7);
      line = block.find('\n', p7) + 1;
    }
  }
  return sum;
}

using NullWriter = protocol::DiscardingResultWriter;

// CPU seconds (user + system) of every thread of this process so far.
double cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct Result {
  std::string system;
  double seconds = 0;
  long long rows = 0;
  bool correct = false;
  double cpu_seconds = -1;  // in process only: what the COPY cost in CPU time
};

// The table the CSV loads into and the column whose sum checks it.
struct Shape {
  std::string create_sql = "CREATE TABLE load_t (a int4, b int4, c float8, d text, e date)";
  std::string table = "load_t";
  std::string sum_column = "a";
  int sum_index = 0;
};
Shape shape;

// Runs CREATE TABLE or COPY in process.
struct InProcess {
  explicit InProcess(const std::string& dir) : cat(dir), store(cat) {}
  std::string exec(const std::string& sql) {
    for (const auto& st : executor::parse_sql(sql)) {
      executor::StatementContext ctx{store, out, sql, nullptr};
      if (st.type() == "CreateStmt") return executor::ddl::create_table(st.body(), ctx);
      return executor::dml::copy(st.body(), ctx);
    }
    return std::string();
  }
  catalog::Catalog cat;
  storage::TableStore store;
  NullWriter out;
};

Result bench_in_process(const std::string& dir, const std::string& csv, long long rows, long long sum) {
  InProcess t(dir);
  auto& cat = t.cat;
  auto& store = t.store;
  t.exec(shape.create_sql);
  const double t0 = now_s(), c0 = cpu_s();
  const std::string tag = t.exec("COPY " + shape.table + " FROM '" + csv + "' (FORMAT csv)");
  Result r{"tally (in-process COPY FROM file)", now_s() - t0, rows, false, cpu_s() - c0};
  // Verify from storage: row count and the sum of the checked column.
  auto snap = cat.find_table(shape.table);
  long long got_sum = 0;
  const int cols[] = {shape.sum_index};
  for (size_t c = 0; c < snap->chunks.size(); ++c) {
    auto b = store.read_chunk(*snap, c, cols);
    for (size_t i = 0; i < b->rows; ++i) got_sum += b->columns[0].values<int32_t>()[i];
  }
  r.correct = tag == "COPY " + std::to_string(rows) && snap->row_count() == static_cast<uint64_t>(rows) && got_sum == sum;
  return r;
}

Result bench_psql(const std::string& name, const std::string& conn, const std::string& csv, long long rows, long long sum) {
  Result r{name, 0, rows, false};
  if (run("psql -X -q " + conn + " -c \"" + shape.create_sql + "\"") != 0) return r;
  const double t0 = now_s();
  const int rc = run("psql -X -q " + conn + " -c \"\\copy " + shape.table + " from '" + csv + "' (format csv)\"");
  r.seconds = now_s() - t0;
  const std::string check = capture("psql -X -A -t " + conn + " -c \"select count(*), sum(" + shape.sum_column +
                                    ") from " + shape.table + "\"");
  r.correct = rc == 0 && check == std::to_string(rows) + "|" + std::to_string(sum);
  if (!r.correct) std::fprintf(stderr, "%s: check failed: rc=%d got '%s'\n", name.c_str(), rc, check.c_str());
  return r;
}

// B batches of 100,000 rows into a table of one int8 and one text column,
// every text value new (the worst case for a dictionary).
int bench_text_batches(int batches) {
  constexpr long long batch_rows = 100'000;
  const std::string root = (fs::temp_directory_path() / ("tally_text_batches_" + std::to_string(getpid()))).string();
  fs::create_directories(root);
  const std::string csv = root + "/batch.csv";
  InProcess t(root + "/tally");
  t.exec("CREATE TABLE hc (id int8, s text)");
  std::printf("%8s %14s %10s %12s\n", "batch", "rows before", "seconds", "rows/s");
  bool ok = true;
  for (int b = 0; b < batches; ++b) {
    {
      std::ofstream f(csv, std::ios::binary);
      char line[64];
      for (long long i = 0; i < batch_rows; ++i) {
        const long long id = b * batch_rows + i;
        f.write(line, std::snprintf(line, sizeof line, "%lld,value_%012lld\n", id, id * 7919 % 1000000000039LL));
      }
    }
    const double t0 = now_s();
    const std::string tag = t.exec("COPY hc FROM '" + csv + "' (FORMAT csv)");
    const double s = now_s() - t0;
    ok = ok && tag == "COPY " + std::to_string(batch_rows);
    std::printf("%8d %14lld %10.3f %12.0f\n", b + 1, b * batch_rows, s, batch_rows / s);
  }
  auto snap = t.cat.find_table("hc");
  const long long want = batches * batch_rows;
  ok = ok && snap->row_count() == static_cast<uint64_t>(want) && t.store.dictionary(*snap, 1)->size() == want;
  std::printf("correct: %s\n", ok ? "yes" : "NO");
  fs::remove_all(root);
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  long long rows = 10'000'000;
  std::string tallyd, pg_bin = "/usr/lib/postgresql/15/bin";
  bool keep = false, h2o = false;
  int text_batches = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rows" && i + 1 < argc) rows = std::stoll(argv[++i]);
    else if (a == "--tallyd" && i + 1 < argc) tallyd = argv[++i];
    else if (a == "--pg-bin" && i + 1 < argc) pg_bin = argv[++i];
    else if (a == "--keep") keep = true;
    else if (a == "--h2o") h2o = true;
    else if (a == "--text-batches" && i + 1 < argc) text_batches = std::stoi(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: copy_load_bench [--rows N] [--h2o] [--tallyd PATH] [--pg-bin DIR] [--keep]\n"
                   "       copy_load_bench --text-batches B\n");
      return 2;
    }
  }
  if (text_batches > 0) return bench_text_batches(text_batches);
  if (h2o) shape = Shape{bench::h2o::kCreateTable, "x", "v1", 6};
  const std::string root = (fs::temp_directory_path() / ("tally_load_bench_" + std::to_string(getpid()))).string();
  fs::create_directories(root);
  fs::permissions(root, fs::perms::all);
  const std::string csv = root + "/data.csv";
  std::printf("generating %lld rows ...\n", rows);
  const long long sum = h2o ? write_h2o_csv(csv, rows) : write_csv(csv, rows);
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
  std::printf("\n%-36s %12s %10s %14s %10s %8s %8s\n", "system", "rows", "seconds", "rows/s", "vs PG", "correct",
              "cpu s");
  bool all_correct = true;
  for (const auto& r : results) {
    const double rate = static_cast<double>(r.rows) / r.seconds;
    std::printf("%-36s %12lld %10.3f %14.0f %9.2fx %8s", r.system.c_str(), r.rows, r.seconds, rate,
                pg_rate > 0 ? rate / pg_rate : 0.0, r.correct ? "yes" : "NO");
    if (r.cpu_seconds >= 0) std::printf(" %8.2f", r.cpu_seconds);
    std::printf("\n");
    all_correct = all_correct && r.correct;
  }
  if (!keep) fs::remove_all(root);
  return all_correct && pg_ok ? 0 : 1;
}
