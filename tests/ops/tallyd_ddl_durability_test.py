#!/usr/bin/env python3
"""Sequences and unique keys across a kill -9 of tallyd: after the restart,
nextval (of a CREATE SEQUENCE sequence and of a serial column's) continues
past every value handed out before the kill, never repeating one (the
sequence row is written ahead of the values it hands out, as PostgreSQL's
log_cnt is), and a primary key still refuses a key committed before the kill
(23505) while new keys go in; views, and columns added (read as their
default in older chunks) or dropped (their files removed), stay as they were
committed; a CREATE TABLE AS is there whole after a kill -9 right after it,
and a dropped table's files are gone. Usage: tallyd_ddl_durability_test.py TALLYD"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

TALLYD = None
START_TIMEOUT = 60


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Tallyd:
    def __init__(self, data_dir, log_path):
        self.port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("TALLY_")}
        env.update({"TALLY_PORT": str(self.port), "TALLY_DATA_DIR": data_dir, "TALLY_GPU_DEVICE": "-2"})
        self.log = open(log_path, "a+")
        self.proc = subprocess.Popen([TALLYD], env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT
        while self.psql("SELECT 1").returncode != 0:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("tallyd did not start")
            time.sleep(0.2)

    def psql(self, *commands):
        args = ["psql", "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose",
                "-h", "127.0.0.1", "-p", str(self.port), "-U", "tally", "-d", "tally"]
        for c in commands:
            args += ["-c", c]
        return subprocess.run(args, capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, PGCONNECT_TIMEOUT="10"))

    def value(self, sql):
        r = self.psql(sql)
        if r.returncode != 0:
            raise AssertionError(sql + ": " + r.stderr)
        return r.stdout.strip()

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=60)
        self.log.close()


class DdlDurabilityTest(unittest.TestCase):
    def test_views_survive_kill(self):
        with tempfile.TemporaryDirectory(prefix="tally-ddl-durability-") as tmp:
            data, log = os.path.join(tmp, "data"), os.path.join(tmp, "tallyd.log")
            t = Tallyd(data, log)
            t.value("CREATE TABLE base (a int, b text)")
            t.value("INSERT INTO base VALUES (1, 'x'), (2, 'y'), (3, 'x')")
            t.value("CREATE VIEW vx (n, label) AS SELECT a, b FROM base WHERE b = 'x'")
            t.value("CREATE VIEW vcount AS SELECT label, count(*) AS c FROM vx GROUP BY label")
            t.value("CREATE VIEW gone AS SELECT 1 AS one")
            t.value("DROP VIEW gone")
            t.kill()

            t = Tallyd(data, log)
            try:
                self.assertEqual(t.value("SELECT n FROM vx ORDER BY n").split(), ["1", "3"])
                self.assertEqual(t.value("SELECT label || ':' || c FROM vcount"), "x:2")
                self.assertNotEqual(t.psql("SELECT * FROM gone").returncode, 0)
                drop = t.psql("DROP TABLE base")
                self.assertIn("2BP01", drop.stderr)
                # A table created after the restart does not take a view's oid.
                t.value("CREATE TABLE later (z int)")
                self.assertEqual(t.value("SELECT count(DISTINCT oid) FROM pg_class WHERE relname IN ('vx', 'vcount', 'later')"),
                                 "3")
            finally:
                t.kill()

    def test_added_and_dropped_columns_survive_kill(self):
        with tempfile.TemporaryDirectory(prefix="tally-ddl-durability-") as tmp:
            data, log = os.path.join(tmp, "data"), os.path.join(tmp, "tallyd.log")
            t = Tallyd(data, log)
            t.value("CREATE TABLE cols (a int, b text, k int UNIQUE)")
            # 5000 rows: a chunk that later INSERTs do not merge into theirs.
            t.value("INSERT INTO cols SELECT g, 'b' || g, g FROM generate_series(1, 5000) g")
            t.value("ALTER TABLE cols ADD COLUMN c text DEFAULT 'dd', ADD COLUMN n int DEFAULT 7")
            t.value("ALTER TABLE cols DROP COLUMN b")
            t.value("INSERT INTO cols VALUES (5001, 5001, 'new', 8)")
            oid = t.value("SELECT 'cols'::regclass::oid")
            t.kill()

            t = Tallyd(data, log)
            try:
                self.assertEqual(t.value("SELECT count(*) || ' ' || sum(n) || ' ' || count(DISTINCT c) FROM cols"),
                                 f"5001 {5000 * 7 + 8} 2")
                self.assertEqual(t.value("SELECT a || c || n FROM cols WHERE a IN (1, 5001) ORDER BY a").split(),
                                 ["1dd7", "5001new8"])
                self.assertEqual(t.value("SELECT attname FROM pg_attribute "
                                         "WHERE attrelid = 'cols'::regclass AND attnum > 0 ORDER BY attnum").split(),
                                 ["a", "k", "c", "n"])
                # The dropped column's files are gone; the key still holds.
                files = os.listdir(os.path.join(data, "tables", oid))
                self.assertFalse([f for f in files if f.split(".")[1:2] == ["1"]], files)
                self.assertIn("23505", t.psql("INSERT INTO cols VALUES (9, 9)").stderr)
                t.value("ALTER TABLE cols ADD COLUMN b text")
                self.assertEqual(t.value("SELECT count(b) FROM cols"), "0")
            finally:
                t.kill()

    def test_create_table_as_survives_kill(self):
        # A text GROUP BY key of many distinct values: CREATE TABLE AS takes
        # (borrows) the source column's dictionary. Its table must equal the
        # same rows appended by INSERT ... SELECT, before and after a kill -9
        # right after the commit, and writes to either table afterwards must
        # not show up in the other's dictionary.
        with tempfile.TemporaryDirectory(prefix="tally-ddl-durability-") as tmp:
            data, log = os.path.join(tmp, "data"), os.path.join(tmp, "tallyd.log")
            t = Tallyd(data, log)
            t.value("CREATE TABLE src (k text, v int)")
            t.value("INSERT INTO src SELECT 'id' || lpad((g % 150000)::text, 10, '0'), g % 7 "
                    "FROM generate_series(1, 300000) g")
            question = "SELECT k, sum(v) AS s, count(*) AS n FROM src GROUP BY k"
            t.value("CREATE TABLE ins (k text, s bigint, n bigint)")
            t.value("INSERT INTO ins " + question)
            t.value("CREATE TABLE ans AS " + question)
            t.value("CREATE TABLE dropped AS " + question)
            self.assertEqual(t.value("SELECT sum(s) || ' ' || sum(n) FROM dropped"), t.value("SELECT sum(s) || ' ' || sum(n) FROM ans"))
            dropped_oid = t.value("SELECT 'dropped'::regclass::oid")
            t.value("DROP TABLE dropped")
            summary = ("SELECT count(*) || ' ' || count(DISTINCT k) || ' ' || sum(length(k)) || ' ' || sum(s) || ' ' || "
                       "sum(n) || ' ' || min(k) || ' ' || max(k) FROM {}")
            same = "SELECT count(*) FROM ans a JOIN ins i ON a.k = i.k AND a.s = i.s AND a.n = i.n"
            expected = t.value(summary.format("ins"))
            self.assertTrue(expected.startswith("150000 150000 "), expected)
            self.assertEqual(t.value(summary.format("ans")), expected)
            self.assertEqual(t.value(same), "150000")
            t.kill()

            t = Tallyd(data, log)
            try:
                self.assertEqual(t.value(summary.format("ans")), expected)
                self.assertEqual(t.value(same), "150000")
                self.assertNotEqual(t.psql("SELECT 1 FROM dropped").returncode, 0)
                self.assertFalse(os.path.exists(os.path.join(data, "tables", dropped_oid)))
                t.value("INSERT INTO ans VALUES ('only in ans', 1, 1)")
                t.value("INSERT INTO src VALUES ('only in src', 1)")
                self.assertEqual(t.value("SELECT count(*) FROM ans WHERE k LIKE 'only%'"), "1")
                self.assertEqual(t.value("SELECT k FROM src WHERE k LIKE 'only%'"), "only in src")
            finally:
                t.kill()

        # Without a restart: the borrowed dictionary forks when either side adds a value.
        with tempfile.TemporaryDirectory(prefix="tally-ddl-durability-") as tmp:
            data, log = os.path.join(tmp, "data"), os.path.join(tmp, "tallyd.log")
            t = Tallyd(data, log)
            try:
                t.value("CREATE TABLE src (k text)")
                t.value("INSERT INTO src SELECT 'k' || g FROM generate_series(1, 100000) g")
                t.value("CREATE TABLE ans AS SELECT k FROM src GROUP BY k")
                t.value("INSERT INTO src VALUES ('new in src')")
                t.value("INSERT INTO ans VALUES ('new in ans')")
                self.assertEqual(t.value("SELECT string_agg(k, ',' ORDER BY k) FROM src WHERE k LIKE 'new%'"), "new in src")
                self.assertEqual(t.value("SELECT string_agg(k, ',' ORDER BY k) FROM ans WHERE k LIKE 'new%'"), "new in ans")
                self.assertEqual(t.value("SELECT count(*) || ' ' || count(DISTINCT k) FROM ans"), "100001 100001")
            finally:
                t.kill()

    def test_sequences_and_keys_survive_kill(self):
        with tempfile.TemporaryDirectory(prefix="tally-ddl-durability-") as tmp:
            data, log = os.path.join(tmp, "data"), os.path.join(tmp, "tallyd.log")
            t = Tallyd(data, log)
            t.value("CREATE SEQUENCE s")
            t.value("CREATE TABLE k (id serial PRIMARY KEY, v text UNIQUE)")
            taken = [int(t.value("SELECT nextval('s')")) for _ in range(5)]
            for i in range(40):  # past one written-ahead batch
                t.value(f"INSERT INTO k (v) VALUES ('v{i}')")
            ids = [int(x) for x in t.value("SELECT id FROM k ORDER BY id").split()]
            self.assertEqual(ids, list(range(1, 41)))
            t.kill()

            t = Tallyd(data, log)
            try:
                after = int(t.value("SELECT nextval('s')"))
                self.assertGreater(after, max(taken))
                t.value("INSERT INTO k (v) VALUES ('new')")
                new_id = int(t.value("SELECT id FROM k WHERE v = 'new'"))
                self.assertGreater(new_id, 40)
                dup = t.psql("INSERT INTO k (id, v) VALUES (7, 'again')")
                self.assertNotEqual(dup.returncode, 0)
                self.assertIn("23505", dup.stderr)
                self.assertIn("Key (id)=(7) already exists.", dup.stderr)
                dup = t.psql("INSERT INTO k (v) VALUES ('v3')")
                self.assertIn("23505", dup.stderr)
                self.assertEqual(t.value("SELECT count(*) FROM k"), "41")
            finally:
                t.kill()


if __name__ == "__main__":
    TALLYD = sys.argv.pop(1)
    unittest.main()
