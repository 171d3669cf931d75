#!/usr/bin/python3
"""Connection set-up time and SELECT 1 round trips per second, Tally vs PostgreSQL 15.

    bench/connect/connect_bench.py --tallyd build/tallyd [--seconds 5] [--clients 1,8,64]
        [--repeats 3] [--baseline-tallyd OLD/tallyd] [--baseline-args "--log-statement none"]

Starts tallyd (temporary data directory, trust for loopback) and a PostgreSQL 15
(initdb into a temporary directory, run as user postgres, trust over TCP) on
free ports in the same run, checks that both answer SELECT 1 with "1", then
drives both with pgbench and a custom script containing only SELECT 1:
  * round trips: pgbench -n -c N -j J -T S -M simple|extended|prepared (one
    connection per client; extended sends Parse of the unnamed statement every
    time, as JDBC does; prepared re-executes a named statement)
  * set-up: pgbench -n -C ... (a new connection for every transaction); pgbench
    reports the average connection time, and tps then counts connect+query+close.
Each cell is the median of --repeats runs, the servers taking turns, so that a
burst of load elsewhere on a shared machine hits both alike; the order of the
turns rotates from repeat to repeat and from cell to cell, so that no server
always goes first (or always runs right after another one).
Under every rate row a row gives the server's CPU time per transaction (us of
user+system time of tallyd, or of the postmaster and all its backends, read
from /proc before and after each pgbench run, divided by the transactions
pgbench counted): unlike a rate it hardly moves when other work shares the
machine, so it shows what a change to the server saved. With
--baseline-tallyd a second tallyd (say, the build before a change) runs in the
same way in the same run; --baseline-args gives it extra flags (with no
--baseline-tallyd, the baseline is the same tallyd: an A/B of one setting).
Prints a table with the ratio Tally / PostgreSQL (> 1
means Tally is faster for rates, < 1 means Tally is faster for times), and the
load average before and after. The machine and date head the table.
"""
import argparse
import datetime
import os
import platform
import re
import shutil
import signal
import statistics
import socket
import subprocess
import sys
import tempfile
import time

PG_BIN = "/usr/lib/postgresql/15/bin"
START_TIMEOUT_S = 60


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, process):
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError("server exited during start-up")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port} after {START_TIMEOUT_S} s")


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def proc_stat(pid):
    """(ppid, utime+stime, cutime+cstime) of a process in clock ticks, or None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) "
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def process_tree_cpu_s(root):
    """CPU seconds used so far by root, its exited (reaped) children and its live children.

    A PostgreSQL backend lives for one pgbench connection: while it runs its time is
    in its own /proc entry, once the postmaster has reaped it, in the postmaster's
    cutime/cstime. Summing both counts every backend exactly once either way."""
    own = proc_stat(root)
    if own is None:
        raise RuntimeError(f"process {root} is gone")
    ticks = own[1] + own[2]
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != root:
            st = proc_stat(int(entry))
            if st is not None and st[0] == root:
                ticks += st[1]
    return ticks / CLOCK_TICKS


def as_postgres(args, **kw):
    return subprocess.run(["runuser", "-u", "postgres", "--"] + args, check=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120, **kw)


class Postgres:
    def __init__(self, directory, max_clients):
        self.dir = os.path.join(directory, "pg")
        os.makedirs(self.dir)
        shutil.chown(self.dir, "postgres")
        os.chmod(directory, 0o755)
        self.port = free_port()
        as_postgres([f"{PG_BIN}/initdb", "-D", f"{self.dir}/data", "-A", "trust", "-U", "tally",
                     "--no-sync"])
        as_postgres([f"{PG_BIN}/pg_ctl", "-D", f"{self.dir}/data", "-l", f"{self.dir}/log",
                     "-w", "-t", str(START_TIMEOUT_S), "-o",
                     f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 "
                     f"-c max_connections={max_clients + 10} -c fsync=off", "start"])

    def pid(self):
        with open(f"{self.dir}/data/postmaster.pid") as f:
            return int(f.readline())

    def stop(self):
        subprocess.run(["runuser", "-u", "postgres", "--", f"{PG_BIN}/pg_ctl", "-D",
                        f"{self.dir}/data", "-m", "fast", "-w", "stop"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)


class Tally:
    def __init__(self, tallyd, directory, max_clients, name="tally", extra_args=()):
        self.port = free_port()
        self.log = open(os.path.join(directory, f"{name}.log"), "w")
        self.process = subprocess.Popen(
            [tallyd, "--port", str(self.port), "--data-dir", os.path.join(directory, f"{name}-data"),
             "--max-connections", str(max_clients + 10)] + list(extra_args),
            stdout=self.log, stderr=subprocess.STDOUT)
        wait_port(self.port, self.process)

    def pid(self):
        return self.process.pid

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def psql_select1(port):
    out = subprocess.run([f"{PG_BIN}/psql", "-h", "127.0.0.1", "-p", str(port), "-U", "tally",
                          "-d", "tally" if port else "postgres", "-XAtc", "SELECT 1"],
                         capture_output=True, text=True, timeout=30)
    return out.stdout.strip(), out.stderr.strip()


def pgbench(port, database, script, clients, seconds, mode, reconnect):
    threads = min(clients, os.cpu_count() or 1)
    args = [f"{PG_BIN}/pgbench", "-h", "127.0.0.1", "-p", str(port), "-U", "tally", "-n",
            "-f", script, "-c", str(clients), "-j", str(threads), "-T", str(seconds), "-M", mode]
    if reconnect:
        args.append("-C")
    out = subprocess.run(args + [database], capture_output=True, text=True,
                         timeout=seconds * 4 + 120)
    text = out.stdout + out.stderr
    tps = re.search(r"tps = ([0-9.]+)", text)
    failed = re.search(r"number of failed transactions: (\d+)", text)
    conn_ms = re.search(r"average connection time = ([0-9.]+) ms", text)
    done = re.search(r"number of transactions actually processed: (\d+)", text)
    if out.returncode != 0 or tps is None or done is None or (failed and int(failed.group(1)) > 0):
        raise RuntimeError(f"pgbench failed against port {port}:\n{text}")
    return float(tps.group(1)), float(conn_ms.group(1)) if conn_ms else None, int(done.group(1))


# A backend that pgbench disconnected may still be exiting when pgbench returns;
# its CPU counts once it is reaped (or while it lives), so wait this long first.
SETTLE_S = 0.3


def measured_pgbench(pid, port, database, script, clients, seconds, mode, reconnect):
    """pgbench's (tps, connection ms or None, server CPU us per transaction)."""
    before = process_tree_cpu_s(pid)
    tps, conn_ms, transactions = pgbench(port, database, script, clients, seconds, mode, reconnect)
    time.sleep(SETTLE_S)
    cpu_s = process_tree_cpu_s(pid) - before
    return tps, conn_ms, cpu_s * 1e6 / max(transactions, 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tallyd", required=True)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--clients", default="1,8,64")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--baseline-tallyd", help="a second tallyd measured the same way")
    parser.add_argument("--baseline-args", default="",
                        help="extra flags for the baseline tallyd (alone: the same binary)")
    args = parser.parse_args()
    clients = [int(c) for c in args.clients.split(",")]

    directory = tempfile.mkdtemp(prefix="tally-connect-bench-")
    script = os.path.join(directory, "select1.sql")
    with open(script, "w") as f:
        f.write("SELECT 1;\n")
    os.chmod(directory, 0o755)
    os.chmod(script, 0o644)
    pg = tally = baseline = None
    try:
        pg = Postgres(directory, max(clients))
        tally = Tally(args.tallyd, directory, max(clients))
        servers = [("tally", tally.port, "tally", tally.pid())]
        if args.baseline_tallyd or args.baseline_args:
            baseline = Tally(args.baseline_tallyd or args.tallyd, directory, max(clients), "baseline",
                             args.baseline_args.split())
            servers.append(("baseline", baseline.port, "tally", baseline.pid()))
        servers.append(("postgres", pg.port, "postgres", pg.pid()))
        # Correctness first: every server must answer SELECT 1 with 1.
        for name, port, db, _ in servers:
            out = subprocess.run([f"{PG_BIN}/psql", "-h", "127.0.0.1", "-p", str(port), "-U",
                                  "tally", "-d", db, "-XAtc", "SELECT 1"],
                                 capture_output=True, text=True, timeout=30)
            if out.stdout.strip() != "1":
                raise RuntimeError(f"{name} answered SELECT 1 with {out.stdout!r} {out.stderr!r}")

        load = os.getloadavg()
        print(f"# connect benchmark, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, "
              f"{platform.node()}, {os.cpu_count()} CPUs, pgbench {args.seconds} s per cell, "
              f"median of {args.repeats}, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
        if baseline:
            print(f"# baseline = {args.baseline_tallyd or args.tallyd} {args.baseline_args}".rstrip())
        names = [name for name, _, _, _ in servers]
        header = (f"{'clients':>7} | {'measure':<34} | " + " | ".join(f"{n:>10}" for n in names) +
                  f" | {'tally/pg':>8}" + (f" | {'tally/base':>10}" if baseline else ""))
        print(header)
        print("-" * len(header))

        turn = 0  # rotates the servers' order: cell by cell, repeat by repeat

        def cell(n, mode, reconnect):
            nonlocal turn
            samples = {name: [] for name in names}
            for _ in range(args.repeats):
                order = servers[turn % len(servers):] + servers[:turn % len(servers)]
                turn += 1
                for name, port, db, pid in order:
                    samples[name].append(
                        measured_pgbench(pid, port, db, script, n, args.seconds, mode, reconnect))
            rates = {name: statistics.median(s[0] for s in v) for name, v in samples.items()}
            times = {name: statistics.median(s[1] for s in v) if all(s[1] is not None for s in v)
                     else None for name, v in samples.items()}
            cpu = {name: statistics.median(s[2] for s in v) for name, v in samples.items()}
            return rates, times, cpu

        cpu_label = "  server CPU us per transaction"
        for n in clients:
            rows = []
            for mode in ("simple", "extended", "prepared"):
                rates, _, cpu = cell(n, mode, False)
                rows.append((f"SELECT 1 round trips/s ({mode})", rates))
                rows.append((cpu_label, cpu))
            rates, times, cpu = cell(n, "simple", True)
            rows.append(("connect+SELECT 1+close per s", rates))
            rows.append((cpu_label, cpu))
            if all(t is not None for t in times.values()):
                rows.append(("connection set-up time (ms)", times))
            for measure, values in rows:
                line = f"{n:>7} | {measure:<34} | " + " | ".join(f"{values[m]:>10.1f}" for m in names)
                line += f" | {values['tally'] / values['postgres']:>8.2f}"
                if baseline:
                    line += f" | {values['tally'] / values['baseline']:>10.2f}"
                print(line)
            sys.stdout.flush()
        load = os.getloadavg()
        print("ratio = tally / postgres (and tally / baseline): above 1 is better for Tally in "
              "rates, below 1 is better for Tally in set-up time and CPU per transaction")
        print(f"# load average at the end {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
        return 0
    finally:
        if tally:
            tally.stop()
        if baseline:
            baseline.stop()
        if pg:
            pg.stop()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
