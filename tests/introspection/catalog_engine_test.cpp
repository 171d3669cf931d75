// Catalog SELECTs on the query engine (SystemScan over CatalogRelationProvider):
// real client statements (psqlODBC's connect-time look-up, psql's \dt and \d,
// pgjdbc's getColumns shape), reg* types, arrays, GROUP BY and WITH over the
// catalog, each checked against the rows PostgreSQL 15 gave for the same two
// tables (`CREATE TABLE t (a int NOT NULL, b text, c numeric(10,2))` and
// `CREATE TABLE sales (region varchar(20))`).
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "config/config.hpp"
#include "executor/database.hpp"
#include "executor/introspection/catalog_relation_provider.hpp"
#include "executor/introspection/reg_name_catalog.hpp"
#include "executor/parser.hpp"
#include "executor/sql_session.hpp"
#include "executor/value_codec.hpp"
#include "tests/executor/query_outcome.hpp"

namespace tally::executor::introspection {
namespace {

using Rows = std::vector<std::vector<std::optional<std::string>>>;

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

class CatalogEngine : public ::testing::Test {
 protected:
  CatalogEngine() {
    auto tables = std::make_unique<MemoryTableProvider>();
    for (const auto& t : source().tables) {
      std::vector<TableColumn> columns;
      for (const auto& c : t.columns) columns.push_back({c.name, c.type, c.not_null});
      tables->put(std::make_shared<MemoryTable>(t.name, columns, t.oid));
    }
    database_ = Database::open_with_tables(config::Config{}, std::move(tables));
    tally::SessionInfo info;
    info.user = "alice";
    info.database = "db";
    session_ = std::make_unique<SqlSession>(database_.get(), &database_->tables(), info);
    relations_.set_source(source());
    session_->set_system_relations(&relations_);
    install_reg_names(catalog_reg_names(source()));
  }
  ~CatalogEngine() override { install_reg_names(nullptr); }

  testing::QueryOutcome engine(const std::string& sql) {
    relations_.set_source(source());
    return testing::run_simple_query(*session_, sql);
  }

  CatalogRelationProvider relations_;
  std::unique_ptr<Database> database_;
  std::unique_ptr<SqlSession> session_;
};

const std::optional<std::string> kNull;

TEST_F(CatalogEngine, AnswersClientStatementsAsPostgreSql) {
  const std::pair<const char*, Rows> cases[] = {
      // psqlODBC's large-object type look-up.
      {"select oid, typbasetype from pg_type where typname = 'lo'", {}},
      {"SELECT oid, typname FROM pg_catalog.pg_type WHERE typname IN ('int4', 'numeric', 'varchar') ORDER BY oid",
       {{"23", "int4"}, {"1043", "varchar"}, {"1700", "numeric"}}},
      // psql 15's \dt.
      {"SELECT n.nspname as \"Schema\",\n  c.relname as \"Name\",\n  CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN "
       "'view' WHEN 'm' THEN 'materialized view' WHEN 'i' THEN 'index' WHEN 'S' THEN 'sequence' WHEN 't' THEN 'TOAST "
       "table' WHEN 'f' THEN 'foreign table' WHEN 'p' THEN 'partitioned table' WHEN 'I' THEN 'partitioned index' END as "
       "\"Type\",\n  pg_catalog.pg_get_userbyid(c.relowner) as \"Owner\"\nFROM pg_catalog.pg_class c\n     LEFT JOIN "
       "pg_catalog.pg_namespace n ON n.oid = c.relnamespace\n     LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam\nWHERE "
       "c.relkind IN ('r','p','')\n      AND n.nspname <> 'pg_catalog'\n      AND n.nspname !~ '^pg_toast'\n      AND "
       "n.nspname <> 'information_schema'\n  AND pg_catalog.pg_table_is_visible(c.oid)\nORDER BY 1,2;",
       {{"public", "sales", "table", "alice"}, {"public", "t", "table", "alice"}}},
      // psql 15's \d t: the table look-up and its column query.
      {"SELECT c.oid, n.nspname, c.relname FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n ON n.oid = "
       "c.relnamespace WHERE c.relname OPERATOR(pg_catalog.~) '^(t)$' COLLATE pg_catalog.default AND "
       "pg_catalog.pg_table_is_visible(c.oid) ORDER BY 2, 3;",
       {{"16384", "public", "t"}}},
      {"SELECT a.attname,\n  pg_catalog.format_type(a.atttypid, a.atttypmod),\n  (SELECT "
       "pg_catalog.pg_get_expr(d.adbin, d.adrelid, true)\n   FROM pg_catalog.pg_attrdef d\n   WHERE d.adrelid = a.attrelid "
       "AND d.adnum = a.attnum AND a.atthasdef),\n  a.attnotnull,\n  (SELECT c.collname FROM pg_catalog.pg_collation c, "
       "pg_catalog.pg_type t\n   WHERE c.oid = a.attcollation AND t.oid = a.atttypid AND a.attcollation <> "
       "t.typcollation) AS attcollation,\n  a.attidentity,\n  a.attgenerated\nFROM pg_catalog.pg_attribute a\nWHERE "
       "a.attrelid = '16384' AND a.attnum > 0 AND NOT a.attisdropped\nORDER BY a.attnum;",
       {{"a", "integer", kNull, "t", kNull, "", ""},
        {"b", "text", kNull, "f", kNull, "", ""},
        {"c", "numeric(10,2)", kNull, "f", kNull, "", ""}}},
      {"SELECT relname AS n FROM pg_class WHERE EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = pg_class.oid AND "
       "a.attname = 'region') UNION SELECT nspname FROM pg_namespace WHERE nspname LIKE 'pub%' UNION ALL SELECT 'public' "
       "ORDER BY 1 DESC",
       {{"sales"}, {"public"}, {"public"}}},
      {"SELECT DISTINCT attrelid FROM pg_attribute WHERE attrelid >= 16384 ORDER BY attrelid LIMIT 1", {{"16384"}}},
      {"SELECT column_name, data_type, is_nullable, numeric_precision FROM information_schema.columns WHERE table_name = "
       "'t' ORDER BY ordinal_position",
       {{"a", "integer", "NO", "32"}, {"b", "text", "YES", kNull}, {"c", "numeric", "YES", "10"}}},
      // pgjdbc's getColumns shape.
      {"SELECT * FROM (SELECT c.relname, a.attname, row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum) AS "
       "attnum, nullif(a.attidentity, '') AS ident FROM pg_catalog.pg_class c JOIN pg_catalog.pg_attribute a ON "
       "(a.attrelid = c.oid) WHERE a.attnum > 0 AND c.relnamespace = 2200 AND c.relname LIKE '%') c WHERE true AND "
       "attname LIKE '%' ORDER BY c.relname DESC, attnum",
       {{"t", "a", "1", kNull}, {"t", "b", "2", kNull}, {"t", "c", "3", kNull}, {"sales", "region", "1", kNull}}},
      // Every system relation in pg_class has as many pg_attribute rows as relnatts.
      {"SELECT c.relname, c.relkind, c.relnatts, (SELECT attnum FROM pg_attribute a WHERE a.attrelid = c.oid ORDER BY "
       "attnum DESC LIMIT 1) FROM pg_class c WHERE c.relnamespace = 11 AND c.relname IN ('pg_class', 'pg_settings', "
       "'pg_views') ORDER BY 1",
       {{"pg_class", "r", "33", "33"}, {"pg_settings", "v", "17", "17"}, {"pg_views", "v", "4", "4"}}},
      // User tables are the only relations outside pg_catalog and information_schema.
      {"SELECT relname FROM pg_class WHERE relnamespace NOT IN (11, 13184) ORDER BY 1", {{"sales"}, {"t"}}},
      {"SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1", {{"sales"}, {"t"}}},
      // pg_settings in base units with PostgreSQL's metadata; is_superuser is not in it.
      {"SELECT name, setting, unit, vartype, context, source, boot_val, min_val FROM pg_settings ORDER BY name",
       {{"statement_timeout", "5000", "ms", "integer", "user", "session", "0", "0"},
        {"tally.engine", "auto", kNull, "string", "user", "default", "auto", kNull},
        {"work_mem", "4096", "kB", "integer", "user", "default", "4096", "64"}}},
  };
  for (const auto& [sql, rows] : cases) {
    SCOPED_TRACE(sql);
    const auto got = engine(sql);
    EXPECT_TRUE(got.ok) << got.sqlstate << " " << got.message;
    EXPECT_EQ(got.rows, rows);
  }
}

TEST_F(CatalogEngine, ResultTypesAsPostgreSql) {
  const std::pair<const char*, std::vector<uint32_t>> cases[] = {
      {"select oid, typbasetype from pg_type where typname = 'lo'", {26, 26}},
      // name, and text for a CASE of literals.
      {"SELECT n.nspname, CASE c.relkind WHEN 'r' THEN 'table' END, c.relname FROM pg_class c JOIN pg_namespace n ON "
       "n.oid = c.relnamespace WHERE c.oid = 16384",
       {19, 25, 19}},
      {"SELECT conkey, confkey FROM pg_constraint", {1005, 1005}},
  };
  for (const auto& [sql, oids] : cases) {
    SCOPED_TRACE(sql);
    const auto got = engine(sql);
    EXPECT_TRUE(got.ok) << got.sqlstate << " " << got.message;
    EXPECT_EQ(got.oids, oids);
  }
}

TEST_F(CatalogEngine, ErrorsAsPostgreSql) {
  const std::pair<const char*, const char*> cases[] = {
      {"SELECT nosuch FROM pg_class", "42703"},
      {"SELECT 1 FROM pg_class, nosuch", "42P01"},
      {"SELECT oid FROM pg_class, pg_type", "42702"},
      {"SELECT 1 FROM pg_class WHERE relname = 1", "42883"},
  };
  for (const auto& [sql, state] : cases) {
    SCOPED_TRACE(sql);
    const auto got = engine(sql);
    EXPECT_FALSE(got.ok);
    EXPECT_EQ(got.sqlstate, state);
  }
}

TEST_F(CatalogEngine, AnswersWhatOnlyTheEngineCan) {
  // Expected rows from PostgreSQL 15 holding the same two tables.
  const std::pair<const char*, Rows> cases[] = {
      {"SELECT relkind, count(*) FROM pg_class WHERE relnamespace = 2200 GROUP BY relkind", {{"r", "2"}}},
      {"WITH r AS (SELECT oid, relname FROM pg_class WHERE relnamespace = 2200) SELECT relname FROM r ORDER BY 1",
       {{"sales"}, {"t"}}},
      {"SELECT typname FROM pg_type JOIN (SELECT 23::oid AS oid) x USING (oid)", {{"int4"}}},
      {"SELECT spcname, pg_tablespace_location(oid) FROM pg_tablespace ORDER BY 1", {{"pg_default", ""}, {"pg_global", ""}}},
      {"SELECT extname, extversion, extnamespace FROM pg_extension", {{"plpgsql", "1.0", "11"}}},
      // reg* types: OIDs that read and print as names (t's OID is this
      // test's own, 16384; PostgreSQL's is whatever it assigned).
      {"SELECT 't'::regclass::oid = 16384, 16390::regclass, 1043::regtype::text",
       {{"t", "sales", "character varying"}}},
      {"SELECT 'pg_settings'::regclass::oid, 13425::regclass, 'pg_catalog.pg_type'::regclass",
       {{"12104", "information_schema.tables", "pg_type"}}},
      {"SELECT 23::regtype, 'integer'::regtype::oid, 'int4'::regtype::oid, 'character varying'::regtype::oid, "
       "0::regclass, '-'::regtype::oid, pg_typeof(1.5)",
       {{"integer", "23", "23", "1043", "-", "0", "numeric"}}},
      {"SELECT 'T'::regclass, relname FROM pg_class c WHERE c.oid = 'sales'::regclass", {{"t", "sales"}}},
      {"SELECT oid::regclass, relnamespace FROM pg_class WHERE relname IN ('t', 'pg_class') ORDER BY oid::regclass",
       {{"pg_class", "11"}, {"t", "2200"}}},
      {"SELECT 'pg_catalog'::regnamespace, 'public'::regnamespace::oid, 2200::regnamespace, 0::regnamespace, "
       "'-'::regnamespace::oid, 99::regnamespace::text",
       {{"pg_catalog", "2200", "public", "-", "0", "pg_toast"}}},
      {"SELECT 123456::regproc, 0::regproc, 0::regoper, 123456::regoper, pg_typeof('public'::regnamespace), "
       "pg_typeof(1::regproc), 'public'::regnamespace = 2200, 2200 = 'public'::regnamespace",
       {{"123456", "-", "0", "123456", "regnamespace", "regproc", "t", "t"}}},
      // sqlsmith's first start-up query.
      {"SELECT CASE typnamespace WHEN 'pg_catalog'::regnamespace THEN quote_ident(typname) ELSE format('%I.%I', "
       "typnamespace::regnamespace, typname) END FROM pg_type WHERE typname = 'int4'",
       {{"int4"}}},
      {"SELECT current_schemas(true), current_schemas(false), array_to_string(current_schemas(true), ',')",
       {{"{pg_catalog,public}", "{public}", "pg_catalog,public"}}},
      {"SELECT format('%s|%I|%L|%L|%%|%s', 'a b', 'A b', 'it''s', NULL, NULL), format('%I', 'abc')",
       {{"a b|\"A b\"|'it''s'|NULL|%|", "abc"}}},
      {"SELECT json_build_object('a', 1, 'b', true, 'c', 'x\"y', 'd', NULL, 'e', 2::int8)",
       {{"{\"a\" : 1, \"b\" : true, \"c\" : \"x\\\"y\", \"d\" : null, \"e\" : 2}"}}},
      // Arrays: ANY/ALL, ARRAY[...], ARRAY(subquery), ||, subscripts, unnest.
      {"SELECT 2 = ANY ('{1,2,NULL}'), 3 = ANY ('{1,2,NULL}'), 3 <> ALL ('{1,2}'), 'b' = ANY ('{a,\"b\"}'), "
       "NULL::int = ANY ('{}'), 1 < ALL ('{2,3}'), 2 <> ALL ('{1,NULL}'), 1 <> ALL ('{1,NULL}')",
       {{"t", std::nullopt, "t", "t", "f", "t", std::nullopt, "f"}}},
      {"SELECT attname FROM pg_attribute WHERE attrelid = 't'::regclass AND attnum = ANY ('{1,3}') ORDER BY 1",
       {{"a"}, {"c"}}},
      {"SELECT relname FROM pg_class WHERE relkind = ANY (ARRAY['r', 'p']) AND relnamespace = 2200 ORDER BY 1",
       {{"sales"}, {"t"}}},
      {"SELECT array_to_string(ARRAY['a', NULL, 'c'], ','), array_to_string(ARRAY['a', NULL, 'c'], ',', '*'), "
       "cardinality('{x,y}'::text[]), array_length('{}'::text[], 1), ('{p,q}'::text[])[2], "
       "ARRAY['x y', NULL, '', 'NULL', 'a\"b']",
       {{"a,c", "a,*,c", "2", std::nullopt, "q", "{\"x y\",NULL,\"\",\"NULL\",\"a\\\"b\"}"}}},
      {"SELECT x, n FROM unnest('{a,b,NULL}'::text[]) WITH ORDINALITY AS u(x, n)",
       {{"a", "1"}, {"b", "2"}, {std::nullopt, "3"}}},
      {"SELECT ARRAY['a'] || '{b,c}', ARRAY['a'] || 'b'::text, NULL::text[] || ARRAY['z'], "
       "array_lower('1 2'::int2vector, 1), array_upper('1 2'::int2vector, 1), ('3 4'::int2vector)[0]",
       {{"{a,b,c}", "{a,b}", "{z}", "0", "1", "3"}}},
      // psql's \d (reloptions of the table and its TOAST table).
      {"SELECT pg_catalog.array_to_string(c.reloptions || array(select 'toast.' || x from pg_catalog.unnest(tc.reloptions) "
       "x), ', '), array(select relname from pg_class where relnamespace = 2200 order by 1), "
       "array_to_string(array(select nspname from pg_namespace where nspname like 'p%' order by 1), '+') FROM "
       "pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_class tc ON (c.reltoastrelid = tc.oid) WHERE c.oid = '16384'",
       {{"", "{sales,t}", "pg_catalog+pg_toast+public"}}},
  };
  for (const auto& [sql, rows] : cases) {
    SCOPED_TRACE(sql);
    const auto got = engine(sql);
    EXPECT_TRUE(got.ok) << got.sqlstate << " " << got.message;
    EXPECT_EQ(got.rows, rows);
  }
}

TEST_F(CatalogEngine, RegTypesRejectWhatPostgreSqlRejects) {
  // SQLSTATEs from PostgreSQL 15.
  const std::pair<const char*, const char*> cases[] = {
      {"SELECT 'nosuch'::regclass", "42P01"},
      {"SELECT '\"T\"'::regclass", "42P01"},
      {"SELECT 'nosuch'::regtype", "42704"},
      {"SELECT 1.5::regclass", "42846"},
      {"SELECT 'nosuch'::regnamespace", "3F000"},
      {"SELECT 'nosuchfn'::regproc", "42883"},
      {"SELECT 'nosuch_op'::regoper", "42883"},
      {"SELECT format('%I', NULL)", "22004"},
  };
  for (const auto& [sql, state] : cases) {
    SCOPED_TRACE(sql);
    const auto got = engine(sql);
    EXPECT_FALSE(got.ok);
    EXPECT_EQ(got.sqlstate, state);
  }
}

TEST_F(CatalogEngine, UserTablesShadowUnqualifiedCatalogNamesOnly) {
  EXPECT_TRUE(engine("SELECT a, b FROM t").ok);
  EXPECT_FALSE(engine("SELECT 1 FROM public.pg_class").ok);
  EXPECT_FALSE(engine("SELECT 1 FROM information_schema.pg_class").ok);
}

}  // namespace
}  // namespace tally::executor::introspection
