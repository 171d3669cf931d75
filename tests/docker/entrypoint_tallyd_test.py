#!/usr/bin/env python3
"""What the container runs, outside a container: docker/entrypoint.sh starts the
real tallyd configured only by environment, the image's HEALTHCHECK command
(pg_isready) turns healthy, psql logs in with the password given as
TALLY_PASSWORD (SCRAM-SHA-256), and `docker stop`'s SIGTERM ends tallyd with
exit code 0. Usage: entrypoint_tallyd_test.py TALLYD"""
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ENTRYPOINT = os.path.join(REPO, "docker", "entrypoint.sh")
TALLYD = None
START_TIMEOUT = 60
STOP_TIMEOUT = 60


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthcheck_command():
    """The image's HEALTHCHECK CMD, as Docker would run it (through /bin/sh -c)."""
    with open(os.path.join(REPO, "docker", "Dockerfile")) as f:
        text = f.read().replace("\\\n", " ")
    m = re.search(r"^HEALTHCHECK .*?\bCMD (.+)$", text, re.M)
    assert m, "no HEALTHCHECK in the Dockerfile"
    return m.group(1).strip()


class EntrypointWithTallyd(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.port, self.http_port = free_port(), free_port()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TALLY")}
        self.env.update({"TALLYD_BIN": TALLYD, "TALLY_DEFAULT_DATA_DIR": os.path.join(self.tmp.name, "data"),
                         "TALLY_PASSWORD": "container-secret", "TALLY_PORT": str(self.port),
                         "TALLY_HTTP_PORT": str(self.http_port),
                         # Loopback only on a shared CI machine; the image listens on 0.0.0.0.
                         "TALLY_LISTEN_ADDRESS": "127.0.0.1", "TALLY_HTTP_ADDRESS": "127.0.0.1",
                         "TALLY_CPU_THREADS": "2", "TALLY_GPU_DEVICE": "-2"})
        self.log = open(os.path.join(self.tmp.name, "tallyd.log"), "w+")
        self.proc = subprocess.Popen(["sh", ENTRYPOINT], env=self.env, stdout=self.log,
                                     stderr=subprocess.STDOUT)

    def tearDown(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.log.close()
        self.tmp.cleanup()

    def server_log(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def healthy(self):
        env = dict(self.env, TALLY_PORT=str(self.port))
        return subprocess.run(["sh", "-c", healthcheck_command()], env=env, capture_output=True,
                              timeout=30).returncode == 0

    def psql(self, password, sql):
        env = dict(os.environ, PGPASSWORD=password, PGCONNECT_TIMEOUT="10")
        return subprocess.run(["psql", "-X", "-A", "-t", "-h", "127.0.0.1", "-p", str(self.port), "-U", "tally",
                               "-d", "tally", "-c", sql], env=env, capture_output=True, text=True, timeout=60)

    def test_healthcheck_login_and_graceful_stop(self):
        deadline = time.monotonic() + START_TIMEOUT
        while not self.healthy():
            self.assertIsNone(self.proc.poll(), "tallyd exited:\n" + self.server_log())
            self.assertLess(time.monotonic(), deadline, "never healthy:\n" + self.server_log())
            time.sleep(0.2)
        ok = self.psql("container-secret", "SELECT 1")
        self.assertEqual(ok.returncode, 0, ok.stderr + self.server_log())
        self.assertEqual(ok.stdout.strip(), "1")
        bad = self.psql("wrong", "SELECT 1")
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("password authentication failed", bad.stderr)
        self.assertNotIn("container-secret", self.server_log(), "the password never reaches the log")
        self.assertTrue(os.path.isdir(self.env["TALLY_DEFAULT_DATA_DIR"]))

        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=STOP_TIMEOUT)
        self.assertEqual(code, 0, self.server_log())
        self.assertFalse(self.healthy(), "still answering after SIGTERM")


if __name__ == "__main__":
    TALLYD = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
