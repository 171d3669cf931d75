#!/usr/bin/python3
"""SQLAlchemy (Debian's python3-sqlalchemy, over psycopg2) reflection and Core
queries, and pandas to_sql/read_sql with default arguments, against tallyd and
a PostgreSQL 15 holding the same tables: what the inspector reflects must be
what it reflects from PostgreSQL. Run through tests/clients/tallyd_harness.py."""
import datetime
import decimal
import sys

import tool_env as t

try:
    import pandas
    import sqlalchemy as sa
except ImportError as e:
    sys.exit(f"FAIL: {e}: python3-sqlalchemy and python3-pandas are needed (scripts/setup.sh --test)")

TABLES = [
    "CREATE TABLE orders (id int NOT NULL, customer varchar(40), amount numeric(12,2), placed date,"
    " shipped timestamp, express boolean, weight float8, notes text, qty int8, flags int2)",
]
# Needs PRIMARY KEY and CREATE INDEX (the "ddl" work): reflected keys and indexes.
KEYED_TABLES = [
    "CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, region varchar(20))",
    "CREATE INDEX customers_region ON customers (region)",
]
# Steps that fail today: {step: (why, pattern its error matches)}. See tool_env.Checks.
# The customers table's reflection runs once both of its statements run.
KNOWN_GAPS = {}


def engine(url):
    # pandas 1.5 takes only a non-"future" (SQLAlchemy 1.x style) engine.
    return sa.create_engine(url)


# What SQLAlchemy's inspector says about a table, comparable across servers, one
# function per reflection call.
REFLECTIONS = {
    "get_columns": lambda e, t: [(c["name"], str(c["type"]), c["nullable"], c.get("default"), c.get("autoincrement"))
                                 for c in sa.inspect(e).get_columns(t)],
    "get_pk_constraint": lambda e, t: sa.inspect(e).get_pk_constraint(t),
    "get_indexes": lambda e, t: sorted((i["name"], tuple(i["column_names"]), bool(i["unique"]))
                                       for i in sa.inspect(e).get_indexes(t)),
    "get_foreign_keys": lambda e, t: sa.inspect(e).get_foreign_keys(t),
    "get_unique_constraints": lambda e, t: sa.inspect(e).get_unique_constraints(t),
    "Table autoload": lambda e, t: [(c.name, str(c.type), c.nullable, c.primary_key)
                                    for c in sa.Table(t, sa.MetaData(), autoload_with=e).columns],
}


def compare_reflection(checks, pg_eng, tally_eng, table):
    for name, fn in REFLECTIONS.items():
        compare(checks, f"{table}: {name}", pg_eng, tally_eng, lambda e, fn=fn: fn(e, table))


def compare(checks, what, pg_eng, tally_eng, fn):
    try:
        expected = fn(pg_eng)
    except Exception as e:  # the oracle itself must answer
        return checks.check(False, f"{what} on PostgreSQL 15", repr(e))
    try:
        actual = fn(tally_eng)
    except Exception as e:
        return checks.check(False, what, f"tallyd raised {e!r}")
    return checks.check(expected == actual, what, f"--- PostgreSQL 15\n{expected}\n--- tallyd\n{actual}")


def main():
    checks = t.Checks(KNOWN_GAPS, __file__)
    pg = t.pg.Postgres(t.USER, t.DATABASE)
    try:
        pg_eng = engine(f"postgresql+psycopg2://{t.USER}@/{t.DATABASE}?host={pg.dir}&port={pg.port}")
        tally_eng = engine(f"postgresql+psycopg2://{t.USER}@{t.HOST}:{t.PORT}/{t.DATABASE}?sslmode=disable")
        for sql in TABLES:
            pg.sql(t.USER, t.DATABASE, sql)
            status, out = t.psql(t.TALLY, sql)
            if not checks.check(status == 0, f"tallyd runs {sql[:40]}...", out):
                return checks.status()
        compare(checks, "get_table_names", pg_eng, tally_eng, lambda e: sorted(sa.inspect(e).get_table_names()))
        compare(checks, "get_schema_names", pg_eng, tally_eng, lambda e: sa.inspect(e).get_schema_names())
        compare_reflection(checks, pg_eng, tally_eng, "orders")
        compare(checks, "has_table", pg_eng, tally_eng,
                lambda e: (sa.inspect(e).has_table("orders"), sa.inspect(e).has_table("nosuch")))

        keyed = True
        for sql in KEYED_TABLES:
            pg.sql(t.USER, t.DATABASE, sql)
            status, out = t.psql(t.TALLY, sql)
            keyed = checks.check(status == 0, f"tallyd runs {sql}", out) and keyed
        if keyed:
            compare_reflection(checks, pg_eng, tally_eng, "customers")

        # Core: insert with bound parameters, a filtered GROUP BY, an update.
        # Declared rather than reflected, so that Core is checked apart from reflection.
        orders = sa.Table("orders", sa.MetaData(), sa.Column("id", sa.Integer, nullable=False),
                          sa.Column("customer", sa.String(40)), sa.Column("amount", sa.Numeric(12, 2)),
                          sa.Column("placed", sa.Date), sa.Column("shipped", sa.DateTime),
                          sa.Column("express", sa.Boolean), sa.Column("weight", sa.Float),
                          sa.Column("notes", sa.Text), sa.Column("qty", sa.BigInteger),
                          sa.Column("flags", sa.SmallInteger))

        def core(e):
            with e.begin() as conn:
                conn.execute(orders.insert(), [
                    {"id": 1, "customer": "ann", "amount": decimal.Decimal("10.50"), "placed": datetime.date(2023, 6, 1),
                     "shipped": datetime.datetime(2023, 6, 2, 8, 0), "express": True, "weight": 1.5, "notes": None,
                     "qty": 3, "flags": 1},
                    {"id": 2, "customer": "bob", "amount": decimal.Decimal("7.25"), "placed": datetime.date(2023, 6, 1),
                     "shipped": None, "express": False, "weight": None, "notes": "fragile", "qty": 1, "flags": 0},
                    {"id": 3, "customer": "ann", "amount": decimal.Decimal("1.00"), "placed": datetime.date(2023, 6, 3),
                     "shipped": None, "express": None, "weight": 0.25, "notes": "", "qty": None, "flags": None},
                ])
            with e.connect() as conn:
                grouped = conn.execute(
                    sa.select(orders.c.customer, sa.func.sum(orders.c.amount), sa.func.count())
                    .where(orders.c.placed >= datetime.date(2023, 6, 1))
                    .group_by(orders.c.customer).order_by(orders.c.customer)).all()
                rows = conn.execute(sa.select(orders).order_by(orders.c.id)).all()
            return [tuple(r) for r in grouped], [tuple(r) for r in rows]
        compare(checks, "Core insert (executemany), GROUP BY, select", pg_eng, tally_eng, core)

        # pandas: to_sql with its defaults (it writes the index column and indexes it), read_sql back.
        frame = pandas.DataFrame({"name": ["a", "b", None], "value": [1.5, None, -2.0], "n": [1, 2, 3],
                                  "day": pandas.to_datetime(["2023-06-01", "2023-06-02", None]),
                                  "flag": [True, False, True]})

        def pandas_round_trip(e):
            frame.to_sql("frame", e)
            back = pandas.read_sql("SELECT * FROM frame ORDER BY n", e)
            # NaN is not equal to itself: missing values compare as None.
            return back.astype(object).where(back.notna(), None).to_dict("list"), [str(d) for d in back.dtypes]
        compare(checks, "pandas to_sql (defaults) then read_sql", pg_eng, tally_eng, pandas_round_trip)
        compare(checks, "pandas read_sql of a GROUP BY", pg_eng, tally_eng,
                lambda e: pandas.read_sql("SELECT flag, sum(value) AS total, count(*) AS n FROM frame GROUP BY flag"
                                          " ORDER BY flag", e).pipe(lambda f: f.astype(object).where(f.notna(), None))
                .to_dict("list"))
    finally:
        pg.stop()
    return checks.status()


if __name__ == "__main__":
    sys.exit(main())
