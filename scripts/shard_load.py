#!/usr/bin/env python3
"""Load a CSV file into a table hash-partitioned across Tally shards.

The table lives in a PostgreSQL coordinator: PARTITION BY HASH (key), each
partition a postgres_fdw foreign table on one Tally shard (docs/sharding.md
shows how to make one; docker/shards/ makes one with Docker Compose).
PostgreSQL's own hash partitioning routes every row to its shard: the same
function decides where INSERT, UPDATE and partition pruning look, so a row
loaded here is found by every later query.

In one coordinator transaction, the file is copied into a temporary table
(\\copy, local and fast), then sent on with INSERT ... SELECT in slices of
--progress-rows rows, a progress line after each. INSERT rather than a COPY
into the partitioned table: PostgreSQL 15's COPY sends a foreign partition one
row per round trip, INSERT sends batch_size rows per statement (a server or
foreign table option; the script warns when a partition has none). A bad row
fails the whole load and no shard keeps any of it. At the end it prints each
partition's row count (one pushed-down count(*) per shard).

Needs psql on PATH; the coordinator connection is a libpq connection string
or URI (PGHOST, PGPORT, PGUSER, PGPASSWORD, ... apply).
"""
import argparse
import shutil
import subprocess
import sys
import tempfile
import time


def psql(conninfo, sql):
    """One statement's tuples, unaligned, '|'-separated; raises on error."""
    r = subprocess.run(["psql", "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", conninfo, "-c", sql],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"shard_load: {r.stderr.strip()}")
    return [line.split("|") for line in r.stdout.splitlines() if line]


def quote_literal(text):
    return "'" + text.replace("'", "''") + "'"


def partitioning(conninfo, table):
    """(strategy and key as pg_get_partkeydef prints them, [(partition, server or None)])."""
    rows = psql(conninfo, f"SELECT pg_get_partkeydef(c.oid) FROM pg_class c WHERE c.oid = {quote_literal(table)}::regclass")
    keydef = rows[0][0] if rows and rows[0] else ""
    parts = psql(conninfo, "SELECT i.inhrelid::regclass, coalesce(s.srvname, '') FROM pg_inherits i "
                           "LEFT JOIN pg_foreign_table f ON f.ftrelid = i.inhrelid "
                           "LEFT JOIN pg_foreign_server s ON s.oid = f.ftserver "
                           f"WHERE i.inhparent = {quote_literal(table)}::regclass ORDER BY i.inhrelid::regclass::text")
    return keydef, [(p[0], p[1] or None) for p in parts]


class Session:
    """One psql process driven line by line: statements in one transaction,
    each followed by a marker that says it has finished."""

    MARK = "shard_load_done"

    def __init__(self, conninfo):
        self.proc = subprocess.Popen(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", conninfo],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def run(self, command):
        """Runs one statement or backslash command; its output lines."""
        terminator = "\n" if command.startswith("\\") else ";\n"
        try:
            self.proc.stdin.write(command + terminator + f"\\echo {self.MARK}\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass  # psql has stopped: its error follows
        lines = []
        for line in self.proc.stdout:
            if line.rstrip("\n") == self.MARK:
                return lines
            lines.append(line.rstrip("\n"))
        self.proc.wait()
        raise SystemExit(f"shard_load: failed, nothing was loaded: {self.proc.stderr.read().strip()}")

    def value(self, query):
        return self.run(query)[0]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def main():
    parser = argparse.ArgumentParser(
        description="Load a CSV file into a table of a PostgreSQL coordinator that is hash-partitioned "
                    "across Tally shards (postgres_fdw foreign partitions); PostgreSQL routes each row.",
        epilog="Example: scripts/shard_load.py --coordinator 'host=127.0.0.1 port=5433 user=postgres' "
               "--table sales --header sales.csv")
    parser.add_argument("csv", help="the CSV file ('-' reads standard input)")
    parser.add_argument("--coordinator", default="",
                        help="libpq connection string or URI of the coordinator (default: the PG* environment)")
    parser.add_argument("--table", required=True, help="the partitioned table (schema-qualified if needed)")
    parser.add_argument("--columns", default="", help="comma-separated column list of the file (default: all, in order)")
    parser.add_argument("--header", action="store_true", help="the file's first line names the columns (skipped)")
    parser.add_argument("--delimiter", default=",", help="field delimiter (default ,)")
    parser.add_argument("--null", default="", help="the string that means NULL (default: an unquoted empty field)")
    parser.add_argument("--progress-rows", type=int, default=100_000, metavar="N",
                        help="send the rows on in slices of N rows, a progress line after each (default 100000; "
                             "0: one INSERT, no progress line)")
    parser.add_argument("--allow-unpartitioned", action="store_true",
                        help="load even when the table is not hash partitioned (the rows then stay on the coordinator)")
    parser.add_argument("--no-summary", action="store_true", help="skip the per-partition row counts at the end")
    args = parser.parse_args()

    keydef, parts = partitioning(args.coordinator, args.table)
    if not keydef.upper().startswith("HASH") and not args.allow_unpartitioned:
        raise SystemExit(f"shard_load: {args.table} is not hash partitioned ({keydef or 'not partitioned'}); "
                         "create it PARTITION BY HASH (key) with one foreign partition per shard, "
                         "or pass --allow-unpartitioned")
    foreign = sum(1 for _, server in parts if server)
    print(f"shard_load: {args.table} PARTITION BY {keydef or '-'}: {len(parts)} partitions, "
          f"{foreign} of them on shards ({', '.join(sorted({s for _, s in parts if s})) or 'none'})", flush=True)

    unbatched = psql(args.coordinator, "SELECT f.ftrelid::regclass FROM pg_foreign_table f "
                                       "JOIN pg_foreign_server s ON s.oid = f.ftserver JOIN pg_inherits i "
                                       f"ON i.inhrelid = f.ftrelid WHERE i.inhparent = {quote_literal(args.table)}::regclass "
                                       "AND NOT EXISTS (SELECT FROM unnest(f.ftoptions || s.srvoptions) o "
                                       "WHERE o LIKE 'batch\\_size=%' AND o <> 'batch_size=1')")
    if unbatched:
        print(f"shard_load: warning: no batch_size on {', '.join(r[0] for r in unbatched)}: one round trip per row "
              "(ALTER SERVER ... OPTIONS (ADD batch_size '1000'))", file=sys.stderr, flush=True)

    spooled = None
    path = args.csv
    if path == "-":  # \copy reads a file: standard input is spooled to one first
        spooled = tempfile.NamedTemporaryFile(prefix="shard_load_", suffix=".csv")
        shutil.copyfileobj(sys.stdin.buffer, spooled)
        spooled.flush()
        path = spooled.name
    options = ["FORMAT csv", f"DELIMITER {quote_literal(args.delimiter)}", f"NULL {quote_literal(args.null)}"]
    if args.header:
        options.append("HEADER true")
    columns = args.columns or ", ".join(
        r[0] for r in psql(args.coordinator, "SELECT quote_ident(attname) FROM pg_attribute WHERE attrelid = "
                                             f"{quote_literal(args.table)}::regclass AND attnum > 0 AND NOT attisdropped "
                                             "ORDER BY attnum"))
    session = Session(args.coordinator)
    start = time.monotonic()
    session.run("BEGIN")
    session.run(f"CREATE TEMP TABLE shard_load_stage AS SELECT {columns} FROM {args.table} WITH NO DATA")
    session.run(f"\\copy shard_load_stage ({columns}) FROM {quote_literal(path)} WITH ({', '.join(options)})")
    # Row numbers, so the rows go on in slices.
    session.run("ALTER TABLE shard_load_stage ADD COLUMN shard_load_row bigserial")
    total = int(session.value("SELECT count(*) FROM shard_load_stage"))
    print(f"shard_load: staged {total} rows in {time.monotonic() - start:.1f} s", flush=True)
    tty = sys.stderr.isatty()
    step = args.progress_rows or max(total, 1)
    sent = 0
    sending = time.monotonic()
    while sent < total:
        session.run(f"INSERT INTO {args.table} ({columns}) SELECT {columns} FROM shard_load_stage "
                    f"WHERE shard_load_row > {sent} AND shard_load_row <= {sent + step}")
        sent = min(sent + step, total)
        if args.progress_rows:
            rate = sent / max(time.monotonic() - sending, 1e-6)
            print(f"shard_load: {sent} of {total} rows sent to the shards ({100 * sent // total}%), {rate:,.0f} rows/s",
                  end="\r" if tty else "\n", file=sys.stderr, flush=True)
    session.run("COMMIT")
    session.close()
    seconds = time.monotonic() - start
    if tty and args.progress_rows:
        print(file=sys.stderr)
    print(f"shard_load: loaded {total} rows into {args.table} in {seconds:.1f} s ({total / max(seconds, 1e-6):,.0f} rows/s)",
          flush=True)
    if not args.no_summary:
        for part, server in parts:
            count = psql(args.coordinator, f"SELECT count(*) FROM {part}")[0][0]
            print(f"shard_load:   {part}{' on ' + server if server else ''}: {count} rows", flush=True)


if __name__ == "__main__":
    main()
