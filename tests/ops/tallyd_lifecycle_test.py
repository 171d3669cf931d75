#!/usr/bin/env python3
"""tallyd's lifecycle with real clients (psql): statement_timeout per session
(SET) and as the server default (57014, the session stays usable), and SIGTERM
with a query in flight: the query either finishes or is cancelled with 57P01,
tallyd exits 0, and after a restart every committed row is there.

The slow query is slow on purpose: a table of SLOW_ROWS rows in small chunks
(TALLY_CHUNK_ROWS, so cancellation, checked between chunks, lands quickly) and
string functions on every row. Its duration is measured once, and the timeouts
are chosen from that measurement, so the test holds on a fast or a loaded machine.
Usage: tallyd_lifecycle_test.py TALLYD"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

TALLYD = None
START_TIMEOUT = 60
SLOW_ROWS = 100_000       # loaded first; doubled until the query takes
SLOW_ENOUGH_SECONDS = 1.5  # at least this long,
MAX_ROWS = 1_600_000       # or the table has this many rows
CHUNK_ROWS = 8192
# Every row: string functions over a 40-character value and its copies (cost
# per row rather than more rows, which would cost loading time).
SLOW_QUERY = ("SELECT count(*), sum(length(replace(replace(replace(upper(concat(s, s, s)), 'A', 'xyz'), 'B', 'uvw'), "
              "'0', '--')) + strpos(lower(concat(s, s, s, s)), 'zz')) FROM big WHERE strpos(lower(s), 'zz') = 0")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Tallyd:
    """One tallyd process on a data directory."""

    def __init__(self, data_dir, log_path, command_prefix=(), **settings):
        self.port = free_port()
        self.log_path = log_path
        self.http_port = settings.get("http_port")
        env = {k: v for k, v in os.environ.items() if not k.startswith("TALLY_")}
        env.update({"TALLY_PORT": str(self.port), "TALLY_DATA_DIR": data_dir, "TALLY_GPU_DEVICE": "-2",
                    "TALLY_CHUNK_ROWS": str(CHUNK_ROWS), "TALLY_LOG_FORMAT": "json"})
        env.update({"TALLY_" + k.upper(): str(v) for k, v in settings.items()})
        self.log = open(log_path, "a+")
        # command_prefix: a wrapper such as setpriv/prlimit that runs tallyd.
        self.proc = subprocess.Popen([*command_prefix, TALLYD], env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT
        while self.psql("SELECT 1").returncode != 0:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("tallyd did not start:\n" + self.log_text())
            time.sleep(0.2)

    def log_text(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def psql_args(self, *extra):
        return ["psql", "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose",
                "-h", "127.0.0.1", "-p", str(self.port), "-U", "tally", "-d", "tally", *extra]

    def psql(self, *commands, stdin=None, timeout=120):
        args = self.psql_args(*[a for c in commands for a in ("-c", c)])
        return subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ, PGCONNECT_TIMEOUT="10"))

    def ready_status(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/ready", timeout=5) as response:
                return response.status
        except urllib.error.HTTPError as e:
            return e.code
        except OSError:
            return None  # not listening (any more)

    def stop(self, sig=signal.SIGTERM, timeout=60):
        # sig None: already sent (a second SIGTERM would cancel running queries at once).
        if sig is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self.log.close()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if not self.log.closed:
            self.log.close()


class TallydLifecycle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.data = os.path.join(cls.tmp.name, "data")
        cls.log_path = os.path.join(cls.tmp.name, "tallyd.log")
        server = Tallyd(cls.data, cls.log_path)
        loaded = 0
        try:
            r = server.psql("CREATE TABLE big (k int, s text)")
            if r.returncode != 0:
                raise RuntimeError("CREATE TABLE failed: " + r.stderr)
            # Double the table until the query is slow enough to interrupt (a
            # fast machine needs more rows than a loaded one), within bounds.
            while True:
                rows = SLOW_ROWS if loaded == 0 else loaded
                data = "".join(f"{i}\t{'ab' * 4}{i:032d}\n" for i in range(loaded, loaded + rows))
                r = server.psql("COPY big FROM STDIN", stdin=data)
                if r.returncode != 0:
                    raise RuntimeError("load failed: " + r.stderr)
                loaded += rows
                start = time.monotonic()
                r = server.psql(SLOW_QUERY)
                cls.slow_seconds = time.monotonic() - start
                if r.returncode != 0:
                    raise RuntimeError("slow query failed: " + r.stderr)
                if cls.slow_seconds >= SLOW_ENOUGH_SECONDS or loaded >= MAX_ROWS:
                    break
            cls.slow_result = r.stdout.strip()
            print(f"slow query: {loaded} rows, {cls.slow_seconds:.2f} s -> {cls.slow_result}", file=sys.stderr)
        finally:
            code = server.stop()
        if code != 0:
            raise RuntimeError(f"tallyd exited {code}")
        cls.committed = loaded

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def start(self, **settings):
        server = Tallyd(self.data, self.log_path, **settings)
        self.addCleanup(server.kill)
        return server

    def timeout_ms(self):
        # Well under the query's own time, so the timeout always fires first.
        return max(50, int(self.slow_seconds * 1000 / 5))

    def assert_rows_committed(self, server):
        r = server.psql("SELECT count(*) FROM big")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(int(r.stdout.strip()), type(self).committed)

    def test_set_statement_timeout_cancels_with_57014_and_the_session_goes_on(self):
        if self.slow_seconds < SLOW_ENOUGH_SECONDS / 2:
            self.skipTest(f"the slow query took only {self.slow_seconds:.2f} s here")
        server = self.start()
        ms = self.timeout_ms()
        start = time.monotonic()
        # One session (one psql): SET, the slow query, then more statements.
        r = subprocess.run(server.psql_args("-v", "ON_ERROR_STOP=0"), capture_output=True, text=True, timeout=120,
                           input=f"SET statement_timeout = {ms};\nSHOW statement_timeout;\n{SLOW_QUERY};\n"
                                 "SELECT count(*) FROM big;\nRESET statement_timeout;\nSHOW statement_timeout;\n")
        elapsed = time.monotonic() - start
        self.assertIn("ERROR:  57014: canceling statement due to statement timeout", r.stderr)
        out = r.stdout.split()
        self.assertEqual(out, [f"{ms}ms", str(self.committed), "0"], r.stdout + r.stderr)
        self.assertLess(elapsed, self.slow_seconds + 30)
        self.assertEqual(server.stop(), 0)

    def test_server_default_statement_timeout(self):
        if self.slow_seconds < SLOW_ENOUGH_SECONDS / 2:
            self.skipTest(f"the slow query took only {self.slow_seconds:.2f} s here")
        ms = self.timeout_ms()
        server = self.start(statement_timeout_ms=ms)
        r = server.psql("SHOW statement_timeout")
        self.assertEqual(r.stdout.strip(), f"{ms}ms", r.stderr)
        r = server.psql(SLOW_QUERY)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("ERROR:  57014: canceling statement due to statement timeout", r.stderr)
        # A session may turn it off for itself (the query ran to its end
        # without a timeout in setUpClass and in the SIGTERM grace test).
        r = server.psql("SET statement_timeout = 0", "SHOW statement_timeout", "SELECT count(*) FROM big")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), ["0", str(self.committed)])
        # So may its startup options (PGOPTIONS), which override the server's
        # default as in PostgreSQL (whose SHOW prints 5s for 5000 ms).
        for options, shown in (("-c statement_timeout=5s", "5s"), ("-c statement_timeout=0", "0")):
            r = subprocess.run(server.psql_args("-c", "SHOW statement_timeout", "-c", "SELECT count(*) FROM big"),
                               capture_output=True, text=True, timeout=120,
                               env=dict(os.environ, PGOPTIONS=options))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.split(), [shown, str(self.committed)])
        self.assertEqual(server.stop(), 0)

    def sigterm_during_slow_query(self, grace_ms, during_grace=None):
        """Starts the slow query, commits a row from a second session while it
        runs, sends SIGTERM (then calls during_grace(server) while the query
        still runs); returns (server, psql exit code, stdout, stderr, tallyd
        exit code, seconds from SIGTERM to exit)."""
        server = self.start(shutdown_grace_ms=grace_ms, http_port=free_port())
        query = subprocess.Popen(server.psql_args("-c", SLOW_QUERY), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        r = server.psql("INSERT INTO big VALUES (-1, 'committed during the query')")
        self.assertEqual(r.returncode, 0, r.stderr)
        type(self).committed += 1
        time.sleep(min(0.3, self.slow_seconds / 4))  # the query is running now
        self.assertIsNone(query.poll(), "the slow query ended before SIGTERM")
        start = time.monotonic()
        if during_grace:
            server.proc.send_signal(signal.SIGTERM)
            during_grace(server)
        code = server.stop(None if during_grace else signal.SIGTERM, timeout=60)
        stopped = time.monotonic() - start
        out, err = query.communicate(timeout=60)
        return server, query.returncode, out, err, code, stopped

    def test_sigterm_lets_a_running_query_finish_within_the_grace_period(self):
        def while_draining(server):
            # Not ready, and no new sessions, while the running query finishes.
            deadline = time.monotonic() + 10
            while server.ready_status() != 503 and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertEqual(server.ready_status(), 503)
            self.assertNotEqual(server.psql("SELECT 1", timeout=30).returncode, 0)

        server, rc, out, err, code, stopped = self.sigterm_during_slow_query(grace_ms=120_000,
                                                                            during_grace=while_draining)
        self.assertEqual(code, 0, f"tallyd exited {code}:\n" + server.log_text()[-3000:])
        self.assertEqual(rc, 0, err)
        # It finished with the full answer: the row committed meanwhile may or
        # may not be in its snapshot, depending on which came first.
        count, total = (int(v) for v in out.strip().split("|"))
        self.assertIn(count, (self.committed - 1, self.committed))
        self.assertGreaterEqual(total, int(self.slow_result.split("|")[1]))
        restarted = self.start()
        self.assert_rows_committed(restarted)
        self.assertEqual(restarted.stop(), 0)

    def test_sigterm_cancels_a_query_past_the_grace_period_with_57P01(self):
        if self.slow_seconds < SLOW_ENOUGH_SECONDS / 2:
            self.skipTest(f"the slow query took only {self.slow_seconds:.2f} s here")
        server, rc, out, err, code, stopped = self.sigterm_during_slow_query(grace_ms=100)
        self.assertEqual(code, 0, f"tallyd exited {code}:\n" + server.log_text()[-3000:])
        self.assertNotEqual(rc, 0, out)
        self.assertIn("57P01", err)
        self.assertIn("terminating connection due to administrator command", err)
        self.assertLess(stopped, self.slow_seconds + 10)
        restarted = self.start()
        self.assert_rows_committed(restarted)
        self.assertEqual(restarted.stop(), 0)


class TallydDefaults(unittest.TestCase):
    """A fresh tallyd with no configuration: tools that connect as the role
    "postgres" to the database "postgres" (psql -U postgres's defaults) get in,
    and see the tables user tally sees."""

    def test_psql_connects_as_postgres_by_default(self):
        with tempfile.TemporaryDirectory() as tmp:
            server = Tallyd(os.path.join(tmp, "data"), os.path.join(tmp, "tallyd.log"))
            self.addCleanup(server.kill)
            # No -d: psql opens the database named like the user.
            args = ["psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(server.port),
                    "-U", "postgres"]
            run = lambda sql: subprocess.run(args + ["-c", sql], capture_output=True, text=True, timeout=60)  # noqa: E731
            r = run("SELECT current_user, current_database(), session_user")
            self.assertEqual((r.returncode, r.stdout.strip()), (0, "postgres|postgres|postgres"), r.stderr)
            self.assertEqual(run("CREATE TABLE made_by_postgres (a int)").returncode, 0)
            r = server.psql("SELECT count(*) FROM made_by_postgres")
            self.assertEqual((r.returncode, r.stdout.strip()), (0, "0"), r.stderr)
            self.assertEqual(server.stop(), 0)


if __name__ == "__main__":
    TALLYD = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
