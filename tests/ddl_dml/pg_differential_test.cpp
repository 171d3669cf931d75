// Differential tests: the same statements (and COPY data) run on a scratch
// PostgreSQL 15 and on Tally's DDL/DML entry points; success, SQLSTATE,
// message, detail, hint, CONTEXT and cursor position must match, and so must
// the tables' contents as COPY TO prints them (text and CSV) afterwards.
#include <gtest/gtest.h>

#include <algorithm>

#include <bit>
#include <cmath>
#include <random>

#include "tests/ddl_dml/pg_oracle.hpp"
#include "tests/ddl_dml/sql_harness.hpp"

using namespace tally;

namespace {

struct Outcome {
  bool ok = true;
  std::string state, message, detail, hint, context;
  int position = 0;
  std::string copy_out;
};

std::string field(const PGresult* r, int code) {
  const char* v = PQresultErrorField(r, code);
  return v ? v : "";
}

Outcome run_pg(PGconn* conn, const std::string& sql, const std::string& copy_data) {
  Outcome o;
  PGresult* r = PQexec(conn, sql.c_str());
  if (PQresultStatus(r) == PGRES_COPY_IN) {
    PQclear(r);
    PQputCopyData(conn, copy_data.data(), static_cast<int>(copy_data.size()));
    PQputCopyEnd(conn, nullptr);
    r = PQgetResult(conn);
  } else if (PQresultStatus(r) == PGRES_COPY_OUT) {
    PQclear(r);
    char* buf = nullptr;
    int n;
    while ((n = PQgetCopyData(conn, &buf, 0)) > 0) {
      o.copy_out.append(buf, static_cast<size_t>(n));
      PQfreemem(buf);
    }
    r = PQgetResult(conn);
  }
  if (PQresultStatus(r) == PGRES_FATAL_ERROR) {
    o.ok = false;
    o.state = field(r, PG_DIAG_SQLSTATE);
    o.message = field(r, PG_DIAG_MESSAGE_PRIMARY);
    o.detail = field(r, PG_DIAG_MESSAGE_DETAIL);
    o.hint = field(r, PG_DIAG_MESSAGE_HINT);
    o.context = field(r, PG_DIAG_CONTEXT);
    const std::string pos = field(r, PG_DIAG_STATEMENT_POSITION);
    o.position = pos.empty() ? 0 : std::stoi(pos);
  }
  PQclear(r);
  while ((r = PQgetResult(conn)) != nullptr) PQclear(r);
  return o;
}

Outcome run_tally(tally::testing::SqlHarness& h, const std::string& sql, const std::string& copy_data) {
  Outcome o;
  try {
    h.run(sql, copy_data, 4096);
    o.copy_out = h.writer().copy_out;
  } catch (const Error& e) {
    o.ok = false;
    o.state = std::string(sqlstate_code(e.state()));
    o.message = e.what();
    o.detail = e.detail();
    o.hint = e.hint();
    o.context = e.context();
    o.position = e.position();
  }
  return o;
}

class PgDifferential : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { oracle_ = new tally::testing::PgOracle(); }
  static void TearDownTestSuite() {
    delete oracle_;
    oracle_ = nullptr;
  }
  void SetUp() override {
    conn_ = PQconnectdb(oracle_->conninfo().c_str());
    ASSERT_EQ(PQstatus(conn_), CONNECTION_OK) << PQerrorMessage(conn_);
    PQclear(PQexec(conn_, "SET client_min_messages = warning"));
    dir_ = std::filesystem::temp_directory_path() /
           ("tally_pgdiff_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    h_ = std::make_unique<tally::testing::SqlHarness>(dir_.string(), 64);
  }
  void TearDown() override {
    PQfinish(conn_);
    h_.reset();
    std::filesystem::remove_all(dir_);
  }
  // Runs sql on both; expects identical outcomes.
  void same(const std::string& sql, const std::string& copy_data = "") {
    const Outcome pg = run_pg(conn_, sql, copy_data);
    const Outcome t = run_tally(*h_, sql, copy_data);
    EXPECT_EQ(t.ok, pg.ok) << sql << "\n  tally: " << t.message << "\n  pg: " << pg.message;
    EXPECT_EQ(t.state, pg.state) << sql << "\n  tally: " << t.message << "\n  pg: " << pg.message;
    EXPECT_EQ(t.message, pg.message) << sql;
    EXPECT_EQ(t.detail, pg.detail) << sql;
    EXPECT_EQ(t.hint, pg.hint) << sql;
    EXPECT_EQ(t.context, pg.context) << sql;
    EXPECT_EQ(t.position, pg.position) << sql;
    EXPECT_EQ(t.copy_out, pg.copy_out) << sql;
  }
  // Compares a table's contents in text and CSV format.
  void same_contents(const std::string& table) {
    same("COPY " + table + " TO STDOUT");
    same("COPY " + table + " TO STDOUT (FORMAT csv, HEADER)");
  }

  static tally::testing::PgOracle* oracle_;
  PGconn* conn_ = nullptr;
  std::filesystem::path dir_;
  std::unique_ptr<tally::testing::SqlHarness> h_;
};

tally::testing::PgOracle* PgDifferential::oracle_ = nullptr;

TEST_F(PgDifferential, DdlStatementsAndErrors) {
  same("DROP TABLE IF EXISTS d1");
  same("CREATE TABLE d1 (a integer NOT NULL, b numeric(12,2), c varchar(5), d char(4), e date, f timestamp, "
       "g real, h double precision, i boolean, j text, k smallint, l bigint, m int8, n float4, o decimal(3))");
  same("CREATE TABLE d1 (x int)");
  same("CREATE TABLE d2 (a nosuchtype)");
  same("CREATE TABLE d2 (a int, a text)");
  same("CREATE TABLE d2 (a varchar(0))");
  same("CREATE TABLE d2 (a numeric(0))");
  same("DROP TABLE nosuch");
  same("DROP TABLE d1, nosuch");
  same("TRUNCATE nosuch");
  same("TRUNCATE d1");
  same("CREATE TABLE d2 (a int");
  same("DROP TABLE d1");
  same("CREATE TABLE d1 (a int)");
  same("DROP TABLE d1");
}

TEST_F(PgDifferential, InsertValues) {
  same("DROP TABLE IF EXISTS u");
  same("CREATE TABLE u (a int NOT NULL, b numeric(5,2), c varchar(3), d date, e bool, f float8, g text, "
       "h char(3), i timestamp, j smallint, k bigint, l real)");
  same("INSERT INTO u VALUES (1, 2.555, 'ab ', '2020-1-5', true, 1e-5, 'x', 'a', '2021-01-02 03:04:05.5', 7, "
       "9223372036854775807, 0.1)");
  same("INSERT INTO u (a, b, f, l) VALUES (2.5, -1, 3, 3), (-3.5, '12.345', '-Infinity', 'NaN'), (1.5e1, 0, 1e300, -0.0)");
  same("INSERT INTO u (a, g, c) VALUES (1, 42, 12::varchar(1)), ('7'::int, true, DEFAULT), (-'3'::int, 2.50, NULL)");
  same("INSERT INTO u (a, d, i) VALUES (1, 'epoch', '1999-01-08 04:05:06 BC'), (2, 'infinity', '-infinity'), "
       "(3, 'January 8, 1999', '2000-02-29T23:59:59.9999996')");
  same("INSERT INTO u (a, k, j) VALUES (1, -9223372036854775808, -32768)");
  same("INSERT INTO u (a) VALUES ('abc')");
  same("INSERT INTO u (a) VALUES (99999999999)");
  same("INSERT INTO u (a, j) VALUES (1, 40000)");
  same("INSERT INTO u (a, e) VALUES (1, 1)");
  same("INSERT INTO u (a, d) VALUES (1, 5)");
  same("INSERT INTO u (a, c) VALUES (1, 12345)");
  same("INSERT INTO u (a, c) VALUES (1, 'abcd')");
  same("INSERT INTO u (a, h) VALUES (1, 'abcd')");
  same("INSERT INTO u (a, b) VALUES (1, 1000)");
  same("INSERT INTO u (a, b) VALUES (1, 'x')");
  same("INSERT INTO u (a) VALUES (1, 2)");
  same("INSERT INTO u (a, b) VALUES (1)");
  same("INSERT INTO u (zz) VALUES (1)");
  same("INSERT INTO u VALUES (NULL)");
  same("INSERT INTO u (a, b) VALUES (5, 1.5), (NULL, 2)");
  same("INSERT INTO u (a, a) VALUES (1, 1)");
  same("INSERT INTO u (a) VALUES ('1'::text)");
  same("INSERT INTO u (a) VALUES (1), (2, 3)");
  same("INSERT INTO u (a, d) VALUES (1, '2021-02-30')");
  same("INSERT INTO u (a, d) VALUES (1, '2021-13-01')");
  same("INSERT INTO u (a, d) VALUES (1, 'not a date')");
  same("INSERT INTO u (a, i) VALUES (1, '2021-01-01 25:00')");
  same("INSERT INTO u (a, f) VALUES (1, 'abc')");
  same("INSERT INTO u (a, f) VALUES (1, '1e400')");
  same("INSERT INTO u (a, e) VALUES (1, 'maybe')");
  same("INSERT INTO nosuch VALUES (1)");
  same_contents("u");
}

TEST_F(PgDifferential, CopyFromTextAndCsv) {
  same("DROP TABLE IF EXISTS t");
  same("CREATE TABLE t (a int NOT NULL, b numeric(5,2), c varchar(3), d date, e text)");
  same("COPY t FROM STDIN", "1\t2.5\tab\t2020-01-01\tx\\ty\n2\t\\N\ta\\\\b\t\\N\t\\x41\\102\n\\.\n");
  same("COPY t FROM STDIN WITH (FORMAT csv, HEADER)", "a,b,c,d,e\n3,,\"x,y\",2021-03-04,\"multi\nline\"\n4,1,\"\",,\n");
  same("COPY t (a, c, e) FROM STDIN (FORMAT csv, DELIMITER ';', NULL 'NULL', FORCE_NULL (c))", "6;\"NULL\";NULL\n7;NULL;\"NULL\"\n");
  same("COPY t (a, e) FROM STDIN (FORMAT csv, QUOTE '''', ESCAPE '\\')", "8,'it\\'s'\n9,'a''b'\n");
  same("COPY t (a, e) FROM STDIN (FORMAT csv, FORCE_NOT_NULL (e))", "10,\n");
  same("COPY t FROM STDIN (FORMAT csv)", "10,2.5,abc,2020-01-01,x\n11,x,a,2020-01-01,y\n");
  same("COPY t FROM STDIN (FORMAT csv)", "1,2.5,abc\n");
  same("COPY t FROM STDIN (FORMAT csv)", "1,2.5,abc,2020-01-01,x,5\n");
  same("COPY t FROM STDIN (FORMAT csv)", "1,2.5,\"abc\n");
  same("COPY t FROM STDIN (FORMAT csv)", ",2.5,abc,2020-01-01,x\n");
  same("COPY t FROM STDIN", "1\t2.5\tabcd\t2020-01-01\tx\n");
  same("COPY t FROM STDIN", "1\t2.5\tab\t2020-02-30\tx\n");
  same("COPY t FROM STDIN", "99999999999\t2.5\tab\t2020-01-01\tx\n");
  same("COPY t FROM STDIN (FORMAT csv, HEADER match)", "a,b,c,d,x\n");
  // Line endings: CRLF throughout is fine; mixing with the first line's is not.
  same("COPY t (a, e) FROM STDIN (FORMAT csv)", "20,crlf\r\n21,\"quoted\r\nnewline\"\r\n");
  same("COPY t (a, e) FROM STDIN", "22\tcrlf\r\n23\ttext\r\n");
  same("COPY t (a, e) FROM STDIN (FORMAT csv, HEADER)", "a,e\n3,x\r\n4,y\n");
  same("COPY t (a, e) FROM STDIN (FORMAT csv)", "3,x\r\n4,y\n");
  same("COPY t (a, e) FROM STDIN (FORMAT csv)", "3,x\r5,y\n");
  same("COPY t (a, e) FROM STDIN", "3\tx\n4\ty\r\n");
  same("COPY t (a, e) FROM STDIN", "3\tx\r\n4\ty\n");
  same("COPY t FROM STDIN (DELIMITER 'ab')");
  same("COPY t FROM STDIN (FORMAT binaryx)");
  same("COPY t FROM STDIN (QUOTE 'x')");
  same("COPY t FROM STDIN (FORMAT csv, DELIMITER ',', QUOTE ',')");
  same("COPY t (a, a) FROM STDIN");
  same("COPY t (zz) FROM STDIN");
  same("COPY nosuch FROM STDIN");
  same("COPY t TO STDOUT (FORMAT csv, FORCE_NULL (a))");
  same("COPY t TO STDOUT (FORMAT csv, FORCE_QUOTE *)");
  same("COPY t (e, a) TO STDOUT (FORMAT csv, FORCE_QUOTE (e), DELIMITER '|')");
  same("COPY t TO STDOUT (NULL 'NIL', DELIMITER ',')");
  same_contents("t");
}

// Random values of every type through COPY FROM and back out: checks input
// parsing and output rendering (float shortest round trip, numeric scale,
// dates) against PostgreSQL value by value.
TEST_F(PgDifferential, RandomValuesRoundTrip) {
  same("DROP TABLE IF EXISTS r");
  same("CREATE TABLE r (f8 float8, f4 float4, n numeric(18,6), n2 numeric(7,0), d date, ts timestamp, i2 smallint, "
       "i8 bigint, b bool, c char(6), v varchar(8))");
  std::mt19937_64 rng(20240601);
  std::string data;
  for (int i = 0; i < 3000; ++i) {
    double f8;
    do f8 = std::bit_cast<double>(rng()); while (std::isnan(f8));
    if (i % 3 == 0) f8 = static_cast<double>(static_cast<int64_t>(rng() % 2000000) - 1000000) / std::pow(10.0, rng() % 12);
    float f4;
    do f4 = std::bit_cast<float>(static_cast<uint32_t>(rng())); while (std::isnan(f4));
    char buf[512];
    const long long n_int = static_cast<long long>(rng() % 1000000000000ull) - 500000000000ll;
    const int n_frac = static_cast<int>(rng() % 10000000);
    const int year = static_cast<int>(rng() % 4000) + 1, month = static_cast<int>(rng() % 12) + 1,
              day = static_cast<int>(rng() % 28) + 1;
    std::snprintf(buf, sizeof buf,
                  "%.17g\t%.9g\t%lld.%07d\t%lld.%d\t%04d-%02d-%02d%s\t%04d-%02d-%02d %02d:%02d:%02d.%06d\t%d\t%lld\t%s\t%s\t%s\n",
                  f8, static_cast<double>(f4), n_int, n_frac, static_cast<long long>(rng() % 20000000) - 10000000,
                  static_cast<int>(rng() % 10), year, month, day, rng() % 10 == 0 ? " BC" : "", year, month, day,
                  static_cast<int>(rng() % 24), static_cast<int>(rng() % 60), static_cast<int>(rng() % 60),
                  static_cast<int>(rng() % 1000000), static_cast<int>(rng() % 65536) - 32768,
                  static_cast<long long>(rng()), rng() % 2 ? "yes" : "off", rng() % 2 ? "ab" : "abcdef",
                  rng() % 2 ? "x y" : "héllo wö");
    data += buf;
  }
  same("COPY r FROM STDIN", data);
  same_contents("r");
}

TEST_F(PgDifferential, WideNumericRandomRoundTrip) {
  // numeric(38,10) (int128 storage) and unconstrained numeric (int128 + each
  // value's display scale): random values up to 38 significant digits, in
  // plain and exponent notation, loaded by COPY and by INSERT, printed back
  // by COPY TO, and the errors of too-large values, all as PostgreSQL does.
  same("DROP TABLE IF EXISTS w");
  same("CREATE TABLE w (p numeric(38,10), u numeric, s numeric(25,25))");
  std::mt19937_64 rng(20261122);
  auto digits = [&](int n) {
    std::string d;
    for (int i = 0; i < n; ++i) d += static_cast<char>('0' + rng() % 10);
    return d;
  };
  std::string data;
  for (int i = 0; i < 2000; ++i) {
    const std::string sign = rng() % 2 ? "-" : "";
    // p: up to 27 integer digits (28 fit; rounding 9s up would not) and up to 14
    // fraction digits (rounded to 10).
    std::string p = sign + digits(1 + static_cast<int>(rng() % 27)) + "." + digits(static_cast<int>(rng() % 15));
    // u: up to 38 significant digits with the point anywhere, or exponent form.
    const int total = 1 + static_cast<int>(rng() % 38);
    std::string m = digits(total);
    if (m[0] == '0') m[0] = '7';
    std::string u;
    if (rng() % 4 == 0) {
      // d.ddd e<exp>: a positive exponent beyond the fraction appends zeros to
      // the stored digits, so keep total + those zeros within 38.
      const int exp = static_cast<int>(rng() % 20) - 10;
      if (total + std::max(0, exp - (total - 1)) <= 38) u = sign + m.substr(0, 1) + "." + m.substr(1) + "e" + std::to_string(exp);
      else u = sign + m;
    } else {
      const int point = static_cast<int>(rng() % (total + 1));
      u = sign + (point == 0 ? "0" : m.substr(0, static_cast<size_t>(point))) + "." + m.substr(static_cast<size_t>(point));
    }
    std::string sv = (rng() % 2 ? "-0." : "0.") + digits(static_cast<int>(rng() % 30));
    if (i % 50 == 0) sv = "\\N";
    data += p + "\t" + u + "\t" + sv + "\n";
  }
  same("COPY w FROM STDIN", data);
  {
    // Guard against both sides failing alike: PostgreSQL must have loaded every row.
    PGresult* r = PQexec(conn_, "SELECT count(*) FROM w");
    ASSERT_EQ(PQresultStatus(r), PGRES_TUPLES_OK);
    EXPECT_STREQ(PQgetvalue(r, 0, 0), "2000");
    PQclear(r);
  }
  same_contents("w");
  same("INSERT INTO w VALUES (1234567890123456789012345678.0123456789, 0.000000000000000000000000000000000000000001, "
       "-0.0000000000000000000000001)");
  same("INSERT INTO w (p) VALUES (12345678901234567890123456789)");
  same("INSERT INTO w (s) VALUES (1)");
  same("INSERT INTO w (u) VALUES ('1.5e-3'), ('-1e3'), (' 00012.3400 ')");
  same_contents("w");
}

// Inputs of many parse segments (COPY FROM cuts its input into ~1 MB
// segments of whole records, parses them on several workers and appends them
// in input order): quoted newlines, delimiters, quotes and CRLFs across the
// cuts; errors in a later segment with their line numbers; the first of two
// errors wins; nothing of a failed COPY is loaded.
std::string segment_rows(int rows, const std::string& eol) {
  std::string out;
  for (int i = 0; i < rows; ++i) {
    out += std::to_string(i) + ",\"v" + std::to_string(i % 977) + " \"\"q\"\", x" + eol + "line " +
           std::to_string(i % 13) + "\"," + std::to_string(i % 1000) + ".25," + std::to_string(i % 7) + eol;
  }
  return out;
}

// Replaces the field `field` (0-based) of CSV line `line` (1-based; one
// physical line per record) of data.
std::string with_field(std::string data, size_t line, int field, const std::string& value) {
  size_t at = 0;
  for (size_t l = 1; l < line; ++l) at = data.find('\n', at) + 1;
  for (int f = 0; f < field; ++f) at = data.find(',', at) + 1;
  const size_t end = data.find_first_of(",\n", at);
  return data.replace(at, end - at, value);
}

TEST_F(PgDifferential, CopyAcrossParallelSegments) {
  // Chunks of 64Ki rows: the fixture's tiny chunks would make this a test of
  // thousands of fsyncs.
  h_.reset();
  std::filesystem::remove_all(dir_);
  h_ = std::make_unique<tally::testing::SqlHarness>(dir_.string(), 1 << 16);
  same("CREATE TABLE seg (id int8, s text, v float8, n int4 NOT NULL)");
  const std::string lf = segment_rows(60000, "\n");  // ~3.5 MB
  same("COPY seg FROM STDIN (FORMAT csv)", lf);
  same("COPY seg FROM STDIN (FORMAT csv, HEADER)", "id,s,v,n\r\n" + segment_rows(40000, "\r\n"));
  same_contents("seg");

  // Errors far into the input: in a record, a conversion, a NOT NULL column,
  // and an unterminated quote at the very end.
  same("CREATE TABLE flat (id int8, s text, v float8, n int4 NOT NULL)");
  std::string flat;
  for (int i = 0; i < 150000; ++i)
    flat += std::to_string(i) + ",name " + std::to_string(i % 5000) + "," + std::to_string(i % 100) + ".5," +
            std::to_string(i % 3) + "\n";
  same("COPY flat FROM STDIN (FORMAT csv)", flat);
  same("COPY flat FROM STDIN (FORMAT csv)", with_field(flat, 123457, 2, "x"));
  same("COPY flat FROM STDIN (FORMAT csv)", with_field(flat, 140001, 3, ""));
  same("COPY flat FROM STDIN (FORMAT csv)", with_field(with_field(flat, 140001, 3, ""), 90001, 0, "1.5"));
  same("COPY flat FROM STDIN (FORMAT csv)", with_field(flat, 100000, 3, "1,2"));
  same("COPY flat FROM STDIN (FORMAT csv)", flat + "1,\"open");
  same("COPY flat FROM STDIN (FORMAT csv)", with_field(flat, 130000, 1, "bad\xff"));
  // Text format, the end marker far into the input: what follows is not loaded.
  std::string text;
  for (int i = 0; i < 100000; ++i) text += std::to_string(i) + "\tt" + std::to_string(i % 300) + "\t1.5\t1\n";
  same("COPY flat FROM STDIN", text + "\\.\n");
  same_contents("flat");

  // Text format: a backslash takes the next byte as data, a line end too;
  // such a line end neither ends a record nor a segment, nor counts as a line.
  same("CREATE TABLE esc (id int8, s text)");
  std::string escaped;
  for (int i = 0; i < 100000; ++i)
    escaped += std::to_string(i) + "\t" + (i % 3 == 0 ? "a\\\nb" : i % 3 == 1 ? "c\\\\" : "\\\\\\\nd") + "\n";
  same("COPY esc FROM STDIN", escaped);
  same("COPY esc FROM STDIN", escaped + "x\ty\\\nz\n");
  same_contents("esc");
  same("CREATE TABLE esc_cr (id int8, s text)");
  std::string escaped_cr;
  for (int i = 0; i < 100000; ++i) escaped_cr += std::to_string(i) + "\tv" + (i % 2 ? "\\\r" : "") + "w\r";
  same("COPY esc_cr FROM STDIN", escaped_cr);
  same_contents("esc_cr");
}

// A failed COPY interned new text values into the column's dictionary store
// before it failed: the next COPY must give its own values those codes, and
// the dictionary file must hold exactly the committed values after a reopen.
TEST_F(PgDifferential, TextValuesOfAFailedCopyAreNotKept) {
  same("CREATE TABLE d (k int4, s text)");
  same("COPY d FROM STDIN (FORMAT csv)", "1,alpha\n2,beta\n");
  same("COPY d FROM STDIN (FORMAT csv)", "3,gamma\n4,delta\n5,alpha\nx,epsilon\n");
  same("COPY d FROM STDIN (FORMAT csv)", "6,zeta\n7,gamma\n8,beta\n");
  same("INSERT INTO d VALUES (9, 'eta'), (10, 'delta')");
  same_contents("d");
  h_->open(64);
  same_contents("d");
  same("COPY d FROM STDIN (FORMAT csv)", "11,theta\n12,zeta\n");
  same_contents("d");
}

}  // namespace
