#!/usr/bin/env python3
"""Bad input to joins and subqueries answers or fails cleanly, never a crash:
a join whose build side exceeds cpu_memory_budget fails with 53200 (out of
memory) and a detail that names the budget, while one that fits answers; 100
nested subqueries (scalar, in FROM, IN) answer 1 as PostgreSQL 15 does; a
query nested past the parser's limit fails with PostgreSQL's 42601; a
10,000-item IN list answers. Expected counts follow from the generated data
(id = 0 .. ROWS-1, k = id % 1000). Starts a scratch tallyd
(tallyd_lifecycle_test.Tallyd). Usage: tallyd_join_bounds_test.py TALLYD"""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tallyd_lifecycle_test as lifecycle  # noqa: E402

ROWS = 200_000
BUDGET = "1MB"  # the build side of b joined to itself holds ROWS int8 ids: 1.6 MB
NESTING = 100
IN_ROWS = 20_000


class JoinBounds(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.server = lifecycle.Tallyd(os.path.join(cls.tmp.name, "data"), os.path.join(cls.tmp.name, "tallyd.log"),
                                      cpu_memory_budget=BUDGET)
        cls.must("CREATE TABLE d (x int)")
        cls.must("INSERT INTO d VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)")
        # COPY, not CREATE TABLE AS: a query's result rows count against the
        # budget too, and these would not fit in it.
        cls.must("CREATE TABLE b (id bigint, k bigint)")
        rows = "".join(f"{i}\t{i % 1000}\n" for i in range(ROWS))
        r = subprocess.run(cls.server.psql_args(), input="COPY b FROM STDIN;\n" + rows + "\\.\n",
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError("COPY b: " + r.stderr)
        assert cls.one("SELECT count(*) FROM b") == (0, str(ROWS), "")
        # The IN list's rows: an IN list is tested item by item per row.
        cls.must(f"CREATE TABLE s AS SELECT id FROM b WHERE id < {IN_ROWS}")

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()
        cls.tmp.cleanup()

    @classmethod
    def one(cls, sql):
        """(exit status, output, error text) of sql in a new session (on stdin: long SQL)."""
        r = subprocess.run(cls.server.psql_args(), input=sql + ";\n", capture_output=True, text=True, timeout=300)
        return r.returncode, r.stdout.strip(), r.stderr.strip()

    @classmethod
    def must(cls, sql):
        status, _, error = cls.one(sql)
        if status != 0:
            raise RuntimeError(sql[:200] + ": " + error)

    def assert_alive(self):
        self.assertEqual(self.one("SELECT 1"), (0, "1", ""))

    def test_build_side_over_budget_is_53200(self):
        status, _, error = self.one("SELECT count(*) FROM b b1 JOIN b b2 ON b1.id = b2.id")
        self.assertNotEqual(status, 0)
        self.assertIn("53200", error)
        self.assertIn("cpu_memory_budget", error)
        self.assert_alive()

    def test_build_side_within_budget_answers(self):
        # k < 10 for 10 of every 1000 ids.
        self.assertEqual(self.one("SELECT count(*) FROM b JOIN d ON b.k = d.x"), (0, str(ROWS // 100), ""))

    def test_nested_scalar_subqueries(self):
        sql = "SELECT " + "(SELECT " * NESTING + "1" + ")" * NESTING
        self.assertEqual(self.one(sql), (0, "1", ""))

    def test_nested_subqueries_in_from(self):
        sql = ("SELECT a FROM " + "(SELECT a FROM " * NESTING + "(SELECT 1 AS a) s0" +
               "".join(f") s{i + 1}" for i in range(NESTING)))
        self.assertEqual(self.one(sql), (0, "1", ""))

    def test_nested_in_subqueries(self):
        sql = "SELECT 1 WHERE 1 IN " + "(SELECT 1 WHERE 1 IN " * NESTING + "(SELECT 1)" + ")" * NESTING
        self.assertEqual(self.one(sql), (0, "1", ""))

    def test_nesting_past_the_parser_limit_fails_cleanly(self):
        depth = 10_000
        status, _, error = self.one("SELECT " + "(SELECT " * depth + "1" + ")" * depth)
        self.assertNotEqual(status, 0)
        self.assertIn("42601", error)
        self.assert_alive()

    def test_in_list_of_10000_items(self):
        items = ", ".join(str(i) for i in range(0, 30_000, 3))
        inside = (IN_ROWS + 2) // 3  # the multiples of 3 below IN_ROWS
        self.assertEqual(self.one(f"SELECT count(*) FROM s WHERE id IN ({items})"), (0, str(inside), ""))
        self.assertEqual(self.one(f"SELECT count(*) FROM s WHERE id NOT IN ({items})"), (0, str(IN_ROWS - inside), ""))


if __name__ == "__main__":
    lifecycle.TALLYD = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
