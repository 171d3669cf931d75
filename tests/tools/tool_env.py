"""What every test in tests/tools shares: where tallyd is (tests/clients/tallyd_harness.py
puts it in the environment), a scratch PostgreSQL 15 as the oracle
(tests/introspection/psql_describe_test.Postgres), and running a tool with a bound.

Each test lists, in one dict KNOWN_GAPS = {step: (reason, error pattern)}, the
steps that fail today because of a gap another piece of work closes. Such a step
is an expected failure, strictly: it must still run and fail with an error
matching its pattern, and the test fails once it passes (so that the entry is
removed and the step guards the feature from then on). Every other step must
pass. Nothing is skipped silently."""
import os
import re
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
    """Counts failures; every check prints one line. `known_gaps` is the test's
    KNOWN_GAPS, `source` the test file named in the message to edit it."""

    def __init__(self, known_gaps, source):
        self.known_gaps = known_gaps
        self.source = os.path.join("tests", "tools", os.path.basename(source))
        self.failures = 0
        self.passed = []
        self.gaps = []
        self.reached = set()

    def check(self, ok, what, detail=""):
        if what in self.known_gaps:
            return self._gap(ok, what, detail)
        if ok:
            self.passed.append(what)
            print(f"ok: {what}")
        else:
            self.failures += 1
            print(f"FAIL: {what}\n{detail}".rstrip())
        return ok

    def _gap(self, ok, what, detail):
        reason, pattern = self.known_gaps[what]
        self.reached.add(what)
        if ok:
            self.failures += 1
            print(f"FAIL: known gap {what!r} now passes: remove it from KNOWN_GAPS in {self.source}")
        elif re.search(pattern, detail, re.IGNORECASE | re.DOTALL):
            self.gaps.append(what)
            print(f"known gap (expected failure, {reason}): {what}")
        else:
            self.failures += 1
            print(f"FAIL: known gap {what!r} no longer fails with /{pattern}/ ({reason}): fix the step or its entry"
                  f" in KNOWN_GAPS in {self.source}\n{detail}".rstrip())
        return ok

    def status(self):
        unreached = [s for s in self.known_gaps if s not in self.reached]
        if unreached:
            self.failures += 1
            print(f"FAIL: known gaps not checked (an earlier step stopped the test, or the step was renamed):"
                  f" {unreached}; KNOWN_GAPS in {self.source}")
        names = ", ".join(self.gaps)
        print(f"{len(self.passed)} steps passed, {len(self.gaps)} known gaps still failing ({names})")
        print(f"{self.failures} failure(s)")
        return 1 if self.failures else 0
