#!/usr/bin/python3
"""pg_dump 15 of a Tally database (schema and data, plain SQL) restored into a
PostgreSQL 15 gives the same rows, column types and defaults, keys and
indexes, sequence values and views; and back: pg_dump of that PostgreSQL
database restored into a fresh tallyd gives them again. The same in
pg_dump's custom format through pg_restore 15, both ways. pg_dumpall 15
dumps the roles and the database. Run through tests/clients/tallyd_harness.py."""
import os
import socket
import subprocess
import sys
import time

import tool_env as t

PG_DUMP = os.path.join(t.PG_BIN, "pg_dump")
PG_RESTORE = os.path.join(t.PG_BIN, "pg_restore")
PG_DUMPALL = os.path.join(t.PG_BIN, "pg_dumpall")
TABLES = {
    "items": ("CREATE TABLE items (id int NOT NULL, name text, price numeric(10,2), qty int8, ratio float8,"
              " ok boolean, day date, ts timestamp, code varchar(8), small int2)",
              "INSERT INTO items VALUES (1, 'apple', 1.25, 10, 0.5, true, '2023-06-01', '2023-06-01 12:30:00', 'A1', 7),"
              " (2, 'pear''s', 2.50, NULL, -1.5e-7, false, '1999-12-31', NULL, NULL, -3),"
              " (3, NULL, NULL, 9000000000, NULL, NULL, NULL, '2024-02-29 23:59:59.5', 'tab\tx', NULL),"
              " (4, 'back\\slash and \"quote\"', 0.01, 0, 1e300, true, '2000-01-01', '2000-01-01 00:00:00', '', 0)"),
    "empty_table": ("CREATE TABLE empty_table (a int, b text)", None),
    "keyed": ("CREATE TABLE keyed (id int PRIMARY KEY, name text UNIQUE, qty int DEFAULT 5, code varchar(4) NOT NULL)",
              "INSERT INTO keyed VALUES (1, 'a', 3, 'x'), (2, NULL, DEFAULT, 'y')"),
    "ser": ("CREATE TABLE ser (id serial, v numeric(8,3))", "INSERT INTO ser (v) VALUES (1.5), (2.25)"),
    # pg_dump writes an identity column as ALTER TABLE ... ADD GENERATED after the table.
    "ident": ("CREATE TABLE ident (id int GENERATED ALWAYS AS IDENTITY, b text)",
              "INSERT INTO ident (b) VALUES ('x'), ('y')"),
}
ORDER = {"items": "id", "empty_table": "a", "keyed": "id", "ser": "id", "ident": "id"}
# The other objects a dump carries: an index, a sequence that has handed out
# a value, a view (named before its table, so only pg_depend orders them).
OBJECTS = ["CREATE INDEX keyed_qty ON keyed (qty, code)", "CREATE SEQUENCE s START 10", "SELECT nextval('s')",
           "CREATE VIEW a_view AS SELECT id, name FROM keyed WHERE qty > 1"]
# Read on both sides after the restore: each must answer the same.
AFTER = {"indexes": "SELECT c.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c"
                    " ON c.oid = i.indexrelid WHERE i.indrelid IN ('keyed'::regclass, 'ser'::regclass) ORDER BY 1",
         "keys": "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'keyed'::regclass"
                 " ORDER BY 1",
         "sequence values": "SELECT last_value, is_called FROM s UNION ALL SELECT last_value, is_called FROM ser_id_seq"
                            " UNION ALL SELECT last_value, is_called FROM ident_id_seq",
         "identity": "SELECT attname, attidentity FROM pg_attribute WHERE attrelid = 'ident'::regclass AND attnum > 0"
                     " ORDER BY attnum",
         "the view's rows": "SELECT * FROM a_view ORDER BY id"}
# Steps that fail today: {step: (why, pattern its error matches)}. See tool_env.Checks.
KNOWN_GAPS = {}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FreshTallyd:
    """A second tallyd with its default configuration (user tally, trust on
    loopback) and an empty data directory, stopped on exit."""

    def __init__(self, name):
        self.port = free_port()
        directory = os.path.join(os.environ["TALLY_TEST_DIR"], name)
        env = {k: v for k, v in os.environ.items() if not k.startswith("TALLY_")}
        self.log = open(directory + ".log", "w")
        self.process = subprocess.Popen([os.environ["TALLY_TEST_TALLYD"], "--port", str(self.port), "--data-dir",
                                         directory], env=env, stdout=self.log, stderr=subprocess.STDOUT)
        self.conninfo = f"host=127.0.0.1 port={self.port} dbname=tally user=tally sslmode=disable connect_timeout=10"
        deadline = time.monotonic() + 60
        while t.psql(self.conninfo, "SELECT 1")[0] != 0:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the second tallyd did not start")
            time.sleep(0.2)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=60)
        self.log.close()


def same_after(checks, source, target, leg):
    """Every table's rows and column types, and the AFTER queries, the same in both."""
    for name in TABLES:
        query = f"SELECT * FROM {name} ORDER BY {ORDER[name]}"
        expected, actual = t.psql(source, query), t.psql(target, query)
        checks.check(expected == actual and expected[0] == 0, f"{leg}: {name}: the same rows",
                     f"--- before\n{expected[1]}\n--- after restore\n{actual[1]}")
        columns = ("SELECT column_name, data_type, is_nullable, character_maximum_length, numeric_precision,"
                   f" numeric_scale, column_default FROM information_schema.columns WHERE table_name = '{name}'"
                   " ORDER BY ordinal_position")
        expected, actual = t.psql(source, columns), t.psql(target, columns)
        checks.check(expected == actual and expected[0] == 0, f"{leg}: {name}: the same column types",
                     f"--- before\n{expected[1]}\n--- after restore\n{actual[1]}")
    for what, query in AFTER.items():
        expected, actual = t.psql(source, query), t.psql(target, query)
        checks.check(expected == actual and expected[0] == 0, f"{leg}: {what}: the same",
                     f"--- before\n{expected[1]}\n--- after restore\n{actual[1]}")


def main():
    checks = t.Checks(KNOWN_GAPS, __file__)
    for name, (create, insert) in TABLES.items():
        for sql in (create, insert):
            if sql is None:
                continue
            status, out = t.psql(t.TALLY, sql)
            if status != 0:
                print(f"FAIL: tallyd did not run {sql!r}: {out}")
                return 1
    for sql in OBJECTS:
        status, out = t.psql(t.TALLY, sql)
        if status != 0:
            print(f"FAIL: tallyd did not run {sql!r}: {out}")
            return 1
    # pg_dumpall: the roles (the connected user) and the database's objects, dumped
    # from the database it connects to (each name Tally accepts reaches the same tables).
    status, dump = t.run([PG_DUMPALL, "-d", t.TALLY], timeout=300)
    checks.check(status == 0 and f"CREATE ROLE {t.USER};" in dump and "CREATE TABLE public.items" in dump
                 and "COPY public.items" in dump, "pg_dumpall of the Tally server", dump[-4000:])
    status, dump = t.run([PG_DUMP, "--no-owner", "--no-privileges", t.TALLY], timeout=300)
    if not checks.check(status == 0 and "CREATE TABLE" in dump, "pg_dump of the Tally database", dump[-4000:]):
        return checks.status()
    pg = t.pg.Postgres(t.USER, t.DATABASE)
    try:
        target = pg.conninfo(t.USER, t.DATABASE)
        status, out = t.run([t.PSQL, "-X", "-q", "-v", "ON_ERROR_STOP=1", target], input=dump, timeout=300)
        checks.check(status == 0, "the dump restores into PostgreSQL 15", out[-4000:])
        same_after(checks, t.TALLY, target, "Tally -> PostgreSQL")
        # And back: PostgreSQL's own dump of what it restored, into a fresh tallyd.
        status, dump = t.run([PG_DUMP, "--no-owner", "--no-privileges", target], timeout=300)
        checks.check(status == 0, "pg_dump of the restored PostgreSQL database", dump[-4000:])
        fresh = FreshTallyd("fresh")
        try:
            status, out = t.run([t.PSQL, "-X", "-q", "-v", "ON_ERROR_STOP=1", fresh.conninfo], input=dump, timeout=300)
            checks.check(status == 0, "PostgreSQL's dump restores into a fresh tallyd", out[-4000:])
            same_after(checks, target, fresh.conninfo, "PostgreSQL -> Tally")
        finally:
            fresh.stop()
        custom_format(checks, pg)
    finally:
        pg.stop()
    return checks.status()


def custom_format(checks, pg):
    """pg_dump -Fc of Tally, pg_restore into a new PostgreSQL database; pg_dump -Fc
    of that, pg_restore into a fresh tallyd."""
    archive = os.path.join(os.environ["TALLY_TEST_DIR"], "tally.dump")
    status, out = t.run([PG_DUMP, "-Fc", "--no-owner", "--no-privileges", "-f", archive, t.TALLY], timeout=300)
    if not checks.check(status == 0, "pg_dump -Fc of the Tally database", out[-4000:]):
        return
    pg.sql(t.USER, t.DATABASE, "CREATE DATABASE from_archive")
    target = pg.conninfo(t.USER, "from_archive")
    status, out = t.run([PG_RESTORE, "--exit-on-error", "--no-owner", "-d", target, archive], timeout=300)
    checks.check(status == 0, "pg_restore of it into PostgreSQL 15", out[-4000:])
    same_after(checks, t.TALLY, target, "Tally -Fc-> PostgreSQL")
    archive = os.path.join(os.environ["TALLY_TEST_DIR"], "postgres.dump")
    status, out = t.run([PG_DUMP, "-Fc", "--no-owner", "--no-privileges", "-f", archive, target], timeout=300)
    checks.check(status == 0, "pg_dump -Fc of the restored PostgreSQL database", out[-4000:])
    fresh = FreshTallyd("fresh_custom")
    try:
        status, out = t.run([PG_RESTORE, "--exit-on-error", "--no-owner", "-d", fresh.conninfo, archive], timeout=300)
        checks.check(status == 0, "pg_restore of PostgreSQL's archive into a fresh tallyd", out[-4000:])
        same_after(checks, target, fresh.conninfo, "PostgreSQL -Fc-> Tally")
    finally:
        fresh.stop()


if __name__ == "__main__":
    sys.exit(main())
