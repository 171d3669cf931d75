// What making a small new table durable costs on this machine's disk, for
// each way a commit could do it: the pattern a CREATE TABLE AS of a small
// answer follows (a new table directory, one file per column, every file
// and both directories synced, in parallel, beside SQLite's commit of the
// catalog rows), and the alternatives a design could take instead.
//
//   files+dirs parallel   today's one-round commit: storage::start_sync_all's
//                         fdatasync of the files and fsync of the two
//                         directories on its threads, the catalog row
//                         committed by SQLite (WAL, synchronous=FULL) meanwhile
//   files+dirs serial     the same syncs one after another, then the commit
//   syncfs                one syncfs(2) for the whole file system, then the commit
//   rows in SQLite        the columns' bytes as blobs in the catalog's own
//                         transaction: no new file, one WAL sync
//
// Each pattern runs --reps times on its own tables (removed after each
// round) in --dir, which must be on the disk a data directory would use.
// Prints the median and 90th percentile per pattern.
// Usage: commit_sync_bench [--dir DIR] [--reps N] [--columns C] [--bytes B]
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "storage/file_io.hpp"

namespace fs = std::filesystem;

namespace {

struct Options {
  std::string dir = "/tmp/commit_sync_bench";
  int reps = 200;
  int columns = 3;
  size_t bytes = 2048;  // per column file: a 100-row answer's encoded chunk
};

void check(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what + " failed");
}

class Catalog {
 public:
  explicit Catalog(const std::string& path) {
    check(sqlite3_open(path.c_str(), &db_) == SQLITE_OK, "sqlite3_open");
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=FULL");
    exec("CREATE TABLE IF NOT EXISTS tables (oid INTEGER PRIMARY KEY, name TEXT)");
    exec("CREATE TABLE IF NOT EXISTS chunks (oid INTEGER, slot INTEGER, bytes BLOB)");
  }
  ~Catalog() { sqlite3_close(db_); }
  void exec(const std::string& sql) {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      const std::string message = error ? error : "?";
      sqlite3_free(error);
      throw std::runtime_error(sql + ": " + message);
    }
  }
  // One transaction: the table's row, and its columns' bytes when given.
  void commit_table(int oid, const std::vector<std::vector<char>>* blobs) {
    exec("BEGIN");
    exec("INSERT INTO tables VALUES (" + std::to_string(oid) + ", 'ans')");
    if (blobs != nullptr) {
      sqlite3_stmt* st = nullptr;
      check(sqlite3_prepare_v2(db_, "INSERT INTO chunks VALUES (?, ?, ?)", -1, &st, nullptr) == SQLITE_OK, "prepare");
      for (size_t c = 0; c < blobs->size(); ++c) {
        sqlite3_bind_int(st, 1, oid);
        sqlite3_bind_int(st, 2, static_cast<int>(c));
        sqlite3_bind_blob(st, 3, (*blobs)[c].data(), static_cast<int>((*blobs)[c].size()), SQLITE_STATIC);
        check(sqlite3_step(st) == SQLITE_DONE, "insert chunk");
        sqlite3_reset(st);
      }
      sqlite3_finalize(st);
    }
    exec("COMMIT");
  }
  void drop_table(int oid) {
    exec("BEGIN");
    exec("DELETE FROM tables WHERE oid = " + std::to_string(oid));
    exec("DELETE FROM chunks WHERE oid = " + std::to_string(oid));
    exec("COMMIT");
  }

 private:
  sqlite3* db_ = nullptr;
};

using Clock = std::chrono::steady_clock;

struct Pattern {
  const char* name;
  bool files;  // the columns go to files (else to the catalog's blobs)
  std::function<void(const std::vector<std::string>& files, const std::vector<std::string>& dirs, Catalog&, int oid)> commit;
};

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--dir") o.dir = v;
    else if (a == "--reps") o.reps = std::max(1, std::atoi(v.c_str()));
    else if (a == "--columns") o.columns = std::max(1, std::atoi(v.c_str()));
    else if (a == "--bytes") o.bytes = static_cast<size_t>(std::max(1, std::atoi(v.c_str())));
    else {
      std::fprintf(stderr, "usage: commit_sync_bench [--dir DIR] [--reps N] [--columns C] [--bytes B]\n");
      return 2;
    }
  }
  try {
    fs::create_directories(o.dir + "/tables");
    tally::storage::sync_directory(o.dir);
    Catalog catalog(o.dir + "/catalog.db");
    using namespace tally;
    std::vector<std::vector<char>> blobs(static_cast<size_t>(o.columns), std::vector<char>(o.bytes));
    for (size_t c = 0; c < blobs.size(); ++c)
      for (size_t b = 0; b < o.bytes; ++b) blobs[c][b] = static_cast<char>((b * 131 + c * 7) & 0xff);

    const std::string tables = o.dir + "/tables";
    const std::vector<Pattern> patterns = {
        {"files+dirs parallel", true,
         [](const auto& files, const auto& dirs, Catalog& cat, int oid) {
           const auto syncing = storage::start_sync_all(files, dirs);  // as WriteTransaction::commit
           cat.commit_table(oid, nullptr);
           syncing->wait();
         }},
        {"files+dirs serial", true,
         [](const auto& files, const auto& dirs, Catalog& cat, int oid) {
           for (const auto& f : files) storage::sync_file(f);
           for (const auto& d : dirs) storage::sync_directory(d);
           cat.commit_table(oid, nullptr);
         }},
        {"syncfs", true,
         [](const auto& files, const auto&, Catalog& cat, int oid) {
           const int fd = ::open(files.front().c_str(), O_RDONLY | O_CLOEXEC);
           check(fd >= 0 && ::syncfs(fd) == 0, "syncfs");
           ::close(fd);
           cat.commit_table(oid, nullptr);
         }},
        {"rows in SQLite", false,
         [&blobs](const auto&, const auto&, Catalog& cat, int oid) { cat.commit_table(oid, &blobs); }},
    };
    std::printf("commit_sync_bench: %d columns of %zu bytes, %d reps, in %s\n\n", o.columns, o.bytes, o.reps,
                o.dir.c_str());
    std::printf("| pattern | median ms | p90 ms |\n|---|---:|---:|\n");
    int oid = 1;
    for (const Pattern& p : patterns) {
      std::vector<double> ms;
      for (int r = 0; r < o.reps; ++r, ++oid) {
        const std::string table = tables + "/" + std::to_string(oid);
        std::vector<std::string> files;
        const auto start = Clock::now();
        if (p.files) {
          fs::create_directory(table);
          for (int c = 0; c < o.columns; ++c) {
            files.push_back(table + "/c" + std::to_string(c));
            const auto& bytes = blobs[static_cast<size_t>(c)];
            storage::File::create(files.back()).write(bytes.data(), bytes.size());
          }
        }
        const std::vector<std::string> dirs = {table, tables};
        p.commit(files, dirs, catalog, oid);
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
        catalog.drop_table(oid);
        std::error_code ec;
        fs::remove_all(table, ec);
      }
      std::printf("| %s | %.3f | %.3f |\n", p.name, percentile(ms, 0.5), percentile(ms, 0.9));
      std::fflush(stdout);
    }
    std::error_code ec;
    fs::remove_all(o.dir, ec);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "commit_sync_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
