// Conditions, values and group keys computed from one stored text column are
// evaluated once per entry of the column's dictionary and looked up by each
// row's code (executor/dictionary_entry_values.hpp), over a dictionary of
// more entries than the compiler lists codes for: an equality with constants
// compares codes, a length or a regular expression's rewrite is a lookup, a
// CASE between the column and a text its dictionary holds is a key of the
// column's codes. Every answer is the generic path's (tally.engine =
// 'generic', which evaluates every row), NULLs included, and EXPLAIN says the
// engine evaluated the conditions, inputs and keys itself; what the lookup
// cannot give (an error on some entry, a non-NULL answer for a NULL value)
// stays on the host and still answers.
#include <gtest/gtest.h>

#include <string>

#include "executor/column_program_compiler.hpp"
#include "tests/executor/embedded_database.hpp"
#include "tests/executor/query_outcome.hpp"

namespace tally::executor {
namespace {

using testing::QueryOutcome;
using testing::run_simple_query;

// Distinct URLs: more than the compiler lists codes for.
constexpr int kUrls = kTextConditionEntries + 20000;

class DictionaryEntryValuesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // pages: 120,000 rows over kUrls distinct URLs (one in 40 NULL), a
    // referer that is NULL or '' on some rows, an engine id 0 on most.
    run("CREATE TABLE pages (id int, engine int, url text, referer varchar(60), counter int)");
    run("INSERT INTO pages SELECT g, CASE WHEN g % 5 = 0 THEN g % 3 ELSE 0 END, "
        "CASE WHEN g % 40 = 0 THEN NULL ELSE 'http://' || CASE WHEN g % 11 = 0 THEN 'www.' ELSE '' END || 'site' || "
        "(g % 97) || '.example/' || CASE WHEN g % 7 = 0 THEN 'google/' ELSE 'page/' END || (g % " +
        std::to_string(kUrls) + ") END, CASE WHEN g % 13 = 0 THEN NULL WHEN g % 17 = 0 THEN '' ELSE 'https://ref' || "
        "(g % 50) || '.org/x' || (g % 1000) END, g % 20 FROM generate_series(1, 120000) g");
  }
  QueryOutcome run(const std::string& sql) {
    QueryOutcome r = run_simple_query(db_.session(), sql);
    EXPECT_TRUE(r.ok) << sql << ": " << r.sqlstate << " " << r.message;
    return r;
  }
  std::string plan(const std::string& sql) {
    std::string text;
    for (const auto& row : run("EXPLAIN ANALYZE " + sql).rows) text += row[0].value_or("") + "\n";
    return text;
  }
  // `sql` answers as the generic path does; `stored` says whether the
  // engine must have taken the rows as stored chunks (its programs
  // compiled) or must not have.
  void expect(const std::string& sql, bool stored = true) {
    run("SET tally.engine = 'generic'");
    const auto want = run(sql).rows;
    run("SET tally.engine = 'auto'");
    EXPECT_FALSE(want.empty()) << sql;
    EXPECT_EQ(run(sql).rows, want) << sql;
    // EXPLAIN names the conditions, inputs and keys the engine evaluates.
    const std::string text = plan(sql);
    const bool programs = text.find(" on CPU engine: ") != std::string::npos ||
                          text.find(" on GPU engine: ") != std::string::npos ||
                          text.find("key programs the engine evaluates") != std::string::npos;
    EXPECT_EQ(programs, stored) << sql << "\n" << text;
  }
  testing::EmbeddedDatabase db_{"tally-entry-values", [](config::Config& c) { c.chunk_rows = 20000; }};
};

TEST_F(DictionaryEntryValuesTest, EqualitiesWithConstantsCompareCodes) {
  expect("SELECT counter, count(*) FROM pages WHERE url <> '' GROUP BY counter ORDER BY counter");
  expect("SELECT counter, count(*) FROM pages WHERE url = 'http://site5.example/page/5' GROUP BY counter ORDER BY 1");
  expect("SELECT count(*), sum(id) FROM pages WHERE url = 'not stored anywhere'");
  expect("SELECT count(*), sum(id) FROM pages WHERE url <> 'not stored anywhere'");
  expect("SELECT count(*), sum(id) FROM pages WHERE url IN ('http://site1.example/page/1', "
         "'http://www.site11.example/page/11', 'absent') OR counter = 3");
  expect("SELECT count(*) FROM pages WHERE url NOT IN ('http://site2.example/page/2', 'absent')");
  expect("SELECT count(*) FROM pages WHERE referer = '' AND url <> ''");
}

TEST_F(DictionaryEntryValuesTest, ValuesOfEachEntryAreLookedUp) {
  expect("SELECT counter, avg(length(url)), sum(length(url)), count(*) FROM pages WHERE url <> '' GROUP BY counter "
         "ORDER BY counter");
  expect("SELECT counter, max(strpos(url, 'google')), min(octet_length(url) * 2 - 1) FROM pages GROUP BY counter "
         "ORDER BY counter");
  expect("SELECT engine, sum(length(referer)), count(length(referer)) FROM pages GROUP BY engine ORDER BY engine");
  expect("SELECT count(*) FROM pages WHERE url LIKE '%google%' AND length(url) > 30");
  expect("SELECT counter, sum(nullif(length(url), 34)) FROM pages GROUP BY counter ORDER BY counter");
}

TEST_F(DictionaryEntryValuesTest, TextKeysComputedFromOneColumnAreCodedOncePerEntry) {
  expect("SELECT regexp_replace(url, '^https?://(?:www\\.)?([^/]+)/.*$', '\\1') AS k, avg(length(url)), count(*), "
         "min(url) FROM pages WHERE url <> '' GROUP BY k ORDER BY count(*) DESC, k LIMIT 25");
  expect("SELECT substr(referer, 1, 12) AS k, count(*) FROM pages GROUP BY k ORDER BY k NULLS FIRST");
  expect("SELECT engine, CASE WHEN engine = 0 THEN referer ELSE '' END AS src, count(*) FROM pages "
         "GROUP BY engine, src ORDER BY count(*) DESC, engine, src LIMIT 20");
  expect("SELECT CASE WHEN counter < 10 THEN url WHEN counter < 15 THEN NULL END AS u, count(*) FROM pages "
         "GROUP BY u ORDER BY count(*) DESC, u NULLS FIRST LIMIT 10");
}

TEST_F(DictionaryEntryValuesTest, WhatALookupCannotGiveStaysOnTheHost) {
  // A NULL URL's coalesce is not NULL, as a NULL code's lookup would be.
  expect("SELECT counter, sum(coalesce(length(url), -1)) FROM pages GROUP BY counter ORDER BY counter", false);
  // Some entries raise an error (not a number); the rows the WHERE keeps do
  // not, and a condition of the URL alone is decided per entry as it is.
  expect("SELECT count(*) FROM pages WHERE id = 5 AND substr(url, 12, 1)::int >= 0", false);
  expect("SELECT count(*) FROM pages WHERE url = 'http://site5.example/page/5' AND substr(url, 12, 1)::int >= 0");
  // A constant the URL dictionary lacks cannot be a code of a CASE key.
  expect("SELECT CASE WHEN engine = 0 THEN url ELSE 'none' END AS u, count(*) FROM pages GROUP BY u "
         "ORDER BY count(*) DESC, u LIMIT 5", false);
}

}  // namespace
}  // namespace tally::executor
