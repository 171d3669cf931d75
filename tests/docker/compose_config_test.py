#!/usr/bin/env python3
"""Validates docker/docker-compose.yml with Debian's docker-compose (`config`
renders the file as Compose would run it) and checks what a deployment needs:
the GPU reservation, ports published on loopback, the data volume, env
configuration, a pg_isready health check, and one profile per service."""
import os
import subprocess
import sys
import tempfile
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


def published(port):
    """(host address, published port, container port) of a rendered port, which
    docker-compose 1.29 writes as "ADDRESS:PUBLISHED:TARGET/tcp" and Compose v2 as a mapping."""
    if isinstance(port, dict):
        return port.get("host_ip", ""), int(port["published"]), int(port["target"])
    address, published_port, target = port.split("/")[0].rsplit(":", 2)
    return address, int(published_port), int(target)


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
        self.assertEqual(self.services["tally"]["profiles"], ["gpu"])
        self.assertEqual(self.services["tally"]["build"]["dockerfile"], "docker/Dockerfile.gpu")

    def test_each_profile_starts_only_its_service(self):
        cpu = self.services["tally-cpu"]
        self.assertEqual(cpu["profiles"], ["cpu"])
        self.assertNotIn("deploy", cpu)
        self.assertEqual(cpu["environment"]["TALLY_GPU_DEVICE"], "-2")
        self.assertEqual(cpu["build"]["dockerfile"], "docker/Dockerfile")
        self.assertEqual(cpu["build"]["args"]["BASE_IMAGE"], "tally/debian:12")
        # Every service has a profile, so `--profile cpu up` starts tally-cpu alone
        # (`config --services` of docker-compose 1.29 ignores profiles; the docker_compose
        # test checks which containers `up` starts).
        for name, service in self.services.items():
            self.assertEqual(len(service.get("profiles", [])), 1, name)

    def test_ports_volume_environment(self):
        for name in ("tally", "tally-cpu"):
            s = self.services[name]
            ports = [published(p) for p in s["ports"]]
            self.assertEqual(sorted(p[2] for p in ports), [5432, 8080], name)
            # Published on loopback unless the operator says otherwise.
            self.assertEqual({p[0] for p in ports}, {"127.0.0.1"}, name)
            self.assertIn("tally-data:/var/lib/tally/data:rw", s["volumes"], name)
            env = s["environment"]
            self.assertEqual(env["TALLY_USER"], "tally")
            self.assertEqual(env["TALLY_PASSWORD"], "pw")
            self.assertEqual(env["TALLY_LOG_FORMAT"], "json")
            # No token by default: the entrypoint then leaves the admin endpoint off.
            self.assertEqual(env["TALLY_HTTP_TOKEN"], "")
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
        for name in ("tally", "tally-cpu"):
            build = self.services[name]["build"]
            self.assertEqual(os.path.realpath(build["context"]), REPO)
            self.assertTrue(os.path.exists(os.path.join(REPO, build["dockerfile"])))
        # Every builder (the legacy one too) reads .dockerignore at the context's root.
        self.assertTrue(os.path.exists(os.path.join(REPO, ".dockerignore")))

    def test_password_is_required(self):
        result = compose("config", check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("set TALLY_PASSWORD", result.stderr)
        # The password may come from an env file instead of the environment.
        with tempfile.NamedTemporaryFile("w", suffix=".env") as env_file:
            env_file.write("TALLY_PASSWORD=from-env-file\n")
            env_file.flush()
            out = compose("--env-file", env_file.name, "config").stdout
        self.assertEqual(yaml.safe_load(out)["services"]["tally"]["environment"]["TALLY_PASSWORD"],
                         "from-env-file")

    def test_image_and_ports_follow_the_environment(self):
        out = compose("config", env_extra={"TALLY_PASSWORD": "pw", "TALLY_PUBLISHED_PORT": "15432",
                                           "TALLY_BIND_ADDRESS": "0.0.0.0",
                                           "TALLY_CPU_IMAGE": "registry.example/tally:1"}).stdout
        s = yaml.safe_load(out)["services"]["tally-cpu"]
        self.assertEqual(s["image"], "registry.example/tally:1")
        ports = [published(p) for p in s["ports"]]
        self.assertIn(15432, [p[1] for p in ports])
        self.assertEqual({p[0] for p in ports}, {"0.0.0.0"})


if __name__ == "__main__":
    unittest.main(verbosity=2)
