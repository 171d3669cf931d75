"""What every test in tests/tools shares: where tallyd is (tests/clients/tallyd_harness.py
puts it in the environment), a scratch PostgreSQL 15 as the oracle
(tests/introspection/psql_describe_test.Postgres), and running a tool with a bound.

A step that fails because of a gap another piece of work closes is reported as
`known gap (...)` and still fails the test: nothing is skipped silently."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "introspection"))
import psql_describe_test as pg  # noqa: E402

PG_BIN = pg.PG_BIN
PSQL = pg.PSQL
USER = os.environ.get("TALLY_TEST_TRUST_USER", "tally")
DATABASE = os.environ.get("TALLY_TEST_DB", "tally")
HOST = os.environ.get("TALLY_TEST_HOST", "127.0.0.1")
PORT = os.environ.get("TALLY_TEST_PORT", "5432")
TALLY = f"host={HOST} port={PORT} dbname={DATABASE} user={USER} sslmode=disable connect_timeout=10"


def tally_env():
    """libpq's variables for tools that take no connection string (pgbench, pg_dump)."""
    env = dict(os.environ)
    env.update({"PGHOST": HOST, "PGPORT": str(PORT), "PGUSER": USER, "PGDATABASE": DATABASE,
                "PGSSLMODE": "disable", "PGCONNECT_TIMEOUT": "10"})
    return env


def run(args, timeout=120, env=None, input=None):
    """Runs a tool; returns (exit status, stdout + stderr)."""
    try:
        r = subprocess.run(args, timeout=timeout, env=env, input=input, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        return r.returncode, r.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return 124, out


def psql(conninfo, sql, timeout=120):
    """psql -At with ON_ERROR_STOP: (exit status, output)."""
    return run([PSQL, "-X", "-At", "-v", "ON_ERROR_STOP=1", conninfo, "-c", sql], timeout=timeout)


class Checks:
    """Counts failures; every check prints one line."""

    def __init__(self):
        self.failures = 0

    def check(self, ok, what, detail=""):
        if ok:
            print(f"ok: {what}")
        else:
            self.failures += 1
            print(f"FAIL: {what}\n{detail}".rstrip())
        return ok

    def known_gap(self, owner, what, detail=""):
        self.failures += 1
        print(f"FAIL (known gap, {owner}): {what}\n{detail}".rstrip())

    def status(self):
        print(f"{self.failures} failure(s)")
        return 1 if self.failures else 0
