// The catalog evaluator on parse trees of real client statements (psqlODBC's
// connect-time look-up, psql's \dt and \d column query), checked against what
// PostgreSQL 15 answers for the same tables (values taken from a PostgreSQL 15
// with `CREATE TABLE t (a int NOT NULL, b text, c numeric(10,2))`).
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "executor/introspection/catalog_query.hpp"
#include "executor/introspection/reg_name_catalog.hpp"
#include "executor/parser.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor::introspection {
namespace {

CatalogSource source() {
  CatalogSource s;
  s.database = "db";
  s.user = "alice";
  UserTable t;
  t.oid = 16384;
  t.name = "t";
  t.columns = {{"a", SqlType{TypeId::int4}, true}, {"b", SqlType{TypeId::text}, false},
               {"c", SqlType::numeric(10, 2), false}};
  s.tables.push_back(t);
  UserTable u;
  u.oid = 16390;
  u.name = "sales";
  u.columns = {{"region", SqlType::varchar(20), false}};
  s.tables.push_back(u);
  // What SHOW ALL of a session gives (catalog_session.cpp fills this).
  s.settings = {{"statement_timeout", "5s", "0", "Sets the maximum allowed duration of any statement."},
                {"work_mem", "4MB", "4MB", "Sets the maximum memory to be used for query workspaces."},
                {"is_superuser", "on", "on", "Shows whether the current user is a superuser."},
                {"tally.engine", "auto", "auto", "Aggregation engine."}};
  return s;
}

// Runs sql and renders every cell as text ("NULL" for NULL), row by row.
std::vector<std::vector<std::string>> run(const std::string& sql, ResultSet* out = nullptr) {
  auto statements = parse_sql(sql);
  // regclass values print the names of this catalog (as a session installs them).
  install_reg_names(catalog_reg_names(source()));
  ResultSet r = run_catalog_query(statements.at(0).body(), source(), {});
  std::vector<std::vector<std::string>> rows(r.rows);
  for (size_t i = 0; i < r.rows; ++i) {
    for (const auto& column : r.columns) {
      if (column.null_at(i)) {
        rows[i].push_back("NULL");
      } else {
        std::string text;
        append_text(text, column, i);
        rows[i].push_back(text);
      }
    }
  }
  if (out) *out = std::move(r);
  return rows;
}

SqlState state_of(const std::string& sql) {
  try {
    run(sql);
  } catch (const Error& e) {
    return e.state();
  }
  return SqlState::successful_completion;
}

TEST(CatalogQuery, PsqlOdbcLargeObjectLookupFindsNothingWithOidColumns) {
  ResultSet r;
  auto rows = run("select oid, typbasetype from pg_type where typname = 'lo'", &r);
  EXPECT_TRUE(rows.empty());
  ASSERT_EQ(r.fields.size(), 2u);
  EXPECT_EQ(r.fields[0].name, "oid");
  EXPECT_EQ(r.fields[0].type_oid, 26u);
  EXPECT_EQ(r.fields[1].name, "typbasetype");
  EXPECT_EQ(r.fields[1].type_oid, 26u);
}

TEST(CatalogQuery, TypeLookupByNameGivesRealOids) {
  auto rows = run("SELECT oid, typname FROM pg_catalog.pg_type WHERE typname IN ('int4', 'numeric', 'varchar') ORDER BY oid");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"23", "int4"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"1043", "varchar"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"1700", "numeric"}));
}

TEST(CatalogQuery, PsqlListTables) {
  // psql 15's \dt.
  ResultSet r;
  auto rows = run(
      "SELECT n.nspname as \"Schema\",\n  c.relname as \"Name\",\n  CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN "
      "'view' WHEN 'm' THEN 'materialized view' WHEN 'i' THEN 'index' WHEN 'S' THEN 'sequence' WHEN 't' THEN 'TOAST "
      "table' WHEN 'f' THEN 'foreign table' WHEN 'p' THEN 'partitioned table' WHEN 'I' THEN 'partitioned index' END as "
      "\"Type\",\n  pg_catalog.pg_get_userbyid(c.relowner) as \"Owner\"\nFROM pg_catalog.pg_class c\n     LEFT JOIN "
      "pg_catalog.pg_namespace n ON n.oid = c.relnamespace\n     LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam\nWHERE "
      "c.relkind IN ('r','p','')\n      AND n.nspname <> 'pg_catalog'\n      AND n.nspname !~ '^pg_toast'\n      AND "
      "n.nspname <> 'information_schema'\n  AND pg_catalog.pg_table_is_visible(c.oid)\nORDER BY 1,2;",
      &r);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"public", "sales", "table", "alice"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"public", "t", "table", "alice"}));
  EXPECT_EQ(r.fields[0].type_oid, 19u);  // name
  EXPECT_EQ(r.fields[2].type_oid, 25u);  // text (CASE of literals)
}

TEST(CatalogQuery, PsqlDescribeColumns) {
  // psql 15's \d t column query (the attribute part).
  auto rows = run(
      "SELECT a.attname,\n  pg_catalog.format_type(a.atttypid, a.atttypmod),\n  (SELECT "
      "pg_catalog.pg_get_expr(d.adbin, d.adrelid, true)\n   FROM pg_catalog.pg_attrdef d\n   WHERE d.adrelid = a.attrelid "
      "AND d.adnum = a.attnum AND a.atthasdef),\n  a.attnotnull,\n  (SELECT c.collname FROM pg_catalog.pg_collation c, "
      "pg_catalog.pg_type t\n   WHERE c.oid = a.attcollation AND t.oid = a.atttypid AND a.attcollation <> "
      "t.typcollation) AS attcollation,\n  a.attidentity,\n  a.attgenerated\nFROM pg_catalog.pg_attribute a\nWHERE "
      "a.attrelid = '16384' AND a.attnum > 0 AND NOT a.attisdropped\nORDER BY a.attnum;");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"a", "integer", "NULL", "t", "NULL", "", ""}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"b", "text", "NULL", "f", "NULL", "", ""}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"c", "numeric(10,2)", "NULL", "f", "NULL", "", ""}));
}

TEST(CatalogQuery, RegexLookupAndRegclassCasts) {
  auto rows = run(
      "SELECT c.oid, n.nspname, c.relname FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n ON n.oid = "
      "c.relnamespace WHERE c.relname OPERATOR(pg_catalog.~) '^(t)$' COLLATE pg_catalog.default AND "
      "pg_catalog.pg_table_is_visible(c.oid) ORDER BY 2, 3;");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"16384", "public", "t"}));
  EXPECT_EQ(run("SELECT 't'::regclass::oid, 16390::regclass, 1043::regtype::text")[0],
            (std::vector<std::string>{"16384", "sales", "varchar"}));
  EXPECT_EQ(state_of("SELECT 'nosuch'::regclass FROM pg_class"), SqlState::undefined_table);
}

TEST(CatalogQuery, UnionExistsDistinctAndLimit) {
  auto rows = run(
      "SELECT relname AS n FROM pg_class WHERE EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = pg_class.oid AND "
      "a.attname = 'region') UNION SELECT nspname FROM pg_namespace WHERE nspname LIKE 'pub%' UNION ALL SELECT 'public' "
      "ORDER BY 1 DESC");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0][0], "sales");
  EXPECT_EQ(rows[1][0], "public");
  EXPECT_EQ(rows[2][0], "public");
  EXPECT_EQ(run("SELECT DISTINCT attrelid FROM pg_attribute WHERE attrelid >= 16384 ORDER BY attrelid LIMIT 1").at(0).at(0), "16384");
}

TEST(CatalogQuery, InformationSchemaColumns) {
  auto rows = run(
      "SELECT column_name, data_type, is_nullable, numeric_precision FROM information_schema.columns WHERE table_name = "
      "'t' ORDER BY ordinal_position");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"a", "integer", "NO", "32"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"c", "numeric", "YES", "10"}));
}

TEST(CatalogQuery, RowNumberPerPartitionAsPgjdbcGetColumns) {
  auto rows = run(
      "SELECT * FROM (SELECT c.relname, a.attname, row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum) AS "
      "attnum, nullif(a.attidentity, '') AS ident FROM pg_catalog.pg_class c JOIN pg_catalog.pg_attribute a ON "
      "(a.attrelid = c.oid) WHERE a.attnum > 0 AND c.relnamespace = 2200 AND c.relname LIKE '%') c WHERE true AND "
      "attname LIKE '%' ORDER BY "
      "c.relname DESC, attnum");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"t", "a", "1", "NULL"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"t", "c", "3", "NULL"}));
  EXPECT_EQ(rows[3], (std::vector<std::string>{"sales", "region", "1", "NULL"}));
}

TEST(CatalogQuery, TextArraysFromArraySubqueriesAndUnnest) {
  // psql's \\d+ option list: reloptions || array(select 'toast.' || x from unnest(...)).
  auto rows = run(
      "SELECT pg_catalog.array_to_string(c.reloptions || array(select 'toast.' || x from pg_catalog.unnest(tc.reloptions) "
      "x), ', '), array(select relname from pg_class where relnamespace = 2200 order by 1), "
      "array_to_string(array(select nspname from "
      "pg_namespace where nspname like 'p%' order by 1), '+') FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_class tc "
      "ON (c.reltoastrelid = tc.oid) WHERE c.oid = '16384'");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"", "{sales,t}", "pg_catalog+pg_toast+public"}));
}

TEST(CatalogQuery, UnsupportedConstructsAreCleanErrors) {
  EXPECT_EQ(state_of("SELECT rank() OVER () FROM pg_class"), SqlState::feature_not_supported);
  EXPECT_EQ(state_of("SELECT relkind, count(*) FROM pg_class GROUP BY relkind"), SqlState::feature_not_supported);
  EXPECT_EQ(state_of("SELECT nosuch FROM pg_class"), SqlState::undefined_column);
  EXPECT_EQ(state_of("SELECT 1 FROM pg_class, nosuch"), SqlState::undefined_table);
  EXPECT_EQ(state_of("SELECT 1 FROM pg_class, t"), SqlState::feature_not_supported);
  EXPECT_EQ(state_of("SELECT oid FROM pg_class, pg_type"), SqlState::ambiguous_column);
  EXPECT_EQ(state_of("SELECT 1 FROM pg_class WHERE relname = 1"), SqlState::undefined_function);
}

TEST(CatalogQuery, ReadsCatalogOnlyForCatalogRelations) {
  auto s = source();
  EXPECT_TRUE(reads_catalog(parse_sql("select 1 from pg_type").at(0).body(), s));
  EXPECT_TRUE(reads_catalog(parse_sql("select 1 from t where exists (select 1 from pg_catalog.pg_class)").at(0).body(), s));
  EXPECT_FALSE(reads_catalog(parse_sql("select a from t").at(0).body(), s));
  s.tables.push_back(UserTable{16400, "public", "pg_type", {}, 0});
  EXPECT_FALSE(reads_catalog(parse_sql("select 1 from pg_type").at(0).body(), s));
  EXPECT_TRUE(reads_catalog(parse_sql("select 1 from pg_catalog.pg_type").at(0).body(), s));
}

}  // namespace
TEST(CatalogQuery, SystemRelationsAreListedWithTheirColumns) {
  // Every system relation in pg_class has as many pg_attribute rows as relnatts.
  auto rows = run(
      "SELECT c.relname, c.relkind, c.relnatts, (SELECT attnum FROM pg_attribute a WHERE a.attrelid = c.oid ORDER BY "
      "attnum DESC LIMIT 1) "
      "FROM pg_class c WHERE c.relnamespace = 11 AND c.relname IN ('pg_class', 'pg_settings', 'pg_views') ORDER BY 1");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"pg_class", "r", "33", "33"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"pg_settings", "v", "17", "17"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"pg_views", "v", "4", "4"}));
  EXPECT_EQ(run("SELECT 'pg_settings'::regclass::oid, 13425::regclass, 'pg_catalog.pg_type'::regclass")[0],
            (std::vector<std::string>{"12104", "information_schema.tables", "pg_type"}));
  // User tables are still the only ones outside pg_catalog / information_schema.
  auto user = run("SELECT relname FROM pg_class WHERE relnamespace NOT IN (11, 13184) ORDER BY 1");
  ASSERT_EQ(user.size(), 2u);
  EXPECT_EQ(user[0][0], "sales");
  EXPECT_EQ(run("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1").size(), 2u);
}

TEST(CatalogQuery, PgSettingsInBaseUnitsWithPostgresMetadata) {
  auto rows = run("SELECT name, setting, unit, vartype, context, source, boot_val, min_val FROM pg_settings ORDER BY name");
  ASSERT_EQ(rows.size(), 3u);  // is_superuser is not in PostgreSQL's pg_settings
  EXPECT_EQ(rows[0], (std::vector<std::string>{"statement_timeout", "5000", "ms", "integer", "user", "session", "0", "0"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"tally.engine", "auto", "NULL", "string", "user", "default", "auto", "NULL"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"work_mem", "4096", "kB", "integer", "user", "default", "4096", "64"}));
}

}  // namespace tally::executor::introspection
