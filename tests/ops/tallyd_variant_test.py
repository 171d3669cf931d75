#!/usr/bin/env python3
"""scripts/tallyd_variant.sh, which the GPU bundle's benchmarks start tallyd
through: BIN= picks the build, ENV= exports a variable, WRAP= runs the build
under a command (a profiler), given as the benchmarks give it (sh -c, a
quoted WRAP with spaces); every other argument reaches the build."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(REPO, "scripts", "tallyd_variant.sh")
TALLYD = sys.argv.pop(1) if len(sys.argv) > 1 else None


class TallydVariant(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        shutil.copy(TALLYD, os.path.join(self.dir, "tallyd_b"))
        self.env = dict(os.environ, TALLY_VARIANT_DIR=self.dir)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def run_sh(self, args):
        return subprocess.run(["sh", "-c", "exec " + SCRIPT + " " + args], env=self.env, capture_output=True,
                              text=True, timeout=60)

    def test_bin_picks_the_build_and_passes_the_other_arguments(self):
        out = self.run_sh("BIN=tallyd_b --help")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(out.stdout.startswith("Usage: tallyd"), out.stdout[:200])

    def test_a_missing_build_fails(self):
        out = self.run_sh("BIN=no_such_build --help")
        self.assertNotEqual(out.returncode, 0)

    def test_env_is_exported_to_the_wrapped_command(self):
        # printenv prints FOO's value; the build's path and --help name no variable.
        out = self.run_sh("ENV=FOO=bar 'WRAP=printenv FOO' BIN=tallyd_b --help")
        self.assertEqual(out.stdout.split("\n")[0], "bar", out.stdout + out.stderr)

    def test_wrap_runs_the_build_under_the_command(self):
        # env sets a variable, then runs the build with the other arguments.
        out = self.run_sh("'WRAP=env TALLY_PORT=6543' BIN=tallyd_b --help")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(out.stdout.startswith("Usage: tallyd"), out.stdout[:200])


if __name__ == "__main__":
    unittest.main()
