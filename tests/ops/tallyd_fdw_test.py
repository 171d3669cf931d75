#!/usr/bin/env python3
"""Tally as a postgres_fdw shard of a stock PostgreSQL 15 coordinator:
with use_remote_estimate 'true' the coordinator plans from Tally's EXPLAIN
(each node's "(cost=S..T rows=R width=W)", which get_remote_estimate parses)
and answers as a PostgreSQL holding the same rows; ANALYZE of the foreign
table works (pg_relation_size(...::regclass) / 8192, then a sample through a
cursor). Starts a scratch tallyd (tallyd_lifecycle_test.Tallyd) and a
scratch PostgreSQL 15 (psql_describe_test.Postgres).
Usage: tallyd_fdw_test.py TALLYD"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "introspection"))
import psql_describe_test as pg  # noqa: E402
import tallyd_lifecycle_test as lifecycle  # noqa: E402

ROWS = 20_000
QUERIES = [
    "SELECT count(*), sum(v) FROM sales",
    "SELECT k, count(*), sum(v) FROM sales GROUP BY k ORDER BY k",
    "SELECT k, v FROM sales WHERE v < 50 ORDER BY v",
    "SELECT k, v FROM sales ORDER BY v DESC LIMIT 5",
]


class ForeignShard(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.tally = lifecycle.Tallyd(os.path.join(cls.tmp.name, "data"), os.path.join(cls.tmp.name, "tallyd.log"))
        r = cls.tally.psql("CREATE TABLE sales (k bigint, v bigint)")
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
        rows = "".join(f"{i % 100}\t{i}\n" for i in range(ROWS))
        r = cls.tally.psql("COPY sales FROM STDIN", stdin=rows)
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
        cls.pg = pg.Postgres("coord", "coord")
        for statement in [
            "CREATE EXTENSION postgres_fdw",
            f"CREATE SERVER shard FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', "
            f"port '{cls.tally.port}', dbname 'tally', use_remote_estimate 'true')",
            "CREATE USER MAPPING FOR coord SERVER shard OPTIONS (user 'tally')",
            "CREATE FOREIGN TABLE sales (k bigint, v bigint) SERVER shard OPTIONS (table_name 'sales')",
            # The oracle: the same rows in the coordinator itself.
            f"CREATE TABLE local_sales AS SELECT (i % 100)::bigint AS k, i::bigint AS v FROM generate_series(0, {ROWS - 1}) AS i",
        ]:
            cls.pg.sql("coord", "coord", statement)

    @classmethod
    def tearDownClass(cls):
        cls.pg.stop()
        cls.tally.kill()
        cls.tmp.cleanup()

    def coordinator(self, sql):
        r = subprocess.run([pg.PSQL, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", self.pg.conninfo("coord", "coord"),
                            "-c", sql], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr + self.tally.log_text()[-3000:])
        return r.stdout

    def test_explain_first_line_has_costs(self):
        # What get_remote_estimate reads: the last "(" of the first line.
        r = self.tally.psql("EXPLAIN SELECT k, v FROM sales WHERE v < 50")
        self.assertEqual(r.returncode, 0, r.stderr)
        first = r.stdout.splitlines()[0]
        m = re.search(r"\(cost=(\d+\.\d\d)\.\.(\d+\.\d\d) rows=(\d+) width=(\d+)\)$", first)
        self.assertIsNotNone(m, first)
        self.assertLessEqual(float(m.group(1)), float(m.group(2)))
        r = self.tally.psql("EXPLAIN SELECT k, count(*) FROM sales GROUP BY k")
        self.assertEqual(r.returncode, 0, r.stderr)
        first = r.stdout.splitlines()[0]
        m = re.search(r"rows=(\d+) width=(\d+)\)$", first)
        self.assertIsNotNone(m, first)
        # 100 keys, from the chunks' sketches (within their error).
        self.assertTrue(90 <= int(m.group(1)) <= 110, first)

    def test_use_remote_estimate_plans_and_answers(self):
        for sql in QUERIES:
            plan = self.coordinator("EXPLAIN VERBOSE " + sql)
            self.assertIn("Foreign", plan)
            self.assertEqual(self.coordinator(sql), self.coordinator(sql.replace("sales", "local_sales")), sql)

    def test_relation_size(self):
        r = self.tally.psql("SELECT pg_catalog.pg_relation_size('public.sales'::pg_catalog.regclass) / 8192 > 0, "
                            "pg_total_relation_size('sales') = pg_relation_size('sales'), pg_indexes_size('sales')")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "t|t|0")
        r = self.tally.psql("SELECT pg_relation_size('nosuch'::regclass)")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("42P01", r.stderr)

    def test_analyze_foreign_table(self):
        self.coordinator("ANALYZE sales")
        rows = self.coordinator("SELECT reltuples FROM pg_class WHERE relname = 'sales'").strip()
        self.assertEqual(float(rows), ROWS)
        self.assertEqual(self.coordinator("SELECT count(*) FROM sales WHERE k = 7").strip(), str(ROWS // 100))


if __name__ == "__main__":
    lifecycle.TALLYD = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
