#!/usr/bin/env python3
"""Cancel (libpq's PQcancel) and statement_timeout stop long queries promptly:
a GROUP BY with many groups, an ORDER BY, a count(DISTINCT) and a COPY ... TO
STDOUT over ROWS rows, each cancelled and each under SET statement_timeout,
and a runaway cross join of two CROSS_ROWS-row tables (10^10 pairs, never
waited for): the error (57014) must arrive within STOP_BOUND_S of the cancel
or deadline.
The rows are loaded with COPY from a generated stream. Starts a scratch
tallyd (tallyd_lifecycle_test.Tallyd). Usage: tallyd_cancel_test.py TALLYD"""
import ctypes
import ctypes.util
import datetime
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tallyd_lifecycle_test as lifecycle  # noqa: E402

ROWS = 10_000_000
# PostgreSQL's promise is "promptly"; the issue asks for 100 ms. The allowance
# on top covers the client's side (a new connection for the CancelRequest,
# scheduling on a loaded CI machine): the server's own share is what the
# cancellation checks bound.
STOP_BOUND_S = 0.100
ALLOWANCE_S = 0.150
# When each query is cancelled, as fractions of its uncancelled run time; its
# statement_timeout.
CANCEL_POINTS = (0.2, 0.5, 0.8)
TIMEOUT_MS = 50


# What a client that is parsing a large result may take to reach the error.
CLIENT_BOUND_S = 5.0


def stop_bound(name):
    """The bound every query's cancel and timeout are held to."""
    return STOP_BOUND_S + ALLOWANCE_S


CROSS_ROWS = 100_000
# Runs far longer than any test waits: cancelled or timed out at fixed points.
RUNAWAY = {
    "cross_join": "SELECT count(*) FROM x a, x b WHERE a.v + b.v < 0",
    "cross_join_max": "SELECT max(a.k + b.v) FROM x a CROSS JOIN x b",
}
RUNAWAY_POINTS_S = (0.3, 1.0)
QUERIES = {
    "group_by": "SELECT k, count(*), sum(v) FROM t GROUP BY k",
    "order_by": "SELECT k, v FROM t ORDER BY v DESC, k",
    "count_distinct": "SELECT count(DISTINCT v) FROM t",
    "copy_to": "COPY t TO STDOUT",
}

libpq = ctypes.CDLL(ctypes.util.find_library("pq") or "libpq.so.5")
libpq.PQconnectdb.restype = ctypes.c_void_p
libpq.PQconnectdb.argtypes = [ctypes.c_char_p]
libpq.PQstatus.argtypes = [ctypes.c_void_p]
libpq.PQerrorMessage.restype = ctypes.c_char_p
libpq.PQerrorMessage.argtypes = [ctypes.c_void_p]
libpq.PQsendQuery.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
libpq.PQgetResult.restype = ctypes.c_void_p
libpq.PQgetResult.argtypes = [ctypes.c_void_p]
libpq.PQresultStatus.argtypes = [ctypes.c_void_p]
libpq.PQresultErrorField.restype = ctypes.c_char_p
libpq.PQresultErrorField.argtypes = [ctypes.c_void_p, ctypes.c_int]
libpq.PQclear.argtypes = [ctypes.c_void_p]
libpq.PQfinish.argtypes = [ctypes.c_void_p]
libpq.PQbackendPID.argtypes = [ctypes.c_void_p]
libpq.PQgetCancel.restype = ctypes.c_void_p
libpq.PQgetCancel.argtypes = [ctypes.c_void_p]
libpq.PQcancel.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
libpq.PQfreeCancel.argtypes = [ctypes.c_void_p]
libpq.PQgetCopyData.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
libpq.PQfreemem.argtypes = [ctypes.c_void_p]
PG_DIAG_SQLSTATE = ord("C")
PGRES_COPY_OUT = 3
PGRES_FATAL_ERROR = 7


class Connection:
    def __init__(self, port):
        self.conn = libpq.PQconnectdb(f"host=127.0.0.1 port={port} user=tally dbname=tally "
                                      "sslmode=disable".encode())
        if libpq.PQstatus(self.conn) != 0:
            raise RuntimeError(libpq.PQerrorMessage(self.conn).decode())

    def close(self):
        libpq.PQfinish(self.conn)

    def backend_pid(self):
        return libpq.PQbackendPID(self.conn)

    def run(self, sql):
        """Runs sql to its end; returns (SQLSTATE of the first error or None,
        monotonic time the error was read)."""
        if not libpq.PQsendQuery(self.conn, sql.encode()):
            raise RuntimeError(libpq.PQerrorMessage(self.conn).decode())
        state, at = None, None
        while True:
            res = libpq.PQgetResult(self.conn)
            if not res:
                return state, at
            status = libpq.PQresultStatus(res)
            if status == PGRES_COPY_OUT:
                buf = ctypes.c_void_p()
                while True:
                    n = libpq.PQgetCopyData(self.conn, ctypes.byref(buf), 0)
                    if buf:
                        libpq.PQfreemem(buf)
                        buf = ctypes.c_void_p()
                    if n < 0:
                        break
            elif status == PGRES_FATAL_ERROR and state is None:
                at = time.monotonic()
                code = libpq.PQresultErrorField(res, PG_DIAG_SQLSTATE)
                state = code.decode() if code else "?"
            libpq.PQclear(res)

    def cancel(self):
        handle = libpq.PQgetCancel(self.conn)
        errbuf = ctypes.create_string_buffer(256)
        try:
            if not libpq.PQcancel(handle, errbuf, 256):
                raise RuntimeError(errbuf.value.decode())
        finally:
            libpq.PQfreeCancel(handle)


class Cancel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.server = lifecycle.Tallyd(os.path.join(cls.tmp.name, "data"),
                                      os.path.join(cls.tmp.name, "tallyd.log"), chunk_rows=1 << 20)
        r = cls.server.psql("CREATE TABLE t (k bigint, v bigint)")
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
        # Many groups (ROWS / 2 keys) and distinct values; generated by awk.
        generator = subprocess.Popen(
            ["awk", f"BEGIN {{ for (i = 0; i < {ROWS}; i++) printf \"%d\\t%d\\n\", "
                    f"(i * 7919) % {ROWS // 2}, (i * 104729) % {ROWS} }}"],
            stdout=subprocess.PIPE)
        load = subprocess.run(cls.server.psql_args("-c", "COPY t FROM STDIN"), stdin=generator.stdout,
                              capture_output=True, text=True, timeout=600)
        generator.wait()
        if load.returncode != 0:
            raise RuntimeError("load failed: " + load.stderr)
        r = cls.server.psql(f"CREATE TABLE x AS SELECT k, v FROM t WHERE k < {CROSS_ROWS // 2}")
        if r.returncode != 0:
            raise RuntimeError(r.stderr)

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()
        cls.tmp.cleanup()

    full_runs = {}

    def full_run_seconds(self, sql):
        if sql not in self.full_runs:
            # The first run also analyzes the statement (group-count estimate,
            # cached), and later runs still vary by several times on a shared
            # machine: the cancels are timed against the fastest of three.
            self.measure_full_run(sql)
            self.full_runs[sql] = min(self.measure_full_run(sql) for _ in range(3))
        return self.full_runs[sql]

    def measure_full_run(self, sql):
        c = Connection(self.server.port)
        try:
            start = time.monotonic()
            state, _ = c.run(sql)
            self.assertIsNone(state)
            return time.monotonic() - start
        finally:
            c.close()

    def check_cancel(self, name):
        # Cancelled at several points of its run (scan, merge or sort, result
        # building and sending), measured first without a cancel.
        full = self.full_run_seconds(QUERIES[name])
        print(f"{name}: {full:.2f} s uncancelled", file=sys.stderr)
        landed = sum(self.cancel_after(name, max(0.05, full * fraction)) for fraction in CANCEL_POINTS)
        self.assertGreater(landed, 0, f"{name} always ended before the cancel")

    def cancel_after(self, name, delay, sql=None):
        sql = sql or QUERIES[name]
        c = Connection(self.server.port)
        try:
            outcome = {}

            def query():
                outcome["state"], outcome["at"] = c.run(sql)
                outcome["ended"] = time.monotonic()

            runner = threading.Thread(target=query)
            runner.start()
            time.sleep(delay)
            if not runner.is_alive():
                # A run faster than the one measured: this point is not tested.
                runner.join()
                print(f"{name}: ended before a cancel after {delay:.2f} s", file=sys.stderr)
                return False
            cancelled_at, cancelled_wall = time.monotonic(), time.time()
            c.cancel()
            runner.join(timeout=120)
            if outcome.get("state") is None and outcome["ended"] - cancelled_at < stop_bound(name):
                # It finished while the cancel was on its way: nothing to stop.
                print(f"{name}: ended as a cancel after {delay:.2f} s arrived", file=sys.stderr)
                return False
            self.assertEqual(outcome.get("state"), "57014")
            stopped = self.failure_logged(c.backend_pid())["at"] - cancelled_wall
            seen = outcome["at"] - cancelled_at
            print(f"{name}: cancel after {delay:.2f} s stopped the server in {stopped * 1000:.0f} ms, "
                  f"the client saw it after {seen * 1000:.0f} ms", file=sys.stderr)
            self.assertLess(stopped, stop_bound(name))
            self.assertLess(seen, CLIENT_BOUND_S)
            return True
        finally:
            c.close()

    def failure_logged(self, pid):
        """The last query_failed line of backend pid (57014): its time (epoch
        seconds, to the millisecond) and duration_ms. The log is written by a
        thread of its own: waits for the line."""
        deadline = time.monotonic() + 10
        while True:
            lines = [json.loads(line) for line in self.server.log_text().splitlines() if '"query_failed"' in line]
            mine = [entry for entry in lines if entry.get("pid") == pid]
            if mine:
                entry = mine[-1]
                self.assertEqual(entry["sqlstate"], "57014")
                at = datetime.datetime.strptime(entry["ts"], "%Y-%m-%dT%H:%M:%S.%fZ")
                return {"at": at.replace(tzinfo=datetime.timezone.utc).timestamp(),
                        "duration_ms": entry["duration_ms"]}
            self.assertLess(time.monotonic(), deadline, f"no query_failed line for backend {pid}")
            time.sleep(0.05)

    def check_timeout(self, name):
        # TIMEOUT_MS (the scan), then deadlines at the cancel points.
        full = self.full_run_seconds(QUERIES[name])
        landed = 0
        for ms in (TIMEOUT_MS, *(int(full * f * 1000) for f in CANCEL_POINTS)):
            landed += self.timeout_after(name, ms)
        self.assertGreater(landed, 0, f"{name} always ended before its deadline")

    def timeout_after(self, name, ms, sql=None):
        sql = sql or QUERIES[name]
        c = Connection(self.server.port)
        try:
            state, _ = c.run(f"SET statement_timeout = '{ms}ms'")
            self.assertIsNone(state)
            start = time.monotonic()
            state, at = c.run(sql)
            if state is None and time.monotonic() - start < ms / 1000 + STOP_BOUND_S:
                print(f"{name}: ended before a deadline of {ms} ms", file=sys.stderr)
                return False
            self.assertEqual(state, "57014")
            # The deadline runs from the statement's start on the server, as
            # does the duration it logs.
            stopped = self.failure_logged(c.backend_pid())["duration_ms"] / 1000 - ms / 1000
            seen = at - start - ms / 1000
            print(f"{name}: timeout of {ms} ms stopped the server {stopped * 1000:.0f} ms after the "
                  f"deadline, the client saw it {seen * 1000:.0f} ms after", file=sys.stderr)
            self.assertLess(stopped, stop_bound(name))
            self.assertLess(seen, CLIENT_BOUND_S)
            return True
        finally:
            c.close()

    def check_runaway_cancel(self, name):
        for delay in RUNAWAY_POINTS_S:
            self.assertTrue(self.cancel_after(name, delay, RUNAWAY[name]), f"{name} ended by itself")

    def check_runaway_timeout(self, name):
        for ms in (TIMEOUT_MS, *(int(s * 1000) for s in RUNAWAY_POINTS_S)):
            self.assertTrue(self.timeout_after(name, ms, RUNAWAY[name]), f"{name} ended by itself")


def add_tests():
    for name in RUNAWAY:
        setattr(Cancel, f"test_cancel_{name}", lambda self, n=name: self.check_runaway_cancel(n))
        setattr(Cancel, f"test_statement_timeout_{name}", lambda self, n=name: self.check_runaway_timeout(n))
    for name in QUERIES:
        setattr(Cancel, f"test_cancel_{name}", lambda self, n=name: self.check_cancel(n))
        setattr(Cancel, f"test_statement_timeout_{name}", lambda self, n=name: self.check_timeout(n))


add_tests()

if __name__ == "__main__":
    lifecycle.TALLYD = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
