#!/usr/bin/env python3
"""The CPU memory budget is a cap: with --cpu-memory-budget 64MB a GROUP BY
over 5M groups, a count(DISTINCT) over 5M values, an ORDER BY of 5M rows and
a LATERAL join of 40M pairs either answer within the
budget or fail with PostgreSQL's out-of-memory SQLSTATE (53200), the server
keeps serving, and its peak resident memory (VmHWM, reset before each query
through /proc/PID/clear_refs) grows by no more than a small multiple of the
budget. Without a budget, an allocation that fails under an address-space
limit (prlimit --as) is 53200 too, not XX000. Starts scratch tallyds
(tallyd_lifecycle_test.Tallyd). Usage: tallyd_memory_test.py TALLYD"""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tallyd_lifecycle_test as lifecycle  # noqa: E402

ROWS = 5_000_000
BUDGET = 64 << 20
# The scan's chunks in flight, the session's buffers and the allocator's
# slack come on top of what the statement holds against the budget; without
# the cap these queries peaked at 2.4 GB and 5.5 GB.
PEAK_GROWTH_BOUND = 6 * BUDGET
QUERIES = {
    "group_by": "SELECT k, count(*), sum(v) FROM t GROUP BY k",
    "count_distinct": "SELECT count(DISTINCT v) FROM t",
    "order_by": "SELECT k, v FROM t ORDER BY v DESC, k",
    # Forty left rows, each joined to the 1M rows of its own LATERAL run: the
    # pairs pass in rounds, and the runs' results are kept only up to a bound.
    "lateral": "SELECT count(*) FROM (SELECT k FROM t WHERE k < 40) a, "
               "LATERAL (SELECT v + a.k AS w FROM t WHERE v < 1000000) b",
}


def load(server):
    r = server.psql("CREATE TABLE t (k bigint, v bigint)")
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    # ROWS distinct keys and values, in a scrambled order.
    generator = subprocess.Popen(
        ["awk", f"BEGIN {{ for (i = 0; i < {ROWS}; i++) printf \"%d\\t%d\\n\", "
                f"(i * 7919) % {ROWS}, (i * 104729) % {ROWS} }}"],
        stdout=subprocess.PIPE)
    r = subprocess.run(server.psql_args("-c", "COPY t FROM STDIN"), stdin=generator.stdout,
                       capture_output=True, text=True, timeout=600)
    generator.wait()
    generator.stdout.close()
    if r.returncode != 0:
        raise RuntimeError("load failed: " + r.stderr)


def status_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(field + " not in /proc status")


def sqlstate(result):
    """The SQLSTATE psql printed (VERBOSITY=verbose: 'ERROR:  53200: ...'), or None."""
    for line in result.stderr.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "ERROR:":
            return parts[1].rstrip(":")
    return None


class MemoryBudget(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.server = lifecycle.Tallyd(os.path.join(cls.tmp.name, "data"),
                                      os.path.join(cls.tmp.name, "tallyd.log"), chunk_rows=1 << 20,
                                      cpu_memory_budget=BUDGET)
        load(cls.server)

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()
        cls.tmp.cleanup()

    def check_query(self, name):
        pid = self.server.proc.pid
        before = status_kb(pid, "VmRSS") * 1024
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current resident size
        r = self.server.psql(QUERIES[name], timeout=600)
        peak = status_kb(pid, "VmHWM") * 1024
        state = sqlstate(r)
        print(f"{name}: {'ok' if r.returncode == 0 else state}, resident {before >> 20} MB before, "
              f"peak {peak >> 20} MB", file=sys.stderr)
        if r.returncode == 0:
            if name == "count_distinct":
                self.assertEqual(r.stdout.strip(), str(ROWS))
            elif name == "lateral":
                self.assertEqual(r.stdout.strip(), str(40 * 1000000))
            else:
                self.assertEqual(len(r.stdout.splitlines()), ROWS)
        else:
            self.assertEqual(state, "53200", r.stderr)
            self.assertIn("cpu_memory_budget", r.stderr)
        self.assertLess(peak - before, PEAK_GROWTH_BOUND, f"{name} grew the process by {(peak - before) >> 20} MB")
        # The session and the server go on.
        r = self.server.psql("SELECT count(*), sum(v) FROM t")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), f"{ROWS}|{ROWS * (ROWS - 1) // 2}")  # v: a permutation of 0..ROWS-1

    def test_group_by(self):
        self.check_query("group_by")

    def test_count_distinct(self):
        self.check_query("count_distinct")

    def test_order_by(self):
        self.check_query("order_by")

    def test_lateral(self):
        self.check_query("lateral")


class AllocationFailure(unittest.TestCase):
    """Without a budget, under an address-space limit smaller than the
    query needs: the failed allocation is 53200, and the server serves on."""

    def test_bad_alloc_is_53200(self):
        with tempfile.TemporaryDirectory() as tmp:
            limit = 3 << 30
            server = lifecycle.Tallyd(os.path.join(tmp, "data"), os.path.join(tmp, "tallyd.log"),
                                      command_prefix=("prlimit", f"--as={limit}:{limit}"), chunk_rows=1 << 20,
                                      cpu_threads=2)
            try:
                load(server)
                # Enough distinct text values that the generic DISTINCT set
                # outgrows the address space.
                r = server.psql("SELECT count(DISTINCT (v::text || repeat('x', 400))) FROM t", timeout=600)
                if r.returncode != 0:
                    self.assertEqual(sqlstate(r), "53200", r.stderr)
                print(f"bad_alloc: {'ok' if r.returncode == 0 else sqlstate(r)}", file=sys.stderr)
                r = server.psql("SELECT count(*) FROM t")
                self.assertEqual(r.returncode, 0, r.stderr + server.log_text()[-2000:])
                self.assertEqual(r.stdout.strip(), str(ROWS))
            finally:
                server.kill()


if __name__ == "__main__":
    lifecycle.TALLYD = os.path.abspath(sys.argv.pop(1))
    unittest.main()
