#!/usr/bin/env python3
"""docker/entrypoint.sh outside a container: environment -> TALLY_USERS and
container-default flags, secrets from files, precedence, and (with the real
configuration loader standing in for tallyd) the effective configuration.
Usage: entrypoint_test.py CONFIG_PROBE"""
import os
import re
import stat
import subprocess
import sys
import tempfile
import unittest

import tomllib

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ENTRYPOINT = os.path.join(REPO, "docker", "entrypoint.sh")
PROBE = None
TIMEOUT = 60

# A fake tallyd that prints its arguments and the TALLY_* environment.
FAKE_TALLYD = """#!/bin/sh
for a in "$@"; do printf 'ARG %s\\n' "$a"; done
env | grep '^TALLY_' | sort | sed 's/^/ENV /'
"""


class Entrypoint(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.fake = os.path.join(self.tmp.name, "tallyd")
        with open(self.fake, "w") as f:
            f.write(FAKE_TALLYD)
        os.chmod(self.fake, stat.S_IRWXU)
        self.data = os.path.join(self.tmp.name, "data")

    def tearDown(self):
        self.tmp.cleanup()

    def run_entrypoint(self, env, args=(), binary=None):
        base = {k: v for k, v in os.environ.items() if not k.startswith("TALLY")}
        base.update({"TALLYD_BIN": binary or self.fake, "TALLY_DEFAULT_DATA_DIR": self.data})
        base.update(env)
        return subprocess.run(["sh", ENTRYPOINT, *args], capture_output=True, text=True, env=base,
                              timeout=TIMEOUT)

    def parsed(self, result):
        self.assertEqual(result.returncode, 0, result.stderr)
        args = [l[4:] for l in result.stdout.splitlines() if l.startswith("ARG ")]
        env = dict(l[4:].split("=", 1) for l in result.stdout.splitlines() if l.startswith("ENV "))
        return args, env

    def test_container_defaults_become_flags(self):
        result = self.run_entrypoint({})
        args, env = self.parsed(result)
        self.assertEqual(args, ["--listen-address", "0.0.0.0", "--data-dir", self.data])
        self.assertEqual(env, {}, "helper variables are not passed on")
        self.assertIn("no TALLY_PASSWORD", result.stderr)
        self.assertIn("the admin endpoint (/metrics, /tuning) is off", result.stderr)

    def test_admin_endpoint_only_with_a_token(self):
        result = self.run_entrypoint({"TALLY_HTTP_TOKEN": "tok"})
        args, env = self.parsed(result)
        self.assertEqual(args, ["--listen-address", "0.0.0.0", "--http-address", "0.0.0.0",
                                "--http-port", "8080", "--data-dir", self.data])
        self.assertEqual(env["TALLY_HTTP_TOKEN"], "tok")
        self.assertNotIn("admin endpoint", result.stderr)
        # An empty token (Compose's default) is no token.
        args, _ = self.parsed(self.run_entrypoint({"TALLY_HTTP_TOKEN": ""}))
        self.assertNotIn("--http-port", args)

    def test_a_variable_replaces_its_default_flag(self):
        args, env = self.parsed(self.run_entrypoint({"TALLY_HTTP_PORT": "9000", "TALLY_DATA_DIR": "/d"}))
        self.assertNotIn("--http-port", args)
        self.assertNotIn("--data-dir", args)
        self.assertIn("--listen-address", args)
        self.assertEqual(env["TALLY_HTTP_PORT"], "9000")

    def test_arguments_follow_the_defaults(self):
        args, _ = self.parsed(self.run_entrypoint({}, ["--port", "6543", "--http-port=9"]))
        self.assertEqual(args[-3:], ["--port", "6543", "--http-port=9"])
        args, _ = self.parsed(self.run_entrypoint({}, ["tallyd", "--port", "1"]))
        self.assertEqual(args[-2:], ["--port", "1"])

    def test_another_command_runs_instead(self):
        result = self.run_entrypoint({}, ["sh", "-c", "echo other-command"])
        self.assertEqual(result.returncode, 0)
        self.assertEqual(result.stdout.strip(), "other-command")

    def test_config_file_is_in_charge(self):
        args, env = self.parsed(self.run_entrypoint({"TALLY_CONFIG": "/etc/tally/tally.toml"}))
        self.assertEqual(args, [])
        self.assertEqual(env["TALLY_CONFIG"], "/etc/tally/tally.toml")

    def test_password_becomes_a_user_and_never_an_argument(self):
        result = self.run_entrypoint({"TALLY_PASSWORD": "s3cret pw", "TALLY_USER": "ann"})
        args, env = self.parsed(result)
        self.assertEqual(env["TALLY_USERS"], "ann:scram-sha-256:s3cret pw")
        self.assertNotIn("TALLY_PASSWORD", env)
        self.assertNotIn("TALLY_USER", env)
        self.assertFalse(any("s3cret" in a for a in args))
        self.assertNotIn("s3cret", result.stderr)
        _, env = self.parsed(self.run_entrypoint({"TALLY_PASSWORD": "p", "TALLY_AUTH_METHOD": "md5"}))
        self.assertEqual(env["TALLY_USERS"], "tally:md5:p")

    def test_secrets_from_files(self):
        secret = os.path.join(self.tmp.name, "pw")
        with open(secret, "w") as f:
            f.write("from-file\n")
        token = os.path.join(self.tmp.name, "token")
        with open(token, "w") as f:
            f.write("tok\n")
        _, env = self.parsed(self.run_entrypoint({"TALLY_PASSWORD_FILE": secret, "TALLY_HTTP_TOKEN_FILE": token}))
        self.assertEqual(env["TALLY_USERS"], "tally:scram-sha-256:from-file")
        self.assertEqual(env["TALLY_HTTP_TOKEN"], "tok")
        self.assertNotIn("TALLY_PASSWORD_FILE", env)
        self.assertNotIn("TALLY_HTTP_TOKEN_FILE", env)

    def test_ambiguous_or_unreadable_secrets_stop(self):
        cases = [({"TALLY_PASSWORD": "a", "TALLY_PASSWORD_FILE": "/etc/hostname"}, "both TALLY_PASSWORD"),
                 ({"TALLY_PASSWORD_FILE": "/nonexistent/pw"}, "cannot read /nonexistent/pw"),
                 ({"TALLY_PASSWORD": "a", "TALLY_USERS": "x:trust"}, "both set"),
                 ({"TALLY_PASSWORD": "a,b"}, "must not contain ','"),
                 ({"TALLY_PASSWORD": "a", "TALLY_USER": "x:y"}, "TALLY_USER must not contain")]
        for env, message in cases:
            result = self.run_entrypoint(env)
            self.assertEqual(result.returncode, 2, env)
            self.assertIn(message, result.stderr, env)
            self.assertNotIn("ARG ", result.stdout, "tallyd must not start")

    def test_effective_configuration_with_the_real_loader(self):
        result = self.run_entrypoint({"TALLY_PASSWORD": "pw", "TALLY_HTTP_PORT": "9100",
                                      "TALLY_HTTP_TOKEN": "tok", "TALLY_LOG_FORMAT": "json"}, ["--print-config", "--port", "6000"],
                                     binary=PROBE)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn("warning", result.stderr, "the entrypoint leaves no unknown TALLY_* variable")
        config = tomllib.loads(result.stdout)
        self.assertEqual(config["listen_address"], "0.0.0.0")
        self.assertEqual(config["http_address"], "0.0.0.0")
        self.assertEqual(config["http_port"], 9100)
        self.assertEqual(config["port"], 6000)
        self.assertEqual(config["data_dir"], self.data)
        self.assertEqual(config["log_format"], "json")
        self.assertTrue(os.path.isdir(self.data), "the data directory was created")
        [user] = config["users"]
        self.assertEqual((user["name"], user["method"]), ("tally", "scram-sha-256"))
        self.assertRegex(user["scram_verifier"], r"^SCRAM-SHA-256\$4096:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$")
        self.assertNotIn("pw\"", result.stdout)
        # Sources name where each value came from.
        self.assertRegex(result.stdout, r'listen_address = "0.0.0.0"  # --listen-address')
        self.assertRegex(result.stdout, r"http_port = 9100  # TALLY_HTTP_PORT")

    def test_bad_values_stop_with_the_loaders_message(self):
        result = self.run_entrypoint({"TALLY_HTTP_PORT": "99999"}, binary=PROBE)
        self.assertEqual(result.returncode, 2)
        self.assertIn('setting "http_port" from TALLY_HTTP_PORT', result.stderr)


if __name__ == "__main__":
    PROBE = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
