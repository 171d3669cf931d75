#!/usr/bin/env python3
"""Lints docker/Dockerfile's shape (no Docker engine exists here): a CUDA devel
build stage and the matching CUDA runtime stage, artifacts copied between
them, a non-root USER, EXPOSE of both ports, a pg_isready HEALTHCHECK, the
entrypoint script, and every repository file it names exists."""
import os
import re
import shutil
import subprocess
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOCKER = os.path.join(REPO, "docker")


def instructions(path):
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    out, current = [], ""
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not current and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if line.endswith("\\"):
                current += line[:-1] + " "
                continue
            current += line
            word, _, rest = current.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
            current = ""
    return out


class Dockerfile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ins = instructions(os.path.join(DOCKER, "Dockerfile"))
        cls.stages = []  # (from-args, [instructions])
        cls.global_args = {}
        for word, rest in cls.ins:
            if word == "FROM":
                cls.stages.append((rest, []))
            elif cls.stages:
                cls.stages[-1][1].append((word, rest))
            elif word == "ARG":
                name, _, default = rest.partition("=")
                cls.global_args[name] = default.strip('"')

    def expand(self, text):
        return re.sub(r"\$\{(\w+)\}", lambda m: self.global_args.get(m.group(1), m.group(0)), text)

    def test_two_stages_devel_then_matching_runtime(self):
        self.assertEqual(len(self.stages), 2)
        build_from, runtime_from = self.stages[0][0], self.stages[1][0]
        self.assertRegex(build_from, r"^nvidia/cuda:\S+-devel-ubuntu\S+ AS build$")
        self.assertRegex(runtime_from, r"^nvidia/cuda:\S+-runtime-ubuntu\S+ AS runtime$")
        image = lambda f: self.expand(f.split()[0])
        self.assertEqual(image(build_from).replace("-devel-", "-runtime-"), image(runtime_from),
                         "build and runtime images must be the same CUDA and Ubuntu versions")
        self.assertNotIn("${", image(build_from), "every version ARG has a default")

    def test_runtime_takes_artifacts_from_build(self):
        copies = [r for w, r in self.stages[1][1] if w == "COPY"]
        self.assertTrue(any(r.startswith("--from=build ") for r in copies), copies)
        build_runs = " ".join(r for w, r in self.stages[0][1] if w == "RUN")
        self.assertIn("ninja -C /build tallyd", build_runs)
        self.assertIn("-DTALLY_BUILD_TESTS=OFF", build_runs)

    def test_runs_as_a_non_root_user(self):
        runtime = self.stages[1][1]
        users = [r for w, r in runtime if w == "USER"]
        self.assertEqual(len(users), 1)
        self.assertNotIn(users[0].split(":")[0], ("root", "0"))
        words = [w for w, _ in runtime]
        self.assertLess(words.index("USER"), words.index("ENTRYPOINT"))
        created = " ".join(r for w, r in runtime if w == "RUN")
        self.assertIn("useradd", created)
        self.assertIn(users[0].split(":")[0], created)

    def test_ports_volume_healthcheck_entrypoint(self):
        runtime = dict((w, r) for w, r in self.stages[1][1])
        self.assertEqual(set(runtime["EXPOSE"].split()), {"5432", "8080"})
        self.assertIn("/var/lib/tally/data", runtime["VOLUME"])
        self.assertIn("pg_isready", runtime["HEALTHCHECK"])
        self.assertIn("${TALLY_PORT:-5432}", runtime["HEALTHCHECK"])
        self.assertEqual(runtime["ENTRYPOINT"], '["/usr/local/bin/tally-entrypoint"]')
        installs = " ".join(r for w, r in self.stages[0][1] if w == "RUN")
        self.assertIn("docker/entrypoint.sh /out/usr/local/bin/tally-entrypoint", installs)
        runtime_runs = " ".join(r for w, r in self.stages[1][1] if w == "RUN")
        self.assertIn("postgresql-client", runtime_runs, "pg_isready must exist in the image")

    def test_named_repository_files_exist(self):
        text = open(os.path.join(DOCKER, "Dockerfile")).read()
        paths = set(re.findall(r"(?<![\w:/])((?:docker|config)/[\w.\-/]+)", text))
        paths.discard("docker/dockerfile")  # the "# syntax=docker/dockerfile:1" directive
        self.assertIn("docker/entrypoint.sh", paths)
        for path in paths:
            self.assertTrue(os.path.exists(os.path.join(REPO, path)), path)
        self.assertTrue(os.access(os.path.join(DOCKER, "entrypoint.sh"), os.X_OK))

    def test_build_packages_are_the_ones_setup_installs(self):
        """The image builds with the same libraries CI builds with (scripts/setup.sh)."""
        setup = open(os.path.join(REPO, "scripts", "setup.sh")).read()
        build_runs = " ".join(r for w, r in self.stages[0][1] if w == "RUN")
        for pkg in re.findall(r"\b(lib[\w.+-]+-dev|nlohmann-json3-dev)\b", build_runs):
            self.assertIn(pkg, setup, pkg)

    def test_entrypoint_passes_shellcheck(self):
        self.assertTrue(shutil.which("shellcheck"), "shellcheck is not installed: run scripts/setup.sh")
        result = subprocess.run(["shellcheck", "-s", "sh", os.path.join(DOCKER, "entrypoint.sh")],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
