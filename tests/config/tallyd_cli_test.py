#!/usr/bin/env python3
"""tallyd's command line as an operator meets it: --help and --version exit 0,
every bad setting stops start-up with exit code 2 and a message naming the
setting and its source, and a port in use stops it with a message naming the
port. Usage: tallyd_cli_test.py TALLYD"""
import os
import socket
import subprocess
import sys
import tempfile
import unittest

TALLYD = None
TIMEOUT = 60


class TallydCommandLine(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TALLY_")}
        self.env["TALLY_DATA_DIR"] = os.path.join(self.tmp.name, "data")

    def tearDown(self):
        self.tmp.cleanup()

    def tallyd(self, *args, env=None):
        return subprocess.run([TALLYD, *args], env=dict(self.env, **(env or {})), capture_output=True,
                              text=True, timeout=TIMEOUT)

    def test_help_lists_every_flag_with_its_default(self):
        r = self.tallyd("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for text in ("--config FILE", "--port PORT", "default: 5432", "--http-port PORT", "--data-dir PATH",
                     "--users NAME:METHOD", "--tuning-similarity-s X", "default: 0.06", "--log-format text|json",
                     "TALLY_STATEMENT_TIMEOUT_MS", "--shutdown-grace-ms MS"):
            self.assertIn(text, r.stdout)

    def test_version(self):
        r = self.tallyd("--version")
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout, r"^tallyd \(Tally\) \d+\.\d+\.\d+\n$")

    def test_bad_values_exit_2_naming_setting_and_source(self):
        config = os.path.join(self.tmp.name, "t.toml")
        with open(config, "w") as f:
            f.write("port = 5433\nunknown_thing = 1\n[tuning]\nb_max = \"ten\"\n")
        r = self.tallyd("--config", config, "--log-level", "loud", env={"TALLY_HTTP_PORT": "70000"})
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        for text in (f'unknown setting "unknown_thing" in {config}:2',
                     f'setting "tuning.b_max" from {config}:4: expected an integer, got a string',
                     'setting "log_level" from --log-level',
                     'setting "http_port" from TALLY_HTTP_PORT: 70000 is out of range'):
            self.assertIn(text, r.stderr)

    def test_unusable_data_directory(self):
        blocker = os.path.join(self.tmp.name, "file")
        open(blocker, "w").close()
        del self.env["TALLY_DATA_DIR"]
        r = self.tallyd("--data-dir", os.path.join(blocker, "sub"))
        self.assertEqual(r.returncode, 2)
        self.assertIn('setting "data_dir" from --data-dir', r.stderr)

    def test_port_in_use_stops_start_up(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen(1)
            port = taken.getsockname()[1]
            r = self.tallyd("--port", str(port))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(str(port), r.stderr)
        self.assertRegex(r.stderr.lower(), r"in use")


if __name__ == "__main__":
    TALLYD = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
