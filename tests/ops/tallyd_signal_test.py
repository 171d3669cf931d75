#!/usr/bin/env python3
"""pg_sleep, pg_cancel_backend, pg_terminate_backend and pg_backend_pid
through a started tallyd, with real sessions of three roles (tally, the
superuser; alice twice; bob):
- pg_backend_pid() is the pid of the session's BackendKeyData;
- a pg_sleep stops within STOP_BOUND_S (plus a client allowance) of a
  pg_cancel_backend or pg_terminate_backend returning, and of its
  statement_timeout; an idle session that is terminated goes;
- PostgreSQL 15's permission rules and answers: a role may signal its own
  sessions, a superuser any, nobody else a superuser's (42501); a pid that is
  no session gives false and a WARNING.
The SQLSTATEs, messages and results were checked against PostgreSQL 15 with
the same roles. Usage: tallyd_signal_test.py TALLYD"""
import os
import sys
import tempfile
import threading
import time
import unittest

import psycopg2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tallyd_lifecycle_test as lifecycle  # noqa: E402

# As tallyd_cancel_test.py: the issue asks for 100 ms; the allowance covers
# the client's side on a loaded CI machine.
STOP_BOUND_S = 0.100
ALLOWANCE_S = 0.150
SLEEP_S = 30


class SignalTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.server = lifecycle.Tallyd(os.path.join(cls.tmp.name, "data"), os.path.join(cls.tmp.name, "tallyd.log"),
                                      users="tally:trust,alice:trust,bob:trust")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.tmp.cleanup()

    def connect(self, user):
        c = psycopg2.connect(host="127.0.0.1", port=self.server.port, user=user, dbname="tally")
        c.autocommit = True
        self.addCleanup(c.close)
        return c

    def value(self, connection, sql, *args):
        with connection.cursor() as cur:
            cur.execute(sql, args)
            return cur.fetchone()[0]

    def stopped_after(self, victim, signal=None, setup=()):
        """Runs pg_sleep on victim, signals it from another thread with
        `signal` (a callable) after a moment; returns (error, seconds from the
        signal's return to the error)."""
        for sql in setup:
            self.value(victim, sql) if sql.startswith("SELECT") else victim.cursor().execute(sql)
        signalled = {}

        def send():
            time.sleep(0.3)
            signal()
            signalled["at"] = time.monotonic()

        thread = threading.Thread(target=send) if signal else None
        started = time.monotonic()
        if thread:
            thread.start()
        error = None
        try:
            victim.cursor().execute(f"SELECT pg_sleep({SLEEP_S})")
        except psycopg2.Error as e:
            error = e
        ended = time.monotonic()
        if thread:
            thread.join()
        return error, ended - signalled.get("at", started)

    def test_backend_pid_is_the_backend_key(self):
        c = self.connect("alice")
        self.assertEqual(self.value(c, "SELECT pg_backend_pid()"), c.get_backend_pid())

    def test_sleep_returns_void_text(self):
        c = self.connect("bob")
        started = time.monotonic()
        self.assertEqual(self.value(c, "SELECT pg_sleep(0.2)"), "")
        self.assertGreaterEqual(time.monotonic() - started, 0.2)
        self.assertIsNone(self.value(c, "SELECT pg_sleep(NULL)"))

    def test_cancel_own_session(self):
        victim, other = self.connect("alice"), self.connect("alice")
        pid = victim.get_backend_pid()
        result = {}
        error, latency = self.stopped_after(
            victim, lambda: result.setdefault("r", self.value(other, "SELECT pg_cancel_backend(%s)", pid)))
        print(f"pg_cancel_backend: stopped {latency * 1000:.1f} ms after the call returned")
        self.assertTrue(result["r"])
        self.assertIsNotNone(error)
        self.assertEqual(error.pgcode, "57014")
        self.assertLess(latency, STOP_BOUND_S + ALLOWANCE_S)
        self.assertEqual(self.value(victim, "SELECT 1"), 1)  # the session goes on

    def test_superuser_cancels_anyone(self):
        victim, admin = self.connect("bob"), self.connect("tally")
        pid = victim.get_backend_pid()
        error, latency = self.stopped_after(victim, lambda: self.value(admin, "SELECT pg_cancel_backend(%s)", pid))
        self.assertEqual(error.pgcode, "57014")
        self.assertLess(latency, STOP_BOUND_S + ALLOWANCE_S)

    def test_statement_timeout(self):
        victim = self.connect("bob")
        victim.cursor().execute("SET statement_timeout = '200ms'")
        started = time.monotonic()
        with self.assertRaises(psycopg2.Error) as caught:
            victim.cursor().execute(f"SELECT pg_sleep({SLEEP_S})")
        late = time.monotonic() - started - 0.2
        print(f"pg_sleep under statement_timeout: stopped {late * 1000:.1f} ms after the deadline")
        self.assertEqual(caught.exception.pgcode, "57014")
        self.assertLess(late, STOP_BOUND_S + ALLOWANCE_S)

    def test_terminate_own_session(self):
        victim, other = self.connect("alice"), self.connect("alice")
        pid = victim.get_backend_pid()
        result = {}
        error, latency = self.stopped_after(
            victim, lambda: result.setdefault("r", self.value(other, "SELECT pg_terminate_backend(%s)", pid)))
        print(f"pg_terminate_backend: stopped {latency * 1000:.1f} ms after the call returned")
        self.assertTrue(result["r"])
        self.assertIsNotNone(error)
        self.assertLess(latency, STOP_BOUND_S + ALLOWANCE_S)
        self.assertNotEqual(victim.closed, 0)  # the session is gone
        # Its pid is no session any more.
        with other.cursor() as cur:
            deadline = time.monotonic() + 10
            while True:
                cur.execute("SELECT pg_cancel_backend(%s)", (pid,))
                if cur.fetchone()[0] is False or time.monotonic() > deadline:
                    break
                time.sleep(0.05)

    def test_terminate_idle_session(self):
        # An idle session ends too, not only at its next statement: its
        # connection closes within a poll slice (200 ms) of the call.
        victim, other = self.connect("alice"), self.connect("alice")
        pid = victim.get_backend_pid()
        self.assertTrue(self.value(other, "SELECT pg_terminate_backend(%s)", pid))
        deadline = time.monotonic() + 5
        while self.value(other, "SELECT pg_cancel_backend(%s)", pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        print(f"idle pg_terminate_backend: session gone after {5 - (deadline - time.monotonic()):.3f} s")
        self.assertLess(time.monotonic(), deadline, "the idle session was not terminated")
        with self.assertRaises(psycopg2.Error):
            victim.cursor().execute("SELECT 1")

    def test_permissions(self):
        alice, bob, admin = self.connect("alice"), self.connect("bob"), self.connect("tally")
        cases = [
            (bob, "pg_cancel_backend", "must be a member of the role whose query is being canceled or member of "
                                       "pg_signal_backend"),
            (bob, "pg_terminate_backend", "must be a member of the role whose process is being terminated or member "
                                          "of pg_signal_backend"),
            (admin, "pg_cancel_backend", "must be a superuser to cancel superuser query"),
            (admin, "pg_terminate_backend", "must be a superuser to terminate superuser process"),
        ]
        for target, function, message in cases:
            with self.subTest(function=function, target=target.get_backend_pid()):
                with self.assertRaises(psycopg2.Error) as caught:
                    self.value(alice, f"SELECT {function}(%s)", target.get_backend_pid())
                self.assertEqual(caught.exception.pgcode, "42501")
                self.assertEqual(caught.exception.pgerror.splitlines()[0], "ERROR:  " + message)
        self.assertEqual(self.value(bob, "SELECT 1"), 1)  # not signalled

    def test_unknown_pid(self):
        c = self.connect("bob")
        self.assertIs(self.value(c, "SELECT pg_cancel_backend(1)"), False)
        self.assertIs(self.value(c, "SELECT pg_terminate_backend(1)"), False)
        self.assertEqual([n.strip() for n in c.notices],
                         ["WARNING:  PID 1 is not a PostgreSQL backend process"] * 2)


if __name__ == "__main__":
    lifecycle.TALLYD = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
