// SQL-level tests of CREATE/DROP/TRUNCATE/INSERT/COPY through the entry
// points. Expected text, SQLSTATEs and messages are PostgreSQL 15's (checked
// against a scratch server; tests/ddl_dml/pg_differential_test.cpp re-checks
// many of them against a live PostgreSQL in CI).
#include <gtest/gtest.h>

#include <unistd.h>

#include "tests/ddl_dml/sql_harness.hpp"

using namespace tally;
using tally::testing::SqlHarness;

namespace {

class DdlDmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tally_ddl_dml_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    h_ = std::make_unique<SqlHarness>(dir_.string(), 4);
  }
  void TearDown() override {
    h_.reset();
    std::filesystem::remove_all(dir_);
  }
  // Expects sql to fail with state and message; returns the error.
  Error expect_error(const std::string& sql, SqlState state, const std::string& message, const std::string& copy = "") {
    try {
      h_->run(sql, copy);
    } catch (const Error& e) {
      EXPECT_EQ(sqlstate_code(e.state()), sqlstate_code(state)) << sql << ": " << e.what();
      EXPECT_EQ(std::string(e.what()), message) << sql;
      return e;
    }
    ADD_FAILURE() << "no error from: " << sql;
    return Error(SqlState::internal_error, "none");
  }
  std::filesystem::path dir_;
  std::unique_ptr<SqlHarness> h_;
};

TEST_F(DdlDmlTest, CreateDropTruncate) {
  EXPECT_EQ(h_->run("CREATE TABLE t (a int NOT NULL, b numeric(5,2), c varchar(3), d char(3), e date, "
                    "f timestamp, g float4, h double precision, i bool, j text, k smallint, l bigint)"),
            "CREATE TABLE");
  auto snap = h_->catalog().find_table("t");
  ASSERT_TRUE(snap);
  EXPECT_EQ(format_type(snap->def.columns[1].type), "numeric(5,2)");
  EXPECT_EQ(format_type(snap->def.columns[3].type), "character(3)");
  EXPECT_TRUE(snap->def.columns[0].not_null);
  expect_error("CREATE TABLE t (x int)", SqlState::duplicate_table, "relation \"t\" already exists");
  h_->run("CREATE TABLE IF NOT EXISTS t (x int)");
  ASSERT_EQ(h_->writer().notices.size(), 1u);
  EXPECT_EQ(h_->writer().notices[0], "42P07 relation \"t\" already exists, skipping");
  Error e = expect_error("CREATE TABLE u (a foo)", SqlState::undefined_object, "type \"foo\" does not exist");
  EXPECT_EQ(e.position(), 19);
  expect_error("CREATE TABLE u (a int, a int)", SqlState::duplicate_column, "column \"a\" specified more than once");
  // numeric up to 38 digits is stored (int128); wider is Tally's limit, and
  // negative scales or scale > precision (PostgreSQL 15 accepts them) too.
  expect_error("CREATE TABLE u (a numeric(39,2))", SqlState::feature_not_supported,
               "numeric(39,2) is not supported by Tally; precision must be at most 38 and 0 <= scale <= precision");
  expect_error("CREATE TABLE u (a numeric(5,-1))", SqlState::feature_not_supported,
               "numeric(5,-1) is not supported by Tally; precision must be at most 38 and 0 <= scale <= precision");
  expect_error("CREATE TABLE u (a varchar(0))", SqlState::invalid_parameter_value,
               "length for type varchar must be at least 1");
  expect_error("CREATE TABLE u (a int", SqlState::syntax_error, "syntax error at end of input");
  // In SQL words, never the parser's node name.
  expect_error("CREATE TABLE u (LIKE t)", SqlState::feature_not_supported, "LIKE in CREATE TABLE is not supported by Tally");
  expect_error("DROP TABLE nosuch", SqlState::undefined_table, "table \"nosuch\" does not exist");
  // A missing name in a list drops nothing.
  expect_error("DROP TABLE t, nosuch", SqlState::undefined_table, "table \"nosuch\" does not exist");
  EXPECT_TRUE(h_->catalog().find_table("t"));
  h_->run("DROP TABLE IF EXISTS nosuch, t");
  EXPECT_EQ(h_->writer().notices.at(0), "00000 table \"nosuch\" does not exist, skipping");
  EXPECT_FALSE(h_->catalog().find_table("t"));
  expect_error("TRUNCATE nosuch", SqlState::undefined_table, "relation \"nosuch\" does not exist");
  h_->run("CREATE TABLE \"Mixed\" (\"X\" int)");
  EXPECT_TRUE(h_->catalog().find_table("Mixed"));
  EXPECT_EQ(h_->run("INSERT INTO \"Mixed\" VALUES (1), (2)"), "INSERT 0 2");
  EXPECT_EQ(h_->run("TRUNCATE \"Mixed\""), "TRUNCATE TABLE");
  EXPECT_EQ(h_->dump("\"Mixed\""), "");
}

TEST_F(DdlDmlTest, InsertValuesAndCasts) {
  h_->run("CREATE TABLE u (a int NOT NULL, b numeric(5,2), c varchar(3), d date, e bool, f float8, g text)");
  EXPECT_EQ(h_->run("INSERT INTO u VALUES (1, 2.555, 'ab ', '2020-1-5', true, 1e-5, 'x'), "
                    "(2.5, -1, 'abc  ', 'epoch', 'yes', 3, NULL)"),
            "INSERT 0 2");
  EXPECT_EQ(h_->run("INSERT INTO u (a, g, f) VALUES (1.5e1, 42, '1.5'::float8), ('7'::int, true, -2)"), "INSERT 0 2");
  EXPECT_EQ(h_->run("INSERT INTO u (a, c) VALUES (-3, 12::varchar(1)), (4, DEFAULT)"), "INSERT 0 2");
  EXPECT_EQ(h_->dump("u"),
            "1\t2.56\tab \t2020-01-05\tt\t1e-05\tx\n"
            "3\t-1.00\tabc\t1970-01-01\tt\t3\t\\N\n"
            "15\t\\N\t\\N\t\\N\t\\N\t1.5\t42\n"
            "7\t\\N\t\\N\t\\N\t\\N\t-2\ttrue\n"
            "-3\t\\N\t1\t\\N\t\\N\t\\N\t\\N\n"
            "4\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\n");
  Error e = expect_error("insert into u (a) values ('abc')", SqlState::invalid_text_representation,
                         "invalid input syntax for type integer: \"abc\"");
  EXPECT_EQ(e.position(), 27);
  expect_error("insert into u (a) values (99999999999)", SqlState::numeric_value_out_of_range, "integer out of range");
  e = expect_error("insert into u (a,e) values (1, 1)", SqlState::datatype_mismatch,
                   "column \"e\" is of type boolean but expression is of type integer");
  EXPECT_EQ(e.position(), 32);
  EXPECT_EQ(e.hint(), "You will need to rewrite or cast the expression.");
  expect_error("insert into u (a,c) values (1, 12345)", SqlState::string_data_right_truncation,
               "value too long for type character varying(3)");
  e = expect_error("insert into u (a,b) values (1, 1000)", SqlState::numeric_value_out_of_range, "numeric field overflow");
  EXPECT_EQ(e.detail(), "A field with precision 5, scale 2 must round to an absolute value less than 10^3.");
  e = expect_error("insert into u (a) values (1, 2)", SqlState::syntax_error,
                   "INSERT has more expressions than target columns");
  EXPECT_EQ(e.position(), 30);
  e = expect_error("insert into u (a,b) values (1)", SqlState::syntax_error,
                   "INSERT has more target columns than expressions");
  EXPECT_EQ(e.position(), 18);
  e = expect_error("insert into u (zz) values (1)", SqlState::undefined_column,
                   "column \"zz\" of relation \"u\" does not exist");
  EXPECT_EQ(e.position(), 16);
  e = expect_error("insert into u values (null)", SqlState::not_null_violation,
                   "null value in column \"a\" of relation \"u\" violates not-null constraint");
  EXPECT_EQ(e.detail(), "Failing row contains (null, null, null, null, null, null, null).");
  e = expect_error("insert into u (a, b) values (5, 1.5), (null, 2)", SqlState::not_null_violation,
                   "null value in column \"a\" of relation \"u\" violates not-null constraint");
  EXPECT_EQ(e.detail(), "Failing row contains (null, 2.00, null, null, null, null, null).");
  expect_error("insert into u (a,a) values (1,1)", SqlState::duplicate_column, "column \"a\" specified more than once");
  expect_error("insert into u (a) values ('1'::text)", SqlState::datatype_mismatch,
               "column \"a\" is of type integer but expression is of type text");
  expect_error("insert into u (a) values (1),(2,3)", SqlState::syntax_error, "VALUES lists must all be the same length");
  expect_error("insert into nosuch values (1)", SqlState::undefined_table, "relation \"nosuch\" does not exist");
  expect_error("insert into u (a,d) values (1, '2021-02-30')", SqlState::datetime_field_overflow,
               "date/time field value out of range: \"2021-02-30\"");
  // Nothing of the failed statements was added.
  EXPECT_EQ(h_->catalog().find_table("u")->row_count(), 6u);
}

TEST_F(DdlDmlTest, CopyFillsDefaultsOfColumnsLeftOut) {
  // What PostgreSQL 15 loads from the same COPY (checked with psql).
  h_->run("CREATE TABLE cd (id int DEFAULT 0, a int DEFAULT 7, b text DEFAULT 'x', n numeric(5,1) DEFAULT 2.5, "
          "e int NOT NULL DEFAULT 3)");
  EXPECT_EQ(h_->run("COPY cd (a) FROM STDIN", "5\n6\n\\N\n\\.\n"), "COPY 3");
  EXPECT_EQ(h_->dump("cd"),
            "0\t5\tx\t2.5\t3\n"
            "0\t6\tx\t2.5\t3\n"
            "0\t\\N\tx\t2.5\t3\n");
}

TEST_F(DdlDmlTest, CopyTextAndCsv) {
  h_->run("CREATE TABLE t (a int NOT NULL, b numeric(5,2), c varchar(3), d date)");
  EXPECT_EQ(h_->run("COPY t FROM STDIN", "1\t2.5\tab\t2020-01-01\n2\t\\N\ta\\tb\t\\N\n\\.\n"), "COPY 2");
  EXPECT_EQ(h_->run("COPY t FROM STDIN WITH (FORMAT csv, HEADER)",
                    "a,b,c,d\n3,,\"x,y\",2021-03-04\n4,1,\"\",\n5,2,\"q\"\"\",1999-12-31"),
            "COPY 3");
  EXPECT_EQ(h_->run("COPY t (a, c) FROM STDIN (FORMAT csv, DELIMITER ';', NULL 'NULL', FORCE_NULL (c))",
                    "6;\"NULL\"\n7;NULL\n"),
            "COPY 2");
  EXPECT_EQ(h_->dump("t"),
            "1\t2.50\tab\t2020-01-01\n"
            "2\t\\N\ta\\tb\t\\N\n"
            "3\t\\N\tx,y\t2021-03-04\n"
            "4\t1.00\t\t\\N\n"
            "5\t2.00\tq\"\t1999-12-31\n"
            "6\t\\N\t\\N\t\\N\n"
            "7\t\\N\t\\N\t\\N\n");
  h_->run("COPY t TO STDOUT (FORMAT csv, HEADER)");
  EXPECT_EQ(h_->writer().copy_out,
            "a,b,c,d\n1,2.50,ab,2020-01-01\n2,,a\tb,\n3,,\"x,y\",2021-03-04\n4,1.00,\"\",\n5,2.00,\"q\"\"\",1999-12-31\n"
            "6,,,\n7,,,\n");
  // Errors abort the whole COPY with PostgreSQL's CONTEXT; nothing is added.
  Error e = expect_error("COPY t FROM STDIN (FORMAT csv)", SqlState::invalid_text_representation,
                         "invalid input syntax for type numeric: \"x\"", "10,2.5,abc,2020-01-01\n11,x,a,2020-01-01\n");
  EXPECT_EQ(e.context(), "COPY t, line 2, column b: \"x\"");
  e = expect_error("COPY t FROM STDIN (FORMAT csv)", SqlState::bad_copy_file_format, "missing data for column \"d\"",
                   "1,2.5,abc\n");
  EXPECT_EQ(e.context(), "COPY t, line 1: \"1,2.5,abc\"");
  e = expect_error("COPY t FROM STDIN (FORMAT csv)", SqlState::bad_copy_file_format,
                   "extra data after last expected column", "1,2.5,abc,2020-01-01,5\n");
  EXPECT_EQ(e.context(), "COPY t, line 1: \"1,2.5,abc,2020-01-01,5\"");
  e = expect_error("COPY t FROM STDIN (FORMAT csv)", SqlState::bad_copy_file_format, "unterminated CSV quoted field",
                   "1,2.5,\"abc\n");
  EXPECT_EQ(e.context(), "COPY t, line 1: \"1,2.5,\"abc\n\"");
  e = expect_error("COPY t FROM STDIN (FORMAT csv)", SqlState::not_null_violation,
                   "null value in column \"a\" of relation \"t\" violates not-null constraint", ",2.5,abc,2020-01-01\n");
  EXPECT_EQ(e.detail(), "Failing row contains (null, 2.50, abc, 2020-01-01).");
  EXPECT_EQ(e.context(), "COPY t, line 1: \",2.5,abc,2020-01-01\"");
  e = expect_error("COPY t FROM STDIN", SqlState::string_data_right_truncation,
                   "value too long for type character varying(3)", "1\t2.5\tabcd\t2020-01-01\n");
  EXPECT_EQ(e.context(), "COPY t, line 1, column c: \"abcd\"");
  // Invalid UTF-8 fails as PostgreSQL's encoding check does: the CONTEXT names
  // the line only, never echoing the bytes (in a text column or any other).
  e = expect_error("COPY t FROM STDIN", SqlState::character_not_in_repertoire,
                   "invalid byte sequence for encoding \"UTF8\": 0xff", "1\t2.5\tab\t\\N\n2\t1\tb\xff\xfe\t\\N\n");
  EXPECT_EQ(e.context(), "COPY t, line 2");
  e = expect_error("COPY t FROM STDIN", SqlState::character_not_in_repertoire,
                   "invalid byte sequence for encoding \"UTF8\": 0xff", "1\xff\t2.5\tab\t\\N\n");
  EXPECT_EQ(e.context(), "COPY t, line 1");
  e = expect_error("COPY t FROM STDIN", SqlState::character_not_in_repertoire,
                   "invalid byte sequence for encoding \"UTF8\": 0xff", "1\t2.5\tab\t\\N\textra\xff\n");
  EXPECT_EQ(e.context(), "COPY t, line 1");
  expect_error("COPY t FROM STDIN (DELIMITER 'ab')", SqlState::feature_not_supported,
               "COPY delimiter must be a single one-byte character");
  expect_error("COPY t FROM STDIN (FORMAT binaryx)", SqlState::invalid_parameter_value,
               "COPY format \"binaryx\" not recognized");
  expect_error("COPY t FROM STDIN (QUOTE 'x')", SqlState::feature_not_supported, "COPY quote available only in CSV mode");
  expect_error("COPY t (a, a) FROM STDIN", SqlState::duplicate_column, "column \"a\" specified more than once");
  expect_error("COPY t (zz) FROM STDIN", SqlState::undefined_column, "column \"zz\" of relation \"t\" does not exist");
  expect_error("COPY nosuch FROM STDIN", SqlState::undefined_table, "relation \"nosuch\" does not exist");
  expect_error("COPY t FROM '/nonexistent/file.csv'", SqlState::undefined_file,
               "could not open file \"/nonexistent/file.csv\" for reading: No such file or directory");
  EXPECT_EQ(h_->catalog().find_table("t")->row_count(), 7u);
}

TEST_F(DdlDmlTest, CopyInTinyBlocksAndManyChunks) {
  h_->run("CREATE TABLE big (id bigint, name text, v float8, d date)");
  std::string data;
  for (int i = 0; i < 3000; ++i)
    data += std::to_string(i) + ",\"name " + std::to_string(i % 17) + "\"," + std::to_string(i * 0.25) + ",2020-01-" +
            (i % 28 + 1 < 10 ? "0" : "") + std::to_string(i % 28 + 1) + "\n";
  // 7-byte CopyData blocks split records, quotes and CRLFs everywhere.
  EXPECT_EQ(h_->run("COPY big FROM STDIN (FORMAT csv)", data, 7), "COPY 3000");
  auto snap = h_->catalog().find_table("big");
  EXPECT_EQ(snap->row_count(), 3000u);
  EXPECT_EQ(snap->chunks.size(), 750u);  // chunk_rows = 4 in this fixture
  h_->run("COPY big TO STDOUT (FORMAT csv)");
  std::string expected;
  for (int i = 0; i < 3000; ++i) {
    std::string v = std::to_string(i * 0.25);
    while (v.back() == '0') v.pop_back();
    if (v.back() == '.') v.pop_back();
    expected += std::to_string(i) + ",name " + std::to_string(i % 17) + "," + v + ",2020-01-" +
                (i % 28 + 1 < 10 ? "0" : "") + std::to_string(i % 28 + 1) + "\n";
  }
  EXPECT_EQ(h_->writer().copy_out, expected);
  EXPECT_EQ(h_->store().dictionary(*snap, 1)->size(), 17);
  // Survives a reopen.
  h_->open(4);
  EXPECT_EQ(h_->catalog().find_table("big")->row_count(), 3000u);
  h_->run("COPY big TO STDOUT (FORMAT csv)");
  EXPECT_EQ(h_->writer().copy_out, expected);
}

// time and bytea columns through INSERT, COPY in (text and CSV, hex and
// escape bytea input), COPY out and a reopen of the data directory; the
// expected text is what PostgreSQL 15 prints for the same statements.
TEST_F(DdlDmlTest, TimeAndByteaColumnsSurviveReopen) {
  EXPECT_EQ(h_->run("CREATE TABLE tb (id int, t time, t3 time(3), b bytea)"), "CREATE TABLE");
  EXPECT_EQ(h_->run("INSERT INTO tb VALUES (1, '12:34:56.7891', '12:34:56.7896', '\\x00ff'), (2, NULL, NULL, NULL), "
                    "(3, '24:00', '00:00', 'a\\\\b')"),
            "INSERT 0 3");
  EXPECT_EQ(h_->run("COPY tb FROM STDIN", "4\t01:02:03\t01:02:03.0005\t\\\\x0a0b\n5\t\\N\t23:59:59.9999\t\\\\000abc\n"),
            "COPY 2");
  EXPECT_EQ(h_->run("COPY tb FROM STDIN (FORMAT csv)", "6,4:05 PM,,\\x\n7,,00:00:00.1234,\\x DE AD\n"), "COPY 2");
  const std::string expected =
      "1\t12:34:56.7891\t12:34:56.79\t\\\\x00ff\n"
      "2\t\\N\t\\N\t\\N\n"
      "3\t24:00:00\t00:00:00\t\\\\x615c62\n"
      "4\t01:02:03\t01:02:03.001\t\\\\x0a0b\n"
      "5\t\\N\t24:00:00\t\\\\x00616263\n"
      "6\t16:05:00\t\\N\t\\\\x\n"
      "7\t\\N\t00:00:00.123\t\\\\xdead\n";
  EXPECT_EQ(h_->dump("tb"), expected);
  h_->run("COPY tb TO STDOUT (FORMAT csv)");
  EXPECT_EQ(h_->writer().copy_out,
            "1,12:34:56.7891,12:34:56.79,\\x00ff\n2,,,\n3,24:00:00,00:00:00,\\x615c62\n4,01:02:03,01:02:03.001,\\x0a0b\n"
            "5,,24:00:00,\\x00616263\n6,16:05:00,,\\x\n7,,00:00:00.123,\\xdead\n");
  expect_error("COPY tb FROM STDIN", SqlState::invalid_datetime_format, "invalid input syntax for type time: \"nope\"",
               "8\tnope\t\\N\t\\N\n");
  expect_error("COPY tb FROM STDIN", SqlState::invalid_parameter_value, "invalid hexadecimal data: odd number of digits",
               "8\t\\N\t\\N\t\\\\x123\n");
  expect_error("INSERT INTO tb (id, b) VALUES (8, 'bad\\q')", SqlState::invalid_text_representation,
               "invalid input syntax for type bytea");
  expect_error("INSERT INTO tb (id, t) VALUES (8, '24:00:00.5')", SqlState::datetime_field_overflow,
               "date/time field value out of range: \"24:00:00.5\"");
  // Survives a reopen.
  h_->open(4);
  EXPECT_EQ(h_->catalog().find_table("tb")->row_count(), 7u);
  EXPECT_EQ(format_type(h_->catalog().find_table("tb")->def.columns[2].type), "time(3) without time zone");
  EXPECT_EQ(h_->dump("tb"), expected);
}

// A COPY of several 1 MB segments (parsed on worker threads) into time and
// bytea columns: every segment's new bytea values reach the one dictionary.
TEST_F(DdlDmlTest, CopyManySegmentsOfTimeAndBytea) {
  const std::string dir = dir_.string() + "_segments";
  std::filesystem::remove_all(dir);
  auto harness = std::make_unique<SqlHarness>(dir, 1u << 16);
  SqlHarness& h = *harness;
  h.run("CREATE TABLE tb (id int, t time, b bytea)");
  auto hex = [](int v) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    for (int shift = 12; shift >= 0; shift -= 4) s += digits[(v >> shift) & 0xf];
    return s;
  };
  auto clock = [](int i) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", i / 3600 % 24, i / 60 % 60, i % 60);
    return std::string(buf);
  };
  // COPY's text out is the text in: hex bytea, times without fractions.
  std::string data;
  constexpr int rows = 120000;
  for (int i = 0; i < rows; ++i) {
    const std::string b = i % 7 == 0 ? "\\N" : "\\\\x" + hex(i % 5003) + "00";
    data += std::to_string(i) + "\t" + clock(i) + "\t" + b + "\n";
  }
  ASSERT_GT(data.size(), size_t{2} << 20);
  EXPECT_EQ(h.run("COPY tb FROM STDIN", data), "COPY " + std::to_string(rows));
  EXPECT_EQ(h.dump("tb"), data);
  auto snap = h.catalog().find_table("tb");
  // Each of the 5003 values appears in rows whose id is no multiple of 7.
  EXPECT_EQ(h.store().dictionary(*snap, 2)->size(), 5003);
  harness.reset();
  std::filesystem::remove_all(dir);
}

// A server file of many parse segments (COPY cuts ~1 MB segments on a reader
// thread and parses them on workers): CRLF line ends, quoted fields holding
// CRLFs, delimiters and doubled quotes across the cuts, a text column of many
// distinct values; then a bad row in a later segment fails the whole COPY
// with its line number and loads nothing.
TEST_F(DdlDmlTest, CopyFromAFileAcrossSegments) {
  h_ = std::make_unique<SqlHarness>(dir_.string(), 1 << 16);
  h_->run("CREATE TABLE f (id int8, s text, k varchar, n int4 NOT NULL)");
  constexpr int rows = 60000;
  auto key = [](int i) {
    char k[16];
    std::snprintf(k, sizeof k, "id%010d", i * 7919 % 50000);
    return std::string(k);
  };
  // bad_row: the row whose n is not an integer (-1: none).
  auto csv_of = [&](int bad_row) {
    std::string csv = "id,s,k,n\r\n";
    for (int i = 0; i < rows; ++i)
      csv += std::to_string(i) + ",\"v" + std::to_string(i % 977) + " \"\"q\"\", x\r\nline " + std::to_string(i % 13) +
             "\"," + key(i) + "," + (i == bad_row ? "x" : std::to_string(i % 7)) + "\r\n";
    return csv;
  };
  std::string expected;
  for (int i = 0; i < rows; ++i)
    expected += std::to_string(i) + "\tv" + std::to_string(i % 977) + " \"q\", x\\r\\nline " + std::to_string(i % 13) +
                "\t" + key(i) + "\t" + std::to_string(i % 7) + "\n";
  const std::string path = (dir_ / "f.csv").string();
  auto write = [&](const std::string& data) {
    ASSERT_GT(data.size(), size_t{2} << 20);  // several segments
    std::FILE* out = std::fopen(path.c_str(), "wb");
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(std::fwrite(data.data(), 1, data.size(), out), data.size());
    std::fclose(out);
  };
  write(csv_of(-1));
  EXPECT_EQ(h_->run("COPY f FROM '" + path + "' (FORMAT csv, HEADER)"), "COPY 60000");
  EXPECT_EQ(h_->dump("f"), expected);
  const auto snap = h_->catalog().find_table("f");
  EXPECT_EQ(h_->store().dictionary(*snap, 2)->size(), 50000);

  // Row 40000, far past the first segment. Its line counts the header and
  // two lines per record, as PostgreSQL counts a CRLF inside quotes.
  write(csv_of(40000));
  const Error e = expect_error("COPY f FROM '" + path + "' (FORMAT csv, HEADER)", SqlState::invalid_text_representation,
                               "invalid input syntax for type integer: \"x\"");
  EXPECT_EQ(e.context(), "COPY f, line 80003, column n: \"x\"");
  EXPECT_EQ(h_->catalog().find_table("f")->row_count(), static_cast<uint64_t>(rows));
  EXPECT_EQ(h_->dump("f"), expected);
}

}  // namespace
