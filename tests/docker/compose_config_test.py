#!/usr/bin/env python3
"""Validates docker/docker-compose.yml with Debian's docker-compose (`config`
renders the file as Compose would run it) and checks what a deployment needs:
the GPU reservation, published ports, the data volume, env configuration, a
pg_isready health check and the CPU-only profile."""
import os
import subprocess
import sys
import unittest

import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
COMPOSE = os.path.join(REPO, "docker", "docker-compose.yml")
TIMEOUT = 120


def compose(*args, env_extra=None, check=True):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TALLY_")}
    env.update(env_extra or {})
    return subprocess.run(["docker-compose", "-f", COMPOSE, *args], capture_output=True, text=True,
                          env=env, timeout=TIMEOUT, check=check, cwd=os.path.dirname(COMPOSE))


class ComposeFile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        out = compose("config", env_extra={"TALLY_PASSWORD": "pw"}).stdout
        cls.config = yaml.safe_load(out)
        cls.services = cls.config["services"]

    def test_gpu_service_reserves_a_gpu(self):
        devices = self.services["tally"]["deploy"]["resources"]["reservations"]["devices"]
        self.assertEqual(len(devices), 1)
        self.assertEqual(devices[0]["driver"], "nvidia")
        self.assertIn("gpu", devices[0]["capabilities"])
        self.assertEqual(self.services["tally"]["environment"]["TALLY_GPU_DEVICE"], "-1")
        self.assertNotIn("profiles", self.services["tally"], "the GPU service starts by default")

    def test_cpu_profile_has_no_gpu(self):
        cpu = self.services["tally-cpu"]
        self.assertEqual(cpu["profiles"], ["cpu"])
        self.assertNotIn("deploy", cpu)
        self.assertEqual(cpu["environment"]["TALLY_GPU_DEVICE"], "-2")
        services = compose("--profile", "cpu", "config", "--services",
                           env_extra={"TALLY_PASSWORD": "pw"}).stdout.split()
        self.assertEqual(sorted(services), ["tally", "tally-cpu"])

    def test_ports_volume_environment(self):
        for name in ("tally", "tally-cpu"):
            s = self.services[name]
            targets = sorted(int(p["target"]) for p in s["ports"])
            self.assertEqual(targets, [5432, 8080], name)
            self.assertIn("tally-data:/var/lib/tally/data:rw", s["volumes"], name)
            env = s["environment"]
            self.assertEqual(env["TALLY_USER"], "tally")
            self.assertEqual(env["TALLY_PASSWORD"], "pw")
            self.assertEqual(env["TALLY_LOG_FORMAT"], "json")
            # Docker must wait longer than tallyd's own grace period before SIGKILL.
            self.assertEqual(s["stop_grace_period"], "30s")
            self.assertLess(int(env["TALLY_SHUTDOWN_GRACE_MS"]), 30000)
        self.assertIn("tally-data", self.config["volumes"])

    def test_healthcheck_uses_pg_isready(self):
        for name in ("tally", "tally-cpu"):
            hc = self.services[name]["healthcheck"]
            self.assertEqual(hc["test"][0], "CMD-SHELL")
            self.assertIn("pg_isready", hc["test"][1])
            # $$ in the file is a literal $ in the container's shell.
            self.assertIn("${TALLY_PORT:-5432}", hc["test"][1])
            for key in ("interval", "timeout", "retries", "start_period"):
                self.assertIn(key, hc)

    def test_build_uses_the_repository_and_the_dockerfile(self):
        build = self.services["tally"]["build"]
        self.assertEqual(os.path.realpath(build["context"]), REPO)
        self.assertTrue(os.path.exists(os.path.join(REPO, build["dockerfile"])))

    def test_password_is_required(self):
        result = compose("config", check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("set TALLY_PASSWORD", result.stderr)

    def test_image_and_ports_follow_the_environment(self):
        out = compose("config", env_extra={"TALLY_PASSWORD": "pw", "TALLY_PUBLISHED_PORT": "15432",
                                           "TALLY_IMAGE": "registry.example/tally:1"}).stdout
        s = yaml.safe_load(out)["services"]["tally"]
        self.assertEqual(s["image"], "registry.example/tally:1")
        self.assertIn(15432, [int(p["published"]) for p in s["ports"]])


if __name__ == "__main__":
    unittest.main(verbosity=2)
