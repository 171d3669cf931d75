#!/usr/bin/env python3
"""Lints the shape of docker/Dockerfile (the CPU image on Debian 12, which the
docker_compose test also builds and runs) and docker/Dockerfile.gpu (the GPU image on
NVIDIA's CUDA images, which no machine here can pull): a build stage that runs
docker/build_tallyd.sh, a runtime stage on the matching base that copies its output,
a non-root USER, both ports, the data VOLUME, a pg_isready HEALTHCHECK, the entrypoint;
nothing only BuildKit understands; and a .dockerignore at the context's root that
keeps the context to the sources tallyd builds from."""
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


class Parsed:
    def __init__(self, name):
        self.path = os.path.join(DOCKER, name)
        self.text = open(self.path).read()
        self.stages = {}  # stage name -> (from image, [instructions])
        self.global_args = {}
        current = None
        for word, rest in instructions(self.path):
            if word == "FROM":
                image, _, name = rest.partition(" AS ")
                current = self.stages.setdefault(name.strip(), (self.expand(image.strip()), []))
            elif current is not None:
                current[1].append((word, rest))
            elif word == "ARG":
                arg, _, default = rest.partition("=")
                self.global_args[arg] = self.expand(default.strip('"'))

    def expand(self, text):
        return re.sub(r"\$\{(\w+)\}", lambda m: self.global_args.get(m.group(1), m.group(0)), text)

    def runs(self, stage):
        return " ".join(r for w, r in self.stages[stage][1] if w == "RUN")

    def one(self, stage, word):
        [value] = [r for w, r in self.stages[stage][1] if w == word]
        return value


class Dockerfiles(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cpu = Parsed("Dockerfile")
        cls.gpu = Parsed("Dockerfile.gpu")
        cls.both = (cls.cpu, cls.gpu)

    def test_cpu_image_builds_and_runs_on_the_local_debian_base(self):
        self.assertEqual(self.cpu.global_args["BASE_IMAGE"], "tally/debian:12")
        self.assertEqual(self.cpu.stages["build"][0], "tally/debian:12")
        self.assertEqual(self.cpu.stages["runtime"][0], "tally/debian:12")
        self.assertIn("-DTALLY_CUDA=OFF", self.cpu.runs("build"))
        # The ccache seed defaults to the base itself, so a plain build needs no other image.
        self.assertEqual(self.cpu.stages["ccache"][0], "tally/debian:12")
        self.assertIn("COPY", [w for w, _ in self.cpu.stages["build"][1]])
        self.assertIn("--from=ccache /ccache /ccache",
                      [r for w, r in self.cpu.stages["build"][1] if w == "COPY"])

    def test_gpu_image_builds_on_cuda_devel_and_runs_on_the_matching_runtime(self):
        build_from, runtime_from = self.gpu.stages["build"][0], self.gpu.stages["runtime"][0]
        self.assertRegex(build_from, r"^nvidia/cuda:[\d.]+-devel-ubuntu[\d.]+$")
        self.assertEqual(build_from.replace("-devel-", "-runtime-"), runtime_from,
                         "build and runtime images must be the same CUDA and Ubuntu versions")
        self.assertIn("-DTALLY_CUDA=ON", self.gpu.runs("build"))
        self.assertIn("CMAKE_CUDA_ARCHITECTURES", self.gpu.runs("build"))

    def test_runtime_takes_artifacts_from_build(self):
        for f in self.both:
            self.assertIn("/src/docker/build_tallyd.sh", f.runs("build"), f.path)
            copies = [r for w, r in f.stages["runtime"][1] if w == "COPY"]
            self.assertIn("--from=build /out/ /", copies, f.path)
            self.assertTrue(all(c.startswith("--from=") for c in copies), f"{f.path}: {copies}")
        script = open(os.path.join(DOCKER, "build_tallyd.sh")).read()
        self.assertIn("ninja -C /build tallyd", script)
        self.assertIn("-DTALLY_BUILD_TESTS=OFF", script)
        self.assertIn("docker/entrypoint.sh /out/usr/local/bin/tally-entrypoint", script)

    def test_runs_as_a_non_root_user(self):
        for f in self.both:
            user = f.one("runtime", "USER")
            self.assertNotIn(user.split(":")[0], ("root", "0"), f.path)
            words = [w for w, _ in f.stages["runtime"][1]]
            self.assertLess(words.index("USER"), words.index("ENTRYPOINT"), f.path)
            self.assertIn("useradd", f.runs("runtime"))
            self.assertIn(user.split(":")[0], f.runs("runtime"))

    def test_ports_volume_healthcheck_entrypoint(self):
        for f in self.both:
            self.assertEqual(set(f.one("runtime", "EXPOSE").split()), {"5432", "8080"}, f.path)
            self.assertIn("/var/lib/tally/data", f.one("runtime", "VOLUME"))
            health = f.one("runtime", "HEALTHCHECK")
            self.assertIn("pg_isready", health)
            self.assertIn("${TALLY_PORT:-5432}", health)
            self.assertEqual(f.one("runtime", "ENTRYPOINT"), '["/usr/local/bin/tally-entrypoint"]')
        # pg_isready must exist in the image: the CPU image takes it from its client stage.
        self.assertIn("postgresql-client", self.gpu.runs("runtime"))
        self.assertIn("postgresql-client-15", self.cpu.runs("client"))
        self.assertIn("/usr/lib/postgresql/15/bin/pg_isready", self.cpu.runs("client"))
        self.assertIn("--from=client /out/ /", [r for w, r in self.cpu.stages["runtime"][1] if w == "COPY"])
        self.assertNotIn("apt-get", self.cpu.runs("runtime"), "the CPU runtime stage installs no package")

    def test_nothing_only_buildkit_understands(self):
        """Debian's docker.io and docker-compose 1.29 build with the legacy builder."""
        for f in self.both:
            self.assertNotRegex(f.text, r"(?m)^#\s*syntax=", f.path)
            for word, rest in instructions(f.path):
                self.assertNotRegex(rest, r"^--(mount|chmod|link|network|security)\b", f"{f.path}: {word}")
                self.assertNotIn("<<", rest, f"{f.path}: heredocs are BuildKit-only")
            self.assertFalse(os.path.exists(f.path + ".dockerignore"),
                             "<Dockerfile>.dockerignore is read by BuildKit alone")

    def test_dockerignore_keeps_the_context_to_the_sources(self):
        lines = [l.strip() for l in open(os.path.join(REPO, ".dockerignore"))
                 if l.strip() and not l.startswith("#")]
        self.assertEqual(lines[0], "*", "everything is excluded first")
        kept = {l[1:].rstrip("/") for l in lines if l.startswith("!")}
        for path in kept:
            self.assertTrue(os.path.exists(os.path.join(REPO, path)), path)
        # Every folder the top-level CMakeLists.txt always adds (tests and bench are off).
        cmake = open(os.path.join(REPO, "CMakeLists.txt")).read()
        always = re.findall(r"^add_subdirectory\((\w+)\)", cmake, re.M)
        self.assertTrue(always)
        for folder in always + ["CMakeLists.txt", "docker/entrypoint.sh", "docker/build_tallyd.sh",
                                "docker/install_with_libs.sh"]:
            self.assertIn(folder, kept)
        for f in self.both:
            for path in re.findall(r"(?:/src/|COPY )((?:docker|config)/[\w.\-/]+)", f.text):
                self.assertTrue(any(path == k or path.startswith(k + "/") for k in kept), path)

    def test_build_packages_are_the_ones_setup_installs(self):
        """The images build with the same libraries CI builds with (scripts/setup.sh)."""
        setup = open(os.path.join(REPO, "scripts", "setup.sh")).read()
        for f in self.both:
            for pkg in re.findall(r"\b(lib[\w.+-]+-dev|nlohmann-json3-dev)\b", f.runs("build")):
                self.assertIn(pkg, setup, pkg)

    def test_scripts_pass_shellcheck(self):
        self.assertTrue(shutil.which("shellcheck"), "shellcheck is not installed: run scripts/setup.sh --test")
        for script in ("entrypoint.sh", "build_tallyd.sh", "install_with_libs.sh", "shards/coordinator_entrypoint.sh",
                       "shards/init_coordinator.sh"):
            path = os.path.join(DOCKER, script)
            self.assertTrue(os.access(path, os.X_OK), script)
            result = subprocess.run(["shellcheck", "-s", "sh", path], capture_output=True, text=True, timeout=60)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        for script in ("scripts/docker_base_image.sh", "tests/ops/docker_compose_test.sh",
                       "tests/ops/docker_shards_test.sh", "tests/ops/docker_lib.sh"):
            # -x from the repository root: the tests source tests/ops/docker_lib.sh.
            result = subprocess.run(["shellcheck", "-x", "-s", "bash", os.path.join(REPO, script)], capture_output=True,
                                    text=True, timeout=60, cwd=REPO)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
