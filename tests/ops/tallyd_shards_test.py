#!/usr/bin/env python3
"""Three Tally shards (CPU engine) behind a stock PostgreSQL 15 coordinator.

The coordinator holds `sales`, PARTITION BY HASH (id), whose three partitions
are postgres_fdw foreign tables, one per shard (use_remote_estimate 'true').
The oracle is `local_sales` in the same coordinator: the same rows, hash
partitioned the same way into ordinary tables, so PostgreSQL itself says which
rows each shard must hold and what every query must answer. Asserts:
- rows loaded with scripts/shard_load.py (staged, then INSERTed through the
  partitioned table) and INSERTed through the coordinator land on the shard
  PostgreSQL routes them to; a load with a bad row leaves every shard as it was;
- ANALYZE of the foreign partitions reads each shard's row count, and the
  coordinator's row estimates come from the shards' EXPLAIN;
- with enable_partitionwise_aggregate, GROUP BY on the distribution key runs
  whole on the shards (an aggregate in each Remote SQL), and the two-phase view
  (sum/count per shard foreign table, final aggregation on the coordinator)
  pushes its partials; GROUP BY on another key alone does not (what the docs
  say); every answer equals local_sales' (sorted rows);
- UPDATE and DELETE through the coordinator are pushed down (Foreign Update /
  Foreign Delete) and change exactly the rows they change in local_sales, on the
  right shards; a coordinator ROLLBACK leaves the shards as they were; an UPDATE
  postgres_fdw cannot push down (it needs ctid, which Tally does not have) fails
  cleanly and changes nothing;
- a join on the distribution key (enable_partitionwise_join) runs on the shards;
- SELECT ... FOR UPDATE on a shard refuses what PostgreSQL refuses, and a
  locked row makes a writer of it wait, as in PostgreSQL.
Starts scratch tallyds (tallyd_lifecycle_test.Tallyd) and a scratch
PostgreSQL 15 (psql_describe_test.Postgres).
Usage: tallyd_shards_test.py TALLYD"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "introspection"))
import psql_describe_test as pg  # noqa: E402
import tallyd_lifecycle_test as lifecycle  # noqa: E402

LOADER = os.path.join(HERE, "..", "..", "scripts", "shard_load.py")
SHARDS = 3
ROWS = 6_000
COLUMNS = "id bigint, region text, k bigint, v bigint"
# The distribution key is id; region and k are other keys.
QUERIES = [
    "SELECT id, count(*), sum(v) FROM sales GROUP BY id",
    "SELECT id, region, max(v), min(k) FROM sales GROUP BY id, region",
    "SELECT id, percentile_cont(0.5) WITHIN GROUP (ORDER BY v), count(DISTINCT k) FROM sales GROUP BY id",
    "SELECT region, count(*), sum(v) FROM sales GROUP BY region",
    "SELECT k, avg(v), count(DISTINCT region) FROM sales GROUP BY k",
    "SELECT count(*), sum(v), min(id), max(id) FROM sales",
]
# The two-phase view: each shard's foreign table aggregated on its shard
# (count and sum are partials that add up), the final sum on the coordinator.
TWO_PHASE_VIEW = ("CREATE VIEW sales_by_region AS SELECT region, sum(n)::bigint AS n, sum(total) AS total, "
                  "sum(total) / sum(n) AS mean FROM ("
                  + " UNION ALL ".join(f"SELECT region, count(*) AS n, sum(v) AS total FROM sales_{i} GROUP BY region"
                                       for i in range(SHARDS))
                  + ") AS partials GROUP BY region")
ORACLE_TWO_PHASE = "SELECT region, count(*), sum(v), sum(v)::numeric / count(*) FROM local_sales GROUP BY region"


def csv_rows(first, count):
    return "".join(f"{i},r{i % 7},{i % 13},{(i * 37) % 1000}\n" for i in range(first, first + count))


class TallyShards(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.shards = []
        for i in range(SHARDS):
            shard = lifecycle.Tallyd(os.path.join(cls.tmp.name, f"data{i}"), os.path.join(cls.tmp.name, f"tallyd{i}.log"))
            cls.shards.append(shard)
            r = shard.psql(f"CREATE TABLE sales ({COLUMNS})")
            if r.returncode != 0:
                raise RuntimeError(r.stderr)
        cls.pg = pg.Postgres("coord", "coord")
        statements = ["CREATE EXTENSION postgres_fdw",
                      f"CREATE TABLE sales ({COLUMNS}) PARTITION BY HASH (id)",
                      f"CREATE TABLE local_sales ({COLUMNS}) PARTITION BY HASH (id)"]
        for i, shard in enumerate(cls.shards):
            statements += [
                f"CREATE SERVER shard{i} FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', "
                f"port '{shard.port}', dbname 'tally', use_remote_estimate 'true', batch_size '500')",
                f"CREATE USER MAPPING FOR coord SERVER shard{i} OPTIONS (user 'tally')",
                f"CREATE FOREIGN TABLE sales_{i} PARTITION OF sales FOR VALUES WITH (MODULUS {SHARDS}, "
                f"REMAINDER {i}) SERVER shard{i} OPTIONS (table_name 'sales')",
                f"CREATE TABLE local_sales_{i} PARTITION OF local_sales FOR VALUES WITH (MODULUS {SHARDS}, "
                f"REMAINDER {i})",
            ]
        statements.append(TWO_PHASE_VIEW)
        for statement in statements:
            cls.pg.sql("coord", "coord", statement)
        # The bulk of the rows through the loader (staged on the coordinator,
        # INSERTed through the partitioned table), the same rows into the oracle.
        csv = os.path.join(cls.tmp.name, "sales.csv")
        with open(csv, "w") as f:
            f.write("id,region,k,v\n" + csv_rows(1, ROWS))
        os.chmod(cls.tmp.name, 0o755)
        os.chmod(csv, 0o644)
        for table in ("sales", "local_sales"):
            r = subprocess.run([sys.executable, LOADER, "--coordinator", cls.pg.conninfo("coord", "coord"),
                                "--table", table, "--header", "--progress-rows", "1000", csv],
                               capture_output=True, text=True, timeout=300)
            if r.returncode != 0:
                raise RuntimeError(f"shard_load.py {table}: {r.stdout}{r.stderr}")
            if table == "sales":
                cls.loader_output = r.stdout + r.stderr

    @classmethod
    def tearDownClass(cls):
        cls.pg.stop()
        for shard in cls.shards:
            shard.kill()
        cls.tmp.cleanup()

    def logs(self):
        return "".join(s.log_text()[-1500:] for s in self.shards)

    def coordinator(self, *sql, ok=True):
        args = [pg.PSQL, "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", self.pg.conninfo("coord", "coord")]
        for s in sql:
            args += ["-c", s]
        r = subprocess.run(args, capture_output=True, text=True, timeout=120)
        if ok:
            self.assertEqual(r.returncode, 0, r.stderr + self.logs())
        return r

    def rows(self, *sql):
        return sorted(self.coordinator(*sql).stdout.splitlines())

    def shard_rows(self, i):
        r = self.shards[i].psql("SELECT id, region, k, v FROM sales")
        self.assertEqual(r.returncode, 0, r.stderr)
        return sorted(r.stdout.splitlines())

    def assert_placement(self):
        """Each shard holds exactly the rows of its local_sales partition."""
        for i in range(SHARDS):
            self.assertEqual(self.shard_rows(i), self.rows(f"SELECT id, region, k, v FROM local_sales_{i}"), f"shard {i}")

    def assert_same_answers(self):
        for sql in QUERIES:
            self.assertEqual(self.rows("SET enable_partitionwise_aggregate = on", sql),
                             self.rows(sql.replace("sales", "local_sales")), sql)
        self.assertEqual(self.rows("SELECT * FROM sales_by_region"), self.rows(ORACLE_TWO_PHASE))

    def explain(self, sql):
        self.coordinator("ANALYZE sales")
        return self.coordinator("SET enable_partitionwise_aggregate = on", "EXPLAIN VERBOSE " + sql).stdout

    def test_1_loader_routes_rows_to_their_shards(self):
        self.assertIn(f"{ROWS} rows", self.loader_output)
        counts = [len(self.shard_rows(i)) for i in range(SHARDS)]
        self.assertEqual(sum(counts), ROWS)
        self.assertTrue(all(c > 0 for c in counts), counts)
        self.assert_placement()

    def test_2_analyze_and_remote_estimates(self):
        self.coordinator("ANALYZE sales")
        for i in range(SHARDS):
            shard_count = len(self.shard_rows(i))
            reltuples = self.coordinator(f"SELECT reltuples FROM pg_class WHERE relname = 'sales_{i}'").stdout
            self.assertEqual(float(reltuples), shard_count, f"sales_{i}")
            # The scan's estimate comes from the shard's EXPLAIN (use_remote_estimate).
            plan = self.coordinator(f"EXPLAIN SELECT * FROM sales_{i}").stdout
            m = re.search(r"Foreign Scan on sales_\d+ +\(cost=[\d.]+\.\.[\d.]+ rows=(\d+) ", plan)
            self.assertIsNotNone(m, plan)
            self.assertEqual(int(m.group(1)), shard_count, plan)

    def test_3_partitionwise_aggregate_on_distribution_key(self):
        for sql in QUERIES[:3]:
            plan = self.explain(sql)
            remote = re.findall(r"Remote SQL: (.*)", plan)
            self.assertEqual(len(remote), SHARDS, plan)
            for statement in remote:
                self.assertRegex(statement, r"^SELECT id, .*\(.*\) FROM public\.sales GROUP BY ", plan)
            self.assertEqual(plan.count("Relations: Aggregate on"), SHARDS, plan)

    def test_4_two_phase_view_pushes_its_partials(self):
        plan = self.explain("SELECT * FROM sales_by_region")
        remote = re.findall(r"Remote SQL: (.*)", plan)
        self.assertEqual(remote, ["SELECT region, count(*), sum(v) FROM public.sales GROUP BY 1"] * SHARDS, plan)
        # The same GROUP BY written plainly cannot push its partials down in
        # PostgreSQL 15: the shards send rows, the coordinator aggregates.
        plan = self.explain("SELECT region, count(*), sum(v) FROM sales GROUP BY region")
        remote = re.findall(r"Remote SQL: (.*)", plan)
        self.assertEqual(len(remote), SHARDS, plan)
        for statement in remote:
            self.assertNotIn("GROUP BY", statement, plan)
        # A condition on the view's key reaches every shard's partial.
        plan = self.explain("SELECT * FROM sales_by_region WHERE region = 'r3'")
        remote = re.findall(r"Remote SQL: (.*)", plan)
        self.assertEqual(len(remote), SHARDS, plan)
        for statement in remote:
            self.assertIn("WHERE ((region = 'r3')) GROUP BY 1", statement, plan)
        self.assertEqual(self.rows("SELECT * FROM sales_by_region WHERE region = 'r3'"),
                         self.rows(ORACLE_TWO_PHASE.replace("GROUP BY", "WHERE region = 'r3' GROUP BY")))
        # ORDER BY ... LIMIT over the partitioned table: the shards send their
        # rows, the coordinator sorts (what docs/sharding.md says).
        plan = self.explain("SELECT id, v FROM sales ORDER BY v DESC, id LIMIT 5")
        self.assertNotIn("LIMIT", "".join(re.findall(r"Remote SQL: (.*)", plan)), plan)

    def test_5_answers_as_one_postgresql(self):
        self.assert_same_answers()

    def test_6_insert_update_delete_land_on_the_right_shards(self):
        extra = [f"({i}, 'r{i % 7}', {i % 13}, {i})" for i in range(ROWS + 1, ROWS + 31)]
        for table in ("sales", "local_sales"):
            self.coordinator(f"INSERT INTO {table} VALUES " + ", ".join(extra))
        self.assert_placement()
        changes = [
            # Pushed down whole to every shard, and to one shard (id pins the partition).
            ("UPDATE {t} SET v = v + 1000, region = region || 'x' WHERE k = 3", "Foreign Update"),
            ("UPDATE {t} SET v = 0 WHERE id = 42", "Foreign Update"),
            ("DELETE FROM {t} WHERE k = 5 AND v < 500", "Foreign Delete"),
            ("DELETE FROM {t} WHERE id BETWEEN 7 AND 9 OR id = 4242", "Foreign Delete"),
        ]
        for template, node in changes:
            sql = template.format(t="sales")
            plan = self.coordinator("EXPLAIN VERBOSE " + sql).stdout
            self.assertIn(node, plan)
            self.assertRegex(plan, r"Remote SQL: (UPDATE|DELETE FROM) public\.sales", plan)
            tags = [self.coordinator(template.format(t=t)).stdout for t in ("sales", "local_sales")]
            self.assertEqual(tags[0], tags[1], sql)
            self.assert_placement()
        # One id pins one partition: the plan touches one shard.
        plan = self.coordinator("EXPLAIN VERBOSE UPDATE sales SET v = 1 WHERE id = 42").stdout
        self.assertEqual(plan.count("Remote SQL:"), 1, plan)
        self.assert_same_answers()

    def test_7_rollback_and_what_cannot_be_pushed(self):
        before = [self.shard_rows(i) for i in range(SHARDS)]
        self.coordinator("BEGIN", "UPDATE sales SET v = -1 WHERE k = 1", "DELETE FROM sales WHERE k = 2",
                         "INSERT INTO sales VALUES (1000001, 'new', 0, 0)", "ROLLBACK")
        self.assertEqual([self.shard_rows(i) for i in range(SHARDS)], before)
        # random() is volatile, so postgres_fdw must read each row's ctid and
        # update by it; Tally has no ctid (its UPDATE and DELETE rewrite the
        # table, so a row has no stable position to name): a clean error, and
        # the coordinator's transaction (with the shards') rolls back.
        r = self.coordinator("UPDATE sales SET v = v + (random() * 0)::bigint WHERE k = 4", ok=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("ctid", r.stderr)
        self.assertEqual([self.shard_rows(i) for i in range(SHARDS)], before)

    def test_8_for_update_as_postgresql(self):
        """FOR UPDATE on a shard: what PostgreSQL refuses, Tally refuses with
        the same SQLSTATE and message; a row locked by an open transaction
        makes an UPDATE of it wait (here until statement_timeout) in both."""
        tally = self.shards[0]
        tally_dsn = f"host=127.0.0.1 port={tally.port} user=tally dbname=tally"
        pg_dsn = self.pg.conninfo("coord", "coord")
        for sql in ["SELECT k, count(*) FROM {t} GROUP BY k FOR UPDATE",
                    "SELECT DISTINCT k FROM {t} FOR SHARE",
                    "SELECT k FROM {t} UNION SELECT k FROM {t} FOR UPDATE",
                    "SELECT k FROM {t} FOR UPDATE NOWAIT"]:
            answers = []
            for dsn, table in ((tally_dsn, "sales"), (pg_dsn, "local_sales_0")):
                with psycopg2.connect(dsn) as conn, conn.cursor() as cur:
                    try:
                        cur.execute(sql.format(t=table))
                        answers.append(("ok", len(cur.fetchall())))
                    except psycopg2.Error as e:
                        answers.append((e.pgcode, e.pgerror.splitlines()[0] if e.pgerror else ""))
            if sql.endswith("NOWAIT"):
                # Tally has no row locks to try: NOWAIT is refused, plainly.
                self.assertEqual(answers[0][0], "0A000", answers)
                self.assertEqual(answers[1][0], "ok", answers)
            else:
                self.assertEqual(answers[0], answers[1], sql)
        for dsn, table in ((tally_dsn, "sales"), (pg_dsn, "local_sales_0")):
            holder = psycopg2.connect(dsn)
            waiter = psycopg2.connect(dsn)
            try:
                with holder.cursor() as cur:
                    cur.execute(f"SELECT id FROM {table} ORDER BY id LIMIT 1")
                    first = cur.fetchone()[0]
                    cur.execute(f"SELECT id, v FROM {table} WHERE id = %s FOR UPDATE", (first,))
                    self.assertEqual(len(cur.fetchall()), 1)
                waiter.autocommit = True
                with waiter.cursor() as cur:
                    cur.execute("SET statement_timeout = 300")
                    with self.assertRaises(psycopg2.Error) as caught:
                        cur.execute(f"UPDATE {table} SET v = v WHERE id = %s", (first,))
                    self.assertEqual(caught.exception.pgcode, "57014", dsn)
                holder.commit()
                with waiter.cursor() as cur:
                    cur.execute(f"UPDATE {table} SET v = v WHERE id = %s", (first,))
                    self.assertEqual(cur.rowcount, 1)
            finally:
                holder.close()
                waiter.close()

    def test_9_colocated_join_runs_on_the_shards(self):
        # Both sides partitioned on the join key: each shard joins its own pair.
        sql = "SELECT a.id, a.v, b.k FROM sales a JOIN sales b ON a.id = b.id WHERE b.k < 4"
        self.coordinator("ANALYZE sales")
        plan = self.coordinator("SET enable_partitionwise_join = on", "EXPLAIN VERBOSE " + sql).stdout
        remote = re.findall(r"Remote SQL: (.*)", plan)
        self.assertEqual(len(remote), SHARDS, plan)
        for statement in remote:
            self.assertIn("INNER JOIN public.sales", statement, plan)
        self.assertEqual(self.rows("SET enable_partitionwise_join = on", sql), self.rows(sql.replace("sales", "local_sales")))

    def test_10_loader_is_all_or_nothing(self):
        """A bad row (here the last) fails the load from standard input, and
        no shard keeps any row of it."""
        before = [self.shard_rows(i) for i in range(SHARDS)]
        data = csv_rows(2_000_001, 500) + "2000501,r1,1,not-a-number\n"
        r = subprocess.run([sys.executable, LOADER, "--coordinator", self.pg.conninfo("coord", "coord"),
                            "--table", "sales", "--progress-rows", "100", "-"],
                           input=data, capture_output=True, text=True, timeout=300)
        self.assertNotEqual(r.returncode, 0, r.stdout)
        self.assertIn("nothing was loaded", r.stderr)
        self.assertIn("invalid input syntax for type bigint", r.stderr)
        self.assertEqual([self.shard_rows(i) for i in range(SHARDS)], before)


if __name__ == "__main__":
    lifecycle.TALLYD = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
