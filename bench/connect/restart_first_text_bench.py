#!/usr/bin/env python3
"""A restarted tallyd's first statement texts, from its statement_timeline lines.

Issue 6's restart target on the CPU engine: live_tuning_bench's restart
sequence (bench/tuner) replayed against a tallyd restarted N times on one data
directory, at --log-level debug. Per restart, one psql session sends

    SET tally.engine = gpu                      (the CPU engine answers without a GPU)
    SELECT g, min(v) FROM r GROUP BY g          x3   (warm-up: min1 min2 min3)
    Q = SELECT g, count(*), sum(v) FROM r GROUP BY g HAVING sum(v) < T
                                                x3   (q1 = the first Q after restart, q2, q3)
    Q with T+1                                       (new: a text new to the process)
    Q with T+2 ... T+1+M                             (newM: M more new texts, their median)

where T is the 301st smallest group sum (300 groups pass, as in live_tuning_bench).
The table r(g int4, v int4) has --rows rows in --groups groups, loaded once by
COPY before the first restart. Every statement's rows are checked against the
sums computed here. Printed per statement: medians over the restarts of the
microseconds from the Query's receipt to parse done, analysis (bind + plan) done,
executor start, and result ready -> first DataRow written.

  bench/connect/restart_first_text_bench.py --tallyd build-cpu/tallyd [--restarts 7]
      [--rows 1048576] [--groups 65536] [--new-texts 300] [--port 5497]
      [--tallyd-b OTHER]   (A/B: a second binary, alternating per restart)
"""
import argparse
import bisect
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HAVING_GROUPS = 300  # groups Q lets through (live_tuning_bench's kHavingGroups)
FIELDS = ("parsed_us", "analyzed_us", "executor_start_us", "result_ready_us", "first_data_row_us")


def value_of(g, i):
    # Deterministic, spread over [-1000, 1000]: the sums differ between groups.
    return (g * 7919 + i * 104729) % 2001 - 1000


def write_load(path, rows, groups):
    """Writes psql's script creating r(g, v) and loading `rows` rows in `groups`
    groups by COPY; returns the per-group counts, sums and minimums."""
    counts = [0] * groups
    sums = [0] * groups
    mins = [None] * groups
    with open(path, "w") as f:
        f.write("CREATE TABLE r (g int, v int);\nCOPY r FROM STDIN;\n")
        for i in range(rows):
            g = i % groups
            v = value_of(g, i)
            counts[g] += 1
            sums[g] += v
            mins[g] = v if mins[g] is None else min(mins[g], v)
            f.write(f"{g}\t{v}\n")
        f.write("\\.\n")
    return counts, sums, mins


def start(binary, port, data_dir, log_path, debug):
    args = [binary, "--port", str(port), "--data-dir", data_dir]
    if debug:
        args += ["--log-level", "debug"]
    log = open(log_path, "w")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(300):
        with open(log_path) as f:
            if "event=listening" in f.read():
                return proc
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    with open(log_path) as f:
        sys.exit(f"tallyd did not start:\n{f.read()[-2000:]}")


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)


def psql(port, script, options=""):
    env = dict(os.environ, PGOPTIONS=options)
    out = subprocess.run(["psql", "-X", "-h", "127.0.0.1", "-p", str(port), "-U", "tally", "tally", "-q", "-A", "-t",
                          "-F", ",", "-v", "ON_ERROR_STOP=1"], input=script, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"psql failed: {out.stderr}")
    return out.stdout


def timelines(log_path):
    lines = []
    with open(log_path) as f:
        for line in f:
            if "statement_timeline" not in line:
                continue
            fields = dict(re.findall(r"(\w+_us)=(-?[0-9.]+)", line))
            lines.append({k: float(v) for k, v in fields.items()})
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tallyd", required=True)
    ap.add_argument("--tallyd-b")
    ap.add_argument("--restarts", type=int, default=7)
    ap.add_argument("--rows", type=int, default=1 << 20)
    ap.add_argument("--groups", type=int, default=65536)
    ap.add_argument("--new-texts", type=int, default=300)
    ap.add_argument("--port", type=int, default=5497)
    a = ap.parse_args()
    # (binary, PGOPTIONS) pairs, alternating per restart.
    binaries = [(a.tallyd, "")] + ([(a.tallyd_b, "")] if a.tallyd_b else [])

    work = tempfile.mkdtemp(prefix="restart_first_text.")
    try:
        counts, sums, mins = write_load(os.path.join(work, "load.sql"), a.rows, a.groups)
        live = [g for g in range(a.groups) if counts[g]]
        threshold = sorted(sums[g] for g in live)[min(HAVING_GROUPS, len(live) - 1)]
        data_dir = os.path.join(work, "data")
        proc = start(a.tallyd, a.port, data_dir, os.path.join(work, "load.log"), False)
        with open(os.path.join(work, "load.sql")) as f:
            psql(a.port, f.read())
        stop(proc)

        min_rows = sorted(f"{g},{mins[g]}" for g in live)
        by_sum = sorted((sums[g], g) for g in live)

        def having_rows(t):
            return sorted(f"{g},{counts[g]},{s}" for s, g in by_sum[:bisect.bisect_left(by_sum, (t, -1))])

        q = "SELECT g, count(*), sum(v) FROM r GROUP BY g HAVING sum(v) < {};"

        def statements_of(restart):
            # Q's text is the same in every restart (as in live_tuning_bench);
            # the new texts' constants are new to every process.
            first_new = threshold + 1 + restart * (a.new_texts + 1)
            out = [("set", "SET tally.engine = gpu;", None)]
            out += [(f"min{k}", "SELECT g, min(v) FROM r GROUP BY g;", min_rows) for k in (1, 2, 3)]
            out += [(f"q{k}", q.format(threshold), having_rows(threshold)) for k in (1, 2, 3)]
            out += [("new", q.format(first_new), having_rows(first_new))]
            out += [("newM", q.format(first_new + 1 + k), having_rows(first_new + 1 + k)) for k in range(a.new_texts)]
            return out

        # results[binary][label][field] = values over restarts (newM: per-restart medians)
        results = {b: {} for b in binaries}  # [binary]["first" | "later"][label][field]
        checked = 0
        for restart in range(a.restarts):
            statements = statements_of(restart)
            script = "".join(f"{sql}\n\\echo ----\n" for _, sql, _ in statements)
            for b in binaries:
                log_path = os.path.join(work, "q.log")
                proc = start(b[0], a.port, data_dir, log_path, True)
                out = psql(a.port, script, b[1])
                stop(proc)
                blocks = out.split("----\n")
                for (label, sql, expected), block in zip(statements, blocks):
                    if expected is not None and sorted(block.splitlines()) != expected:
                        sys.exit(f"wrong result for {label}: {sql}")
                    checked += expected is not None
                lines = timelines(log_path)
                if len(lines) != len(statements):
                    sys.exit(f"{len(lines)} statement_timeline lines for {len(statements)} statements ({log_path})")
                # The first restart is the first start after the load.
                per = results[b].setdefault("first" if restart == 0 else "later", {})
                new_m = {f: [] for f in FIELDS}
                for (label, _, _), t in zip(statements, lines):
                    row = {f: t.get(f, -1) for f in FIELDS}
                    row["row_after_ready_us"] = row["first_data_row_us"] - row["result_ready_us"]
                    if label == "newM":
                        for f in FIELDS:
                            new_m[f].append(row[f])
                        continue
                    for f, v in row.items():
                        per.setdefault(label, {}).setdefault(f, []).append(v)
                if a.new_texts:
                    for f in FIELDS:
                        per.setdefault(f"new{a.new_texts}_med", {}).setdefault(f, []).append(statistics.median(new_m[f]))

        print(f"tallyd restarted {a.restarts}x on r: {a.rows} rows, {a.groups} groups; T = {threshold}; "
              f"{checked} results checked, all correct")
        print("us after the Query's receipt, median over restarts (min-max of executor_start); restarts: 1 = the")
        print("first after the load, 2+ = the later ones (median over them)")
        header = (f"{'tallyd':<28} {'restarts':<8} {'statement':<10} {'parsed':>8} {'analyzed':>9} {'exec_start':>10} "
                  f"{'range':>15} {'ready->row':>10}")
        print(header)
        for b in binaries:
            name = os.path.relpath(b[0])
            for phase, per in results[b].items():
                for label, fields in per.items():
                    es = fields["executor_start_us"]
                    rr = fields.get("row_after_ready_us", [float("nan")])
                    print(f"{name:<28} {'1' if phase == 'first' else '2+':<8} {label:<10} "
                          f"{statistics.median(fields['parsed_us']):8.1f} {statistics.median(fields['analyzed_us']):9.1f} "
                          f"{statistics.median(es):10.1f} {min(es):7.1f}-{max(es):7.1f} {statistics.median(rr):10.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
