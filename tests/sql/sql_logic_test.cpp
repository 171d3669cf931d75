// sqllogictest-style SQL tests. Every *.test file in tests/sql/ runs
//  * in-process against Tally (Database + Session), with the CPU engine and
//    again with the generic reference path (SET tally.engine = generic), and
//  * against a PostgreSQL 15 this test starts, which proves the expectations.
// Besides the expected rows, each query's result column type OIDs must be the
// same on Tally and PostgreSQL.
//
// File format (blank line ends a record):
//   statement ok | statement error <SQLSTATE>   followed by one SQL statement
//   query <column letters> [rowsort]            followed by SQL, "----", rows
//   copy                                         followed by a COPY ... TO STDOUT,
//                                                "----", the output lines verbatim
// Rows are tab-separated, NULL for SQL NULL, as PostgreSQL's text output.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "executor/database.hpp"
#include "tests/executor/embedded_database.hpp"
#include "tests/executor/recording_writer.hpp"
#include "tests/sql/pg_servers.hpp"

namespace tally {
namespace {

struct Record {
  enum class Kind { statement_ok, statement_error, query, copy } kind;
  std::string sqlstate;
  std::string sql;
  size_t columns = 0;
  bool rowsort = false;
  bool tally_only = false;  // "onlyif tally": PostgreSQL supports what Tally refuses
  std::vector<std::string> expected;
  int line = 0;
};

std::vector<Record> parse_file(const std::string& path) {
  std::ifstream in(path);
  std::vector<Record> records;
  std::string line;
  int number = 0;
  bool tally_only = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    if (line == "onlyif tally") {
      tally_only = true;
      continue;
    }
    Record r;
    r.line = number;
    r.tally_only = tally_only;
    tally_only = false;
    std::istringstream header(line);
    std::string word;
    header >> word;
    if (word == "statement") {
      std::string what;
      header >> what;
      r.kind = what == "ok" ? Record::Kind::statement_ok : Record::Kind::statement_error;
      if (what == "error") header >> r.sqlstate;
    } else if (word == "query") {
      r.kind = Record::Kind::query;
      std::string letters, option;
      header >> letters >> option;
      r.columns = letters.size();
      r.rowsort = option == "rowsort";
    } else if (word == "copy") {
      r.kind = Record::Kind::copy;
    } else {
      ADD_FAILURE() << path << ":" << number << ": unknown record '" << line << "'";
      continue;
    }
    bool in_results = false;
    while (std::getline(in, line)) {
      ++number;
      if (line.empty()) break;
      if ((r.kind == Record::Kind::query || r.kind == Record::Kind::copy) && line == "----") {
        in_results = true;
        continue;
      }
      if (in_results) {
        r.expected.push_back(line);
      } else {
        r.sql += (r.sql.empty() ? "" : "\n") + line;
      }
    }
    records.push_back(std::move(r));
  }
  return records;
}

struct Outcome {
  bool ok = true;
  std::string sqlstate;
  std::string message;
  std::vector<std::string> rows;
  std::vector<uint32_t> oids;
  bool copied = false;                  // the statement was a COPY ... TO STDOUT
  std::vector<std::string> copy_lines;  // its output, split at newlines
};

void split_copy_output(const std::string& data, std::vector<std::string>& lines) {
  size_t start = 0;
  while (start < data.size()) {
    const size_t end = data.find('\n', start);
    lines.push_back(data.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
}

// The session's writer for one statement: rows through RecordingWriter, and
// the CopyData of a COPY TO STDOUT collected here.
class CapturingWriter final : public tally::ResultWriter {
 public:
  executor::testing::RecordingWriter rows;
  bool copied = false;
  std::string copy_data;

  void row_description(std::span<const tally::FieldDescription> f) override { rows.row_description(f); }
  void data_row(std::span<const std::optional<std::string_view>> f) override { rows.data_row(f); }
  void command_complete(std::string_view tag) override { rows.command_complete(tag); }
  void empty_query() override { rows.empty_query(); }
  void notice(const Error& n) override { rows.notice(n); }
  void parameter_status(std::string_view name, std::string_view value) override { rows.parameter_status(name, value); }
  tally::CopyInReader& copy_in(tally::Format f, int columns) override { return rows.copy_in(f, columns); }
  void copy_out_begin(tally::Format, int) override { copied = true; }
  void copy_out_data(std::string_view data) override { copy_data += data; }
  void copy_out_end() override {}
};

std::string join_row(const std::vector<std::optional<std::string>>& row) {
  std::string line;
  for (size_t i = 0; i < row.size(); ++i) {
    if (i) line += '\t';
    line += row[i] ? *row[i] : "NULL";
  }
  return line;
}

class TallyTarget {
 public:
  explicit TallyTarget(const std::string& engine)
      : db_("tally-sqltest", [](config::Config& config) { config.cpu_threads = 2; }) {
    if (!engine.empty()) run("SET tally.engine = " + engine);
  }
  Outcome run(const std::string& sql) {
    Outcome o;
    CapturingWriter capture;
    executor::testing::RecordingWriter& out = capture.rows;
    try {
      db_.session().simple_query(sql, capture);
    } catch (const Error& e) {
      db_.session().on_error();
      o.ok = false;
      o.sqlstate = std::string(sqlstate_code(e.state()));
      o.message = e.what();
      return o;
    }
    o.copied = capture.copied;
    split_copy_output(capture.copy_data, o.copy_lines);
    if (!out.results.empty() && !o.copied) {
      const auto& last = out.results.back();
      for (const auto& f : last.fields) o.oids.push_back(f.type_oid);
      for (const auto& row : last.rows) o.rows.push_back(join_row(row));
    }
    return o;
  }

 private:
  executor::testing::EmbeddedDatabase db_;
};

class PostgresTarget {
 public:
  explicit PostgresTarget(const std::string& conninfo) {
    conn_ = PQconnectdb(conninfo.c_str());
    if (PQstatus(conn_) != CONNECTION_OK) throw std::runtime_error(PQerrorMessage(conn_));
    // A fresh schema per file so that files do not see each other's tables.
    run("DROP SCHEMA IF EXISTS public CASCADE");
    run("CREATE SCHEMA public");
  }
  ~PostgresTarget() { PQfinish(conn_); }
  Outcome run(const std::string& sql) {
    Outcome o;
    PGresult* r = PQexec(conn_, sql.c_str());
    if (PQresultStatus(r) == PGRES_COPY_OUT) {
      // Drain the CopyData, then the COPY's own outcome (an error may end it).
      o.copied = true;
      std::string data;
      char* buffer = nullptr;
      int n;
      while ((n = PQgetCopyData(conn_, &buffer, 0)) > 0) {
        data.append(buffer, static_cast<size_t>(n));
        PQfreemem(buffer);
      }
      split_copy_output(data, o.copy_lines);
      PQclear(r);
      r = PQgetResult(conn_);
      for (PGresult* extra = PQgetResult(conn_); extra != nullptr; extra = PQgetResult(conn_)) PQclear(extra);
    }
    const auto status = PQresultStatus(r);
    if (status == PGRES_FATAL_ERROR) {
      o.ok = false;
      const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      o.sqlstate = state ? state : "";
      o.message = PQresultErrorMessage(r);
    } else if (status == PGRES_TUPLES_OK) {
      for (int f = 0; f < PQnfields(r); ++f) o.oids.push_back(PQftype(r, f));
      for (int i = 0; i < PQntuples(r); ++i) {
        std::string line;
        for (int f = 0; f < PQnfields(r); ++f) {
          if (f) line += '\t';
          line += PQgetisnull(r, i, f) ? "NULL" : PQgetvalue(r, i, f);
        }
        o.rows.push_back(line);
      }
    }
    PQclear(r);
    return o;
  }

 private:
  PGconn* conn_;
};

testing::PostgresServer& postgres() {
  static testing::PostgresServer server;
  return server;
}

std::vector<std::string> test_files() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(TALLY_SQL_TEST_DIR)) {
    if (entry.path().extension() == ".test") files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

template <class Target>
void check_file(const std::string& file, Target& target, const std::string& label, bool check_oids,
                std::vector<std::vector<uint32_t>>* oids_out, const std::vector<std::vector<uint32_t>>* oids_in) {
  const auto records = parse_file(std::string(TALLY_SQL_TEST_DIR) + "/" + file);
  ASSERT_FALSE(records.empty()) << file;
  size_t query_index = 0;
  for (const auto& r : records) {
    if (r.tally_only && label == "[postgres]") continue;
    const std::string where = label + " " + file + ":" + std::to_string(r.line) + "\n" + r.sql;
    Outcome o = target.run(r.sql);
    switch (r.kind) {
      case Record::Kind::statement_ok:
        EXPECT_TRUE(o.ok) << where << "\nfailed: " << o.sqlstate << " " << o.message;
        break;
      case Record::Kind::statement_error:
        EXPECT_FALSE(o.ok) << where << "\nexpected error " << r.sqlstate;
        if (!o.ok) EXPECT_EQ(o.sqlstate, r.sqlstate) << where << "\n" << o.message;
        break;
      case Record::Kind::query: {
        EXPECT_TRUE(o.ok) << where << "\nfailed: " << o.sqlstate << " " << o.message;
        if (!o.ok) break;
        std::vector<std::string> got = o.rows, want = r.expected;
        if (r.rowsort) {
          std::sort(got.begin(), got.end());
          std::sort(want.begin(), want.end());
        }
        EXPECT_EQ(got, want) << where;
        EXPECT_EQ(o.oids.size(), r.columns) << where << "\ncolumn count differs from the header";
        // A Tally-only query has no PostgreSQL result to take the types of.
        if (r.tally_only) break;
        if (oids_out) oids_out->push_back(o.oids);
        if (check_oids && oids_in && query_index < oids_in->size()) {
          EXPECT_EQ(o.oids, (*oids_in)[query_index]) << where << "\nresult type OIDs differ from PostgreSQL's";
        }
        ++query_index;
        break;
      }
      case Record::Kind::copy:
        EXPECT_TRUE(o.ok) << where << "\nfailed: " << o.sqlstate << " " << o.message;
        EXPECT_TRUE(o.copied) << where << "\nno COPY output started";
        EXPECT_EQ(o.copy_lines, r.expected) << where;
        break;
    }
  }
}

class SqlLogicTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SqlLogicTest, PostgresTallyAndGenericPathAgree) {
  const std::string file = GetParam();
  std::vector<std::vector<uint32_t>> pg_oids;
  {
    PostgresTarget pg(postgres().conninfo());
    check_file(file, pg, "[postgres]", false, &pg_oids, nullptr);
  }
  {
    TallyTarget tally("");
    check_file(file, tally, "[tally cpu]", true, nullptr, &pg_oids);
  }
  {
    TallyTarget tally("generic");
    check_file(file, tally, "[tally generic]", true, nullptr, &pg_oids);
  }
}

INSTANTIATE_TEST_SUITE_P(Files, SqlLogicTest, ::testing::ValuesIn(test_files()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.size() - 5);
                           for (char& c : name) if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace tally
