#!/usr/bin/python3
"""psycopg 3 against a started tallyd: it sends str parameters untyped and
others typed, binds server-side prepared statements after a few executions
(prepare_threshold) and can send binary parameters. Expected rows were
checked against PostgreSQL 15 with the same client. Run through
tallyd_harness.py."""
import datetime
import decimal
import os
import sys

import psycopg


def connect():
    return psycopg.connect(host=os.environ["TALLY_TEST_HOST"], port=os.environ["TALLY_TEST_PORT"],
                           user=os.environ["TALLY_TEST_TRUST_USER"], dbname=os.environ["TALLY_TEST_DB"],
                           autocommit=True)


def main():
    with connect() as c:
        c.execute("DROP TABLE IF EXISTS pg3_items")
        c.execute("CREATE TABLE pg3_items (id int, name text, price float8, day date, ok boolean, amount numeric(10,2))")
        insert = "INSERT INTO pg3_items VALUES (%s, %s, %s, %s, %s, %s)"
        c.execute(insert, (1, "apple", 1.5, datetime.date(2023, 6, 1), True, decimal.Decimal("12.34")))
        # Executed often enough to be prepared server-side, then bound again.
        for i in range(2, 9):
            c.execute(insert, (i, "pear" if i % 2 else None, i / 4, None, i % 3 == 0, i), prepare=i > 4)
        c.cursor().executemany(insert, [(20, "fig", 2.0, datetime.date(2024, 2, 29), False, 1),
                                        (21, "fig", None, None, None, None)])
        with c.cursor(binary=True) as cur:
            cur.execute(insert, (30, "kiwi", 0.5, datetime.date(2023, 1, 1), True, decimal.Decimal("-1.5")))
        rows = c.execute("SELECT id, name, price, day, ok, amount FROM pg3_items WHERE id IN (1, 5, 21, 30) "
                         "ORDER BY id").fetchall()
        assert rows == [
            (1, "apple", 1.5, datetime.date(2023, 6, 1), True, decimal.Decimal("12.34")),
            (5, "pear", 1.25, None, False, decimal.Decimal("5.00")),
            (21, "fig", None, None, None, None),
            (30, "kiwi", 0.5, datetime.date(2023, 1, 1), True, decimal.Decimal("-1.50")),
        ], rows
        c.execute("UPDATE pg3_items SET name = %s WHERE id = %s", ("plum", 2))
        c.execute("DELETE FROM pg3_items WHERE name = %s", ("fig",))
        groups = c.execute("SELECT name, count(*), sum(amount) FROM pg3_items WHERE id < %s GROUP BY name "
                           "ORDER BY name NULLS LAST", (100,)).fetchall()
        assert groups == [("apple", 1, decimal.Decimal("12.34")), ("kiwi", 1, decimal.Decimal("-1.50")),
                          ("pear", 3, decimal.Decimal("15.00")),
                          ("plum", 1, decimal.Decimal("2.00")), (None, 3, decimal.Decimal("18.00"))], groups
        try:
            c.execute(insert, (40, "x", "not a number", None, None, None))
            raise AssertionError("a bad float was accepted")
        except psycopg.errors.InvalidTextRepresentation:
            pass
        assert c.execute("SELECT count(*) FROM pg3_items").fetchone() == (9,)
        c.execute("DROP TABLE pg3_items")
        # Aware datetimes go as timestamptz, naive ones as timestamp: both
        # assign to timestamp and date columns.
        c.execute("DROP TABLE IF EXISTS pg3_times")
        c.execute("CREATE TABLE pg3_times (t timestamp, d date)")
        aware = datetime.datetime(2023, 6, 1, 12, 30, tzinfo=datetime.timezone.utc)
        naive = datetime.datetime(2023, 6, 2, 1, 2, 3)
        c.execute("INSERT INTO pg3_times VALUES (%s, %s)", (aware, aware))
        c.execute("INSERT INTO pg3_times VALUES (%s, %s)", (naive, naive))
        times = c.execute("SELECT t::text, d::text FROM pg3_times ORDER BY t").fetchall()
        assert times == [("2023-06-01 12:30:00", "2023-06-01"), ("2023-06-02 01:02:03", "2023-06-02")], times
        c.execute("DROP TABLE pg3_times")
    print("psycopg3_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
