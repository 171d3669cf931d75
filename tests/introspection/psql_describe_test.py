#!/usr/bin/python3
"""psql's catalog commands against tallyd and a PostgreSQL 15 holding the same tables.

Run through tests/clients/tallyd_harness.py (tallyd's address in the
environment). Starts a throwaway PostgreSQL 15 (initdb as user postgres in a
temporary directory, a free port, Unix socket only), creates the same tables in
both, and compares what psql prints for \\dt, \\d TABLE, \\dn, \\l, \\dx and \\ddp, and what
pgjdbc's DatabaseMetaData answers (JdbcMetadata.java) and what psqlODBC's
SQLTables/SQLColumns/SQLGetTypeInfo answer (odbc_metadata.c, its path is
argv[1]; psqlODBC's SQLColumns carries the table OID, which differs). Allowed
differences, and only these: \\l lists the other server's other databases, so
its comparison keeps the header and the current database's row.
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

PG_BIN = "/usr/lib/postgresql/15/bin"
PSQL = os.path.join(PG_BIN, "psql")
JAVA = "/usr/bin/java"
PGJDBC = "/usr/share/java/postgresql.jar"
JDBC_PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "JdbcMetadata.java")
TIMEOUT_S = 60
TABLES = [
    "CREATE TABLE t (a int NOT NULL, b text, c numeric(10,2))",
    "CREATE TABLE sales (region varchar(20), amount numeric(12,2), day date, qty int8, price float8,"
    " flag boolean, code char(3), ts timestamp, small int2, at time, at3 time(3), raw bytea)",
]
COMMANDS = ["\\d", "\\dt", "\\di", "\\dv", "\\d+ t", "\\d+ sales", "\\d t", "\\d sales", "\\dn", "\\l", "\\dt sales", "\\d nosuch",
            # pg_extension with its pg_description comment, pg_default_acl (issue 24).
            "\\dx", "\\ddp",
            # A catalog SELECT between others in one simple query.
            "SELECT 1 AS x; SELECT typname, oid FROM pg_catalog.pg_type WHERE oid IN (23, 1700) ORDER BY 2; SELECT 2 AS y"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def as_postgres(args, **kwargs):
    return subprocess.run(["runuser", "-u", "postgres", "--"] + args, check=True, timeout=TIMEOUT_S,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)


class Postgres:
    """A PostgreSQL 15 in a temporary directory, stopped and removed on exit."""

    def __init__(self, user, database):
        self.dir = tempfile.mkdtemp(prefix="tally_intro_pg_")
        shutil.chown(self.dir, "postgres")
        self.data = os.path.join(self.dir, "data")
        self.port = free_port()
        as_postgres([os.path.join(PG_BIN, "initdb"), "-D", self.data, "-A", "trust", "-U", "postgres",
                     "-E", "UTF8", "--locale=C.UTF-8"])
        as_postgres([os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, "-w", "-t", str(TIMEOUT_S), "-l",
                     os.path.join(self.dir, "log"), "-o",
                     f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1", "start"])
        self.started = True
        self.sql("postgres", "postgres", f"CREATE ROLE {user} SUPERUSER LOGIN")
        self.sql("postgres", "postgres", f"CREATE DATABASE {database} OWNER {user}")

    def conninfo(self, user, database):
        return f"host={self.dir} port={self.port} user={user} dbname={database}"

    def sql(self, user, database, statement):
        subprocess.run([PSQL, "-X", "-v", "ON_ERROR_STOP=1", self.conninfo(user, database), "-c", statement],
                       check=True, timeout=TIMEOUT_S, stdout=subprocess.DEVNULL)

    def stop(self):
        if self.started:
            subprocess.run(["runuser", "-u", "postgres", "--", os.path.join(PG_BIN, "pg_ctl"), "-D", self.data,
                            "-m", "immediate", "-w", "-t", str(TIMEOUT_S), "stop"],
                           timeout=TIMEOUT_S + 10, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)


def psql(conninfo, command):
    result = subprocess.run([PSQL, "-X", conninfo, "-c", command], timeout=TIMEOUT_S,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return result.stdout


def jdbc(url, user, password):
    result = subprocess.run([JAVA, "-cp", PGJDBC, JDBC_PROGRAM, url, user, password], timeout=TIMEOUT_S * 2,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return result.stdout


ODBC_DRIVER = "/usr/lib/x86_64-linux-gnu/odbc/psqlodbcw.so"


def odbc(program, host, port, database, user):
    result = subprocess.run([program, f"Driver={ODBC_DRIVER};Server={host};Port={port};Database={database};"
                             f"Uid={user};Pwd=unused;SSLmode=disable"], timeout=TIMEOUT_S,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines, section = [], ""
    for line in result.stdout.splitlines():
        if line.startswith("== "):
            section = line
        elif section.startswith("== SQLColumns"):
            cells = line.split("|")
            if len(cells) > 22:
                cells[22] = "<table oid>"  # psqlODBC's TABLE_OID extension column
            line = "|".join(cells)
        lines.append(line)
    return "\n".join(lines) + f"\n(exit {result.returncode})"


def keep_database_row(output, database):
    """\\l: the header and the row of `database`, cell by cell (column widths
    follow the other databases' rows, which legitimately differ)."""
    lines = output.splitlines()
    rows = [lines[1]] + [l for l in lines[3:] if l.split("|")[0].strip() == database]
    return "\n".join(" | ".join(cell.strip() for cell in row.split("|")) for row in rows)


def main():
    user = os.environ["TALLY_TEST_TRUST_USER"]
    database = os.environ["TALLY_TEST_DB"]
    tally = (f"host=localhost hostaddr={os.environ['TALLY_TEST_HOST']} port={os.environ['TALLY_TEST_PORT']}"
             f" dbname={database} user={user} sslmode=disable connect_timeout=10")
    pg = Postgres(user, database)
    failures = 0
    try:
        for statement in TABLES:
            pg.sql(user, database, statement)
            out = psql(tally, statement)
            if "CREATE TABLE" not in out:
                print(f"FAIL: tallyd did not run {statement!r}: {out}")
                return 1
        for command in COMMANDS:
            expected = psql(pg.conninfo(user, database), command)
            actual = psql(tally, command)
            if command == "\\l":
                expected, actual = keep_database_row(expected, database), keep_database_row(actual, database)
            if expected != actual:
                failures += 1
                print(f"FAIL: {command}\n--- PostgreSQL 15\n{expected}\n--- tallyd\n{actual}")
            else:
                print(f"ok: {command} ({len(expected.splitlines())} lines)")
        if not (os.path.exists(JAVA) and os.path.exists(PGJDBC)):
            failures += 1
            print(f"FAIL: pgjdbc metadata not checked: {JAVA} or {PGJDBC} is missing (scripts/setup.sh)")
        else:
            expected = jdbc(f"jdbc:postgresql://127.0.0.1:{pg.port}/{database}", user, "unused")
            actual = jdbc(f"jdbc:postgresql://{os.environ['TALLY_TEST_HOST']}:{os.environ['TALLY_TEST_PORT']}/"
                          f"{database}?sslmode=disable", user, "unused")
            if expected != actual or "== getSchemas()" not in expected:
                failures += 1
                print(f"FAIL: pgjdbc metadata\n--- PostgreSQL 15\n{expected}\n--- tallyd\n{actual}")
            else:
                print(f"ok: pgjdbc metadata ({len(expected.splitlines())} lines)")
        program = sys.argv[1] if len(sys.argv) > 1 else ""
        if not (os.path.exists(program) and os.path.exists(ODBC_DRIVER)):
            failures += 1
            print(f"FAIL: psqlODBC metadata not checked: {program!r} or {ODBC_DRIVER} is missing")
        else:
            expected = odbc(program, "127.0.0.1", pg.port, database, user)
            actual = odbc(program, os.environ["TALLY_TEST_HOST"], os.environ["TALLY_TEST_PORT"], database, user)
            if expected != actual or "(exit 0)" not in expected:
                failures += 1
                print(f"FAIL: psqlODBC metadata\n--- PostgreSQL 15\n{expected}\n--- tallyd\n{actual}")
            else:
                print(f"ok: psqlODBC metadata ({len(expected.splitlines())} lines)")
    finally:
        pg.stop()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
