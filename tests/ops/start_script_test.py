#!/usr/bin/env python3
"""scripts/start.sh with its port taken: it stops before installing or building
anything, says the port is in use and names a --port that is free."""
import os
import re
import socket
import subprocess
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


class StartScript(unittest.TestCase):
    def test_port_in_use_is_said_with_a_free_port(self):
        # A port whose next one is taken too (both held here, so that neither
        # is freed by another test meanwhile): the suggestion must skip both.
        for _ in range(100):
            taken = socket.socket()
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            next_taken = socket.socket()
            try:
                next_taken.bind(("127.0.0.1", port + 1))
                next_taken.listen()
                break
            except OSError:
                taken.close()
                next_taken.close()
        else:
            self.fail("no two adjacent free ports found")
        for args in (["--port", str(port)], [f"--port={port}"]):
            env = {k: v for k, v in os.environ.items() if not k.startswith("TALLY_")}
            r = subprocess.run([os.path.join(REPO, "scripts", "start.sh"), *args], capture_output=True,
                               text=True, env=env, timeout=60)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn(f"port {port} on 127.0.0.1 is already in use", r.stderr)
            self.assertNotIn("setup:", r.stdout + r.stderr, "nothing is installed first")
            m = re.search(r"scripts/start.sh --port (\d+) \(free now\)", r.stderr)
            self.assertIsNotNone(m, r.stderr)
            suggested = int(m.group(1))
            self.assertGreater(suggested, port + 1)
            probe = socket.socket()
            probe.bind(("127.0.0.1", suggested))  # raises if the suggestion is not free
            probe.close()
        # TALLY_PORT wins over the flag, as in tallyd's configuration.
        env = {k: v for k, v in os.environ.items() if not k.startswith("TALLY_")}
        env["TALLY_PORT"] = str(port)
        r = subprocess.run([os.path.join(REPO, "scripts", "start.sh"), "--port", "1"], capture_output=True,
                           text=True, env=env, timeout=60)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(f"port {port} on 127.0.0.1 is already in use", r.stderr)
        taken.close()
        next_taken.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
