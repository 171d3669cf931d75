#!/usr/bin/python3
"""A restarted tallyd's first queries with and without its warm start.

The warm start (server/statement_history_run.hpp): before its listener
accepts, a restarted tallyd runs the most-used statements of its statement
history (warm_start_statements, default 8; TALLY_WARM_START_STATEMENTS=0 only
re-plans them). This bench loads r(g int4, v int4) (--rows rows in --groups
groups), runs Q = SELECT g, count(*), sum(v) FROM r GROUP BY g HAVING sum(v) < T
once (T: 300 groups pass, as in live_tuning_bench) so that Q is in the history,
then restarts tallyd --restarts times per arm, alternating the arms, and times
the first --queries Qs (default 3) of one psycopg2 connection after each
restart (client wall time, connection made before the first). Every result is checked against sums
computed here. Printed: per arm the median over restarts of each Qk (ms) and of
the start (process start to listening), and the arms' ratios.

  bench/connect/warm_start_bench.py --tallyd build/tallyd [--restarts 5] [--rows 4194304]
      [--groups 65536] [--port 5498] [--queries 3]

Uses /usr/bin/python3 (Debian's python3-psycopg2, installed by scripts/setup.sh).
"""
import argparse
import bisect
import os
import shutil
import statistics
import sys
import tempfile
import time

import psycopg2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from restart_first_text_bench import HAVING_GROUPS, psql, start, stop, write_load  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tallyd", required=True)
    ap.add_argument("--restarts", type=int, default=5)
    ap.add_argument("--rows", type=int, default=1 << 22)
    ap.add_argument("--groups", type=int, default=65536)
    ap.add_argument("--port", type=int, default=5498)
    ap.add_argument("--queries", type=int, default=3, help="Qs timed after each restart")
    a = ap.parse_args()
    labels = [f"Q{k}" for k in range(1, max(a.queries, 1) + 1)]

    work = tempfile.mkdtemp(prefix="warm_start_bench.")
    try:
        counts, sums, _ = write_load(os.path.join(work, "load.sql"), a.rows, a.groups)
        live = [g for g in range(a.groups) if counts[g]]
        by_sum = sorted((sums[g], g) for g in live)
        threshold = by_sum[min(HAVING_GROUPS, len(by_sum) - 1)][0]
        expected = sorted((g, counts[g], s) for s, g in by_sum[:bisect.bisect_left(by_sum, (threshold, -1))])
        q = f"SELECT g, count(*), sum(v) FROM r GROUP BY g HAVING sum(v) < {threshold}"

        data_dir = os.path.join(work, "data")
        log_path = os.path.join(work, "tallyd.log")
        proc = start(a.tallyd, a.port, data_dir, log_path, False)
        with open(os.path.join(work, "load.sql")) as f:
            psql(a.port, f.read())
        psql(a.port, q + ";\n")  # Q enters the statement history
        stop(proc)

        arms = {"warm start (8)": "8", "no warm runs (0)": "0"}
        times = {arm: {"start": [], **{k: [] for k in labels}} for arm in arms}
        checked = 0
        for _ in range(a.restarts):
            for arm, value in arms.items():
                os.environ["TALLY_WARM_START_STATEMENTS"] = value  # start() passes the environment on
                t0 = time.perf_counter()
                proc = start(a.tallyd, a.port, data_dir, log_path, False)
                times[arm]["start"].append((time.perf_counter() - t0) * 1e3)
                conn = psycopg2.connect(host="127.0.0.1", port=a.port, user="tally", dbname="tally")
                cur = conn.cursor()
                for k in labels:
                    t = time.perf_counter()
                    cur.execute(q)
                    rows = cur.fetchall()
                    times[arm][k].append((time.perf_counter() - t) * 1e3)
                    if sorted(rows) != expected:
                        sys.exit(f"{arm} {k}: wrong result ({len(rows)} rows, expected {len(expected)})")
                    checked += 1
                conn.close()
                stop(proc)

        print(f"tallyd restarted {a.restarts}x per arm on r: {a.rows} rows, {a.groups} groups; "
              f"Q = {q} ({len(expected)} rows); {checked} results checked, all correct")
        print(f"{'arm':<18} {'start ms':>9}" + "".join(f" {k + ' ms':>8}" for k in labels) + "   (medians over restarts)")
        med = {arm: {k: statistics.median(v) for k, v in t.items()} for arm, t in times.items()}
        for arm, m in med.items():
            print(f"{arm:<18} {m['start']:9.1f}" + "".join(f" {m[k]:8.2f}" for k in labels))
        w, n = med["warm start (8)"], med["no warm runs (0)"]
        last = labels[-1]
        print(f"Q1 warm / Q1 not warm: {w['Q1'] / n['Q1']:.3f}; {last} warm / {last} not warm: {w[last] / n[last]:.3f}; "
              f"Q1 / {last} within an arm: warm {w['Q1'] / w[last]:.3f}, not warm {n['Q1'] / n[last]:.3f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
