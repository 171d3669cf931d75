#!/usr/bin/env python3
"""tallyd before authentication, as a hostile but fair client sees it: silent
sockets do not lock psql out, authentication_timeout closes them, a pre-auth
client cannot make the server allocate large messages, a failure to create a
session thread (RLIMIT_NPROC) or to get a descriptor (RLIMIT_NOFILE) is
answered to that client alone while the server keeps serving, and an unknown
user goes through the same password exchange as a known one (no user
enumeration). Starts scratch tallyd processes (tallyd_lifecycle_test.Tallyd).
Usage: tallyd_preauth_test.py TALLYD"""
import os
import pwd
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tallyd_lifecycle_test as lifecycle  # noqa: E402

PASSWORD = "S3cret-pw"
USERS = (f"tally:trust,pw_user:password:{PASSWORD},scram_user:scram-sha-256:{PASSWORD},"
         f"md5_user:md5:{PASSWORD}")
# How long a psql connection may take while the server is under attack.
CONNECT_BOUND_S = 10


def startup_packet(user, database="tally"):
    body = struct.pack("!i", 196608)
    for key, value in (("user", user), ("database", database)):
        body += key.encode() + b"\0" + value.encode() + b"\0"
    body += b"\0"
    return struct.pack("!i", len(body) + 4) + body


def read_message(sock):
    """(type, body) of one backend message, or (None, b"") at EOF."""
    header = b""
    while len(header) < 5:
        chunk = sock.recv(5 - len(header))
        if not chunk:
            return None, b""
        header += chunk
    length = struct.unpack("!i", header[1:5])[0] - 4
    body = b""
    while len(body) < length:
        chunk = sock.recv(length - len(body))
        if not chunk:
            return None, b""
        body += chunk
    return header[:1], body


def error_fields(body):
    fields = {}
    for part in body.split(b"\0"):
        if part:
            fields[chr(part[0])] = part[1:].decode(errors="replace")
    return fields


def proc_status(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def connect(port):
    return socket.create_connection(("127.0.0.1", port), timeout=10)


class PreAuth(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        os.chmod(self.tmp.name, 0o777)  # a tallyd run as another user writes here
        self.server = None
        self.sockets = []

    def tearDown(self):
        for s in self.sockets:
            s.close()
        if self.server is not None:
            self.server.kill()
        self.tmp.cleanup()

    def start(self, command_prefix=(), **settings):
        settings.setdefault("users", USERS)
        self.server = lifecycle.Tallyd(os.path.join(self.tmp.name, "data"),
                                       os.path.join(self.tmp.name, "tallyd.log"),
                                       command_prefix=command_prefix, **settings)
        return self.server

    def open_silent(self, count):
        for _ in range(count):
            self.sockets.append(connect(self.server.port))

    def timed_psql(self, *commands, user="tally", password=None, sslmode="prefer"):
        # psql prints no SQLSTATE for a refused connection: tests compare
        # PostgreSQL's message texts (the codes are checked in
        # tests/protocol). libpq does not show an error answered to its
        # SSLRequest, hence sslmode=disable where such an answer is expected.
        env = dict(os.environ, PGCONNECT_TIMEOUT=str(CONNECT_BOUND_S), PGSSLMODE=sslmode)
        if password is not None:
            env["PGPASSWORD"] = password
        args = self.server.psql_args(*[a for c in commands for a in ("-c", c)])
        args[args.index("-U") + 1] = user
        start = time.monotonic()
        r = subprocess.run(args, capture_output=True, text=True, timeout=60, env=env)
        return r, time.monotonic() - start

    def test_psql_connects_with_300_silent_sockets_open(self):
        server = self.start()
        self.open_silent(300)
        time.sleep(0.5)  # let the server accept them all
        r, elapsed = self.timed_psql("SELECT 1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "1")
        print(f"psql with 300 silent sockets open: {elapsed:.2f} s", file=sys.stderr)
        self.assertLess(elapsed, CONNECT_BOUND_S)
        # Silent sockets hold no session thread.
        self.assertLess(proc_status(server.proc.pid, "Threads"), 150)

    def test_authentication_timeout_closes_a_silent_socket(self):
        self.start(authentication_timeout=1)
        s = connect(self.server.port)
        self.sockets.append(s)
        s.settimeout(10)
        start = time.monotonic()
        self.assertEqual(s.recv(1), b"")  # closed without an answer, as PostgreSQL does
        self.assertLess(time.monotonic() - start, 5)

    def test_authentication_timeout_closes_a_stalled_password_exchange(self):
        self.start(authentication_timeout=1)
        s = connect(self.server.port)
        self.sockets.append(s)
        s.sendall(startup_packet("pw_user"))
        kind, _ = read_message(s)
        self.assertEqual(kind, b"R")
        start = time.monotonic()
        s.settimeout(10)
        self.assertEqual(read_message(s)[0], None)
        self.assertLess(time.monotonic() - start, 5)

    def test_pre_auth_threads_are_capped_and_the_excess_refused_at_once(self):
        server = self.start(max_connections=10, superuser_reserved_connections=1)
        threads_before = proc_status(server.proc.pid, "Threads")
        # Each sends one byte of a startup packet and stalls: a session thread
        # waits for the rest, up to the cap; the others are refused with 53300.
        for _ in range(40):
            s = connect(server.port)
            s.sendall(b"\0")
            self.sockets.append(s)
        refused = 0
        for s in self.sockets:
            s.settimeout(0.5)
            try:
                kind, body = read_message(s)
            except socket.timeout:
                continue
            if kind == b"E":
                self.assertEqual(error_fields(body)["C"], "53300")
                refused += 1
        self.assertGreaterEqual(refused, 40 - 10)
        self.assertLessEqual(proc_status(server.proc.pid, "Threads"), threads_before + 10)

    def test_slots_count_authenticated_sessions_and_reserve_some_for_superusers(self):
        self.start(max_connections=4, superuser_reserved_connections=2,
                   users=USERS + ",boss:trust", superusers="boss")
        # psql sessions held open by stdin.
        held = []
        try:
            for _ in range(2):
                p = subprocess.Popen(self.server.psql_args(), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                held.append(p)
                p.stdin.write("SELECT 1;\n")
                p.stdin.flush()
                self.assertEqual(p.stdout.readline().strip(), "1")
            r, _ = self.timed_psql("SELECT 1")
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("FATAL:  remaining connection slots are reserved for non-replication "
                          "superuser connections", r.stderr)
            r, _ = self.timed_psql("SELECT 1", user="boss")
            self.assertEqual(r.returncode, 0, r.stderr)
        finally:
            for p in held:
                p.stdin.close()
                p.wait(timeout=30)

    def test_pre_auth_messages_are_capped_before_allocation(self):
        server = self.start()
        self.timed_psql("SELECT 1")
        rss_before = proc_status(server.proc.pid, "VmRSS")
        claimed = 60 << 20
        answers = []

        def attack(kind):
            s = connect(server.port)
            self.sockets.append(s)
            if kind == "startup":
                s.sendall(struct.pack("!i", claimed) + struct.pack("!i", 196608))
            else:
                s.sendall(startup_packet("pw_user"))
                self.assertEqual(read_message(s)[0], b"R")
                s.sendall(b"p" + struct.pack("!i", claimed))
            try:
                block = b"x" * (1 << 20)
                for _ in range(claimed >> 20):
                    s.sendall(block)
            except OSError:
                pass  # the server refused the message and closed
            s.settimeout(5)
            try:
                answers.append(read_message(s))
            except OSError as e:
                answers.append((None, str(e).encode()))

        workers = [threading.Thread(target=attack, args=("startup" if i < 2 else "password",))
                   for i in range(10)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(timeout=60)
        time.sleep(0.5)
        grown_kb = proc_status(server.proc.pid, "VmRSS") - rss_before
        print(f"RSS {rss_before} kB before, grew by {grown_kb} kB", file=sys.stderr)
        self.assertLess(grown_kb, 16 << 10, f"RSS grew by {grown_kb} kB")
        for kind, body in answers:
            if kind is not None:
                self.assertEqual(kind, b"E")
                self.assertEqual(error_fields(body)["C"], "08P01")
        r, _ = self.timed_psql("SELECT 1")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_unknown_user_goes_through_the_password_exchange(self):
        self.start()
        s = connect(self.server.port)
        self.sockets.append(s)
        s.sendall(startup_packet("no_such_user"))
        kind, body = read_message(s)
        self.assertEqual(kind, b"R")
        self.assertEqual(struct.unpack("!i", body[:4])[0], 10)  # AuthenticationSASL
        unknown, _ = self.timed_psql("SELECT 1", user="no_such_user", password="guess")
        known, _ = self.timed_psql("SELECT 1", user="scram_user", password="guess")
        self.assertNotEqual(unknown.returncode, 0)
        # PostgreSQL 15's answer to both (pg_hba scram-sha-256).
        self.assertIn('FATAL:  password authentication failed for user "no_such_user"', unknown.stderr)
        self.assertIn('FATAL:  password authentication failed for user "scram_user"', known.stderr)
        self.assertNotIn("does not exist", unknown.stderr)

    def as_other_user(self):
        """A wrapper running tallyd as 'nobody' when we are root: RLIMIT_NPROC
        does not bind root, and it counts every thread of the user."""
        if os.geteuid() != 0:
            return (), os.geteuid()
        nobody = pwd.getpwnam("nobody")
        return (("setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
                 "--clear-groups"), nobody.pw_uid)

    def user_threads(self, uid):
        count = 0
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    if proc_status(entry, "Uid") == uid:
                        count += proc_status(entry, "Threads")
                except (OSError, KeyError):
                    pass
        return count

    def test_thread_creation_failure_answers_that_client_and_the_server_goes_on(self):
        prefix, uid = self.as_other_user()
        # How many threads tallyd needs to serve one query, measured unlimited.
        server = self.start(command_prefix=prefix)
        self.timed_psql("SELECT 1")
        own = proc_status(server.proc.pid, "Threads")
        self.assertEqual(server.stop(), 0)
        # Then under RLIMIT_NPROC with room for two more threads of the user.
        limit = self.user_threads(uid) + own + 2
        server = self.start(command_prefix=("prlimit", f"--nproc={limit}:{limit}", *prefix))
        self.timed_psql("SELECT 1")
        codes = []
        for _ in range(6):
            s = connect(server.port)
            self.sockets.append(s)
            s.sendall(startup_packet("tally"))
            s.settimeout(10)
            kind, body = read_message(s)
            if kind == b"E":
                codes.append(error_fields(body)["C"])
        print(f"refused under RLIMIT_NPROC: {codes}", file=sys.stderr)
        self.assertTrue(codes, "no connection was refused: the limit did not bind")
        for code in codes:
            self.assertIn(code, ("53300", "53200"))
        self.assertIsNone(server.proc.poll(), "tallyd died:\n" + server.log_text()[-3000:])
        for s in self.sockets:
            s.close()
        self.sockets = []
        deadline = time.monotonic() + 10
        while True:
            r, _ = self.timed_psql("SELECT 1")
            if r.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_descriptor_exhaustion_backs_off_and_answers(self):
        server = self.start(authentication_timeout=600)
        pid = server.proc.pid
        self.timed_psql("SELECT 1")
        open_fds = len(os.listdir(f"/proc/{pid}/fd"))
        limit = open_fds + 20
        subprocess.run(["prlimit", f"--pid={pid}", f"--nofile={limit}:{limit}"], check=True)
        self.open_silent(60)  # more than the descriptors left
        time.sleep(1)
        cpu_before = cpu_seconds(pid)
        time.sleep(2)
        cpu_used = cpu_seconds(pid) - cpu_before
        print(f"CPU time in 2 s with descriptors exhausted: {cpu_used:.2f} s", file=sys.stderr)
        self.assertLess(cpu_used, 0.3, "the accept loop spins while descriptors are exhausted")
        r, elapsed = self.timed_psql("SELECT 1", sslmode="disable")
        self.assertLess(elapsed, CONNECT_BOUND_S)
        if r.returncode != 0:
            self.assertIn("FATAL:  sorry, too many clients already", r.stderr)
        for s in self.sockets:
            s.close()
        self.sockets = []
        deadline = time.monotonic() + 10
        while True:
            r, _ = self.timed_psql("SELECT 1")
            if r.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    lifecycle.TALLYD = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
