#!/usr/bin/python3
"""SHOW ALL and pg_settings against PostgreSQL 15's: the same columns, the same
settings (Tally adds only its own tally.* ones), the same metadata for each
(unit, category, descriptions, context, type, range, enum values), the same
values where neither server was configured differently, and SET/SHOW of values
with units printed the same. Run through tests/clients/tallyd_harness.py."""
import sys

import tool_env as t

# Where tallyd's value is its own, not a fresh PostgreSQL's: its configuration
# (executor/server_settings.cpp), its storage and sessions (UTF8, C locale, UTC;
# setting_registry.cpp), its version, and values PostgreSQL computes
# from its own shared memory.
TALLY_VALUES = {"data_directory", "port", "listen_addresses", "max_connections", "superuser_reserved_connections",
                "authentication_timeout", "ssl", "ssl_cert_file", "ssl_key_file", "ssl_ca_file",
                "unix_socket_directories", "statement_timeout", "client_encoding", "server_encoding", "lc_collate",
                "lc_ctype", "lc_messages", "lc_monetary", "lc_numeric", "lc_time", "TimeZone", "log_timezone",
                "max_parallel_workers_per_gather", "server_version", "server_version_num", "shared_memory_size",
                "shared_memory_size_in_huge_pages", "application_name"}
METADATA = "name, unit, category, short_desc, extra_desc, context, vartype, min_val, max_val, enumvals"
# Each is run in both servers; what SHOW prints after it must be the same.
SETS = [("work_mem", "'1GB'"), ("work_mem", "100"), ("work_mem", "'1536kB'"), ("statement_timeout", "'90s'"),
        ("statement_timeout", "'2min'"), ("lock_timeout", "1500"), ("random_page_cost", "1.5"),
        ("synchronous_commit", "true"), ("enable_seqscan", "off"), ("vacuum_cost_delay", "'2ms'"),
        ("temp_buffers", "'16MB'"), ("IntervalStyle", "'ISO_8601'"), ("extra_float_digits", "3")]
# Each fails in both servers with this SQLSTATE.
BAD_SETS = [("port", "5433", "55P02"), ("shared_buffers", "'1GB'", "55P02"), ("work_mem", "'1 parsec'", "22023"),
            ("work_mem", "10", "22023"), ("bytea_output", "'octal'", "22023"), ("enable_seqscan", "'maybe'", "22023"),
            ("no_such_setting", "1", "42704")]


def rows(conninfo, sql):
    status, out = t.psql(conninfo, sql)
    return status, out.splitlines()


def sqlstate(conninfo, sql):
    status, out = t.run([t.PSQL, "-X", "-At", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose", conninfo,
                         "-c", sql])
    for line in out.splitlines():
        if line.startswith("ERROR:"):
            return line.split()[1].rstrip(":")
    return "ok" if status == 0 else out


def main():
    checks = t.Checks({}, __file__)
    pg = t.pg.Postgres(t.USER, t.DATABASE)
    try:
        target = pg.conninfo(t.USER, t.DATABASE)
        # Columns (psql's unaligned header).
        for sql in ["SHOW ALL", "SELECT * FROM pg_settings LIMIT 0"]:
            expected = t.run([t.PSQL, "-X", "-A", target, "-c", sql])[1].splitlines()[0]
            actual = t.run([t.PSQL, "-X", "-A", t.TALLY, "-c", sql])[1].splitlines()[0]
            checks.check(expected == actual, f"{sql}: columns", f"PostgreSQL: {expected}\ntallyd: {actual}")
        # The settings, in SHOW ALL's order.
        _, pg_show = rows(target, "SHOW ALL")
        status, tally_show = rows(t.TALLY, "SHOW ALL")
        tally_show = [r for r in tally_show if not r.startswith("tally.")]
        # Tally's settings are generated from one PostgreSQL 15 minor release
        # (executor/postgres_settings.cpp); an oracle of another minor lists
        # what that release added or dropped. Those are named, not compared.
        _, pg_version = rows(target, "SHOW server_version")
        _, tally_version = rows(t.TALLY, "SHOW server_version")
        other_minor = set()
        if pg_version != tally_version:
            names = lambda show: {r.split("|")[0] for r in show}  # noqa: E731
            other_minor = names(pg_show) ^ names(tally_show)
            print(f"note: PostgreSQL {pg_version} beside tallyd's {tally_version}: not compared {sorted(other_minor)}")
            pg_show = [r for r in pg_show if r.split("|")[0] not in other_minor]
            tally_show = [r for r in tally_show if r.split("|")[0] not in other_minor]
        pg_names = [r.split("|")[0] for r in pg_show]
        tally_names = [r.split("|")[0] for r in tally_show]
        checks.check(status == 0 and pg_names == tally_names, f"SHOW ALL lists PostgreSQL's {len(pg_names)} settings",
                     f"only in PostgreSQL: {sorted(set(pg_names) - set(tally_names))}\n"
                     f"only in tallyd: {sorted(set(tally_names) - set(pg_names))}")
        _, defaults = rows(target, "SELECT name FROM pg_settings WHERE source = 'default'")
        compared = set(defaults) - TALLY_VALUES
        pg_values = {r.split("|")[0]: r for r in pg_show if r.split("|")[0] in compared}
        tally_values = {r.split("|")[0]: r for r in tally_show if r.split("|")[0] in compared}
        differ = [f"PostgreSQL {pg_values[n]!r}\ntallyd     {tally_values.get(n)!r}"
                  for n in sorted(pg_values) if pg_values[n] != tally_values.get(n)]
        checks.check(len(pg_values) > 250 and not differ,
                     f"SHOW ALL: the same value and description for {len(pg_values)} default settings", "\n".join(differ))
        # pg_settings: the metadata of every setting.
        skipped = "".join(f" AND name <> '{n}'" for n in sorted(other_minor))
        query = f"SELECT {METADATA} FROM pg_settings WHERE name NOT LIKE 'tally.%'{skipped} ORDER BY name"
        _, expected = rows(target, query)
        status, actual = rows(t.TALLY, query)
        differ = [f"PostgreSQL {e!r}\ntallyd     {a!r}" for e, a in zip(expected, actual) if e != a]
        checks.check(status == 0 and len(expected) == len(actual) and not differ,
                     f"pg_settings: {len(expected)} rows of ({METADATA})", "\n".join(differ[:20]))
        query = ("SELECT name, setting, boot_val, reset_val FROM pg_settings WHERE name IN ('work_mem', "
                 "'shared_buffers', 'checkpoint_timeout', 'random_page_cost', 'bytea_output') ORDER BY name")
        _, expected = rows(target, query)
        _, actual = rows(t.TALLY, query)
        checks.check(expected == actual, "pg_settings: setting, boot_val and reset_val in base units",
                     f"PostgreSQL {expected}\ntallyd     {actual}")
        status, actual = rows(t.TALLY, "SELECT setting FROM pg_settings WHERE name = 'port'")
        checks.check(actual == [str(t.PORT)], "pg_settings: port is tallyd's", str(actual))
        # SET and SHOW.
        for name, value in SETS:
            sql = f"SET {name} = {value}; SHOW {name}"
            expected, actual = t.psql(target, sql), t.psql(t.TALLY, sql)
            checks.check(expected == actual, sql, f"PostgreSQL {expected!r}\ntallyd     {actual!r}")
        for name, value, state in BAD_SETS:
            sql = f"SET {name} = {value}"
            expected, actual = sqlstate(target, sql), sqlstate(t.TALLY, sql)
            checks.check(expected == state and actual == state, f"{sql} fails with {state}",
                         f"PostgreSQL {expected}\ntallyd     {actual}")
    finally:
        pg.stop()
    return checks.status()


if __name__ == "__main__":
    sys.exit(main())
