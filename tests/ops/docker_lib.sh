# Shared by the Docker tests (docker_compose_test.sh, docker_shards_test.sh); sourced after
# the test sets test_name. Needs the repository root as $PWD.

# shellcheck disable=SC2154  # test_name: set by the test that sources this file
say() { echo "$test_name: $*"; }
fail() { echo "$test_name: FAILED: $*" >&2; exit 1; }
# Fails with the reason, or with TALLY_SKIP_DOCKER_TEST=1 reports a skip (exit 77), which
# ctest shows as skipped, where Docker cannot run.
cannot_run() {
  if [ "${TALLY_SKIP_DOCKER_TEST:-0}" = 1 ]; then
    say "SKIPPED (TALLY_SKIP_DOCKER_TEST=1): $*"
    exit 77
  fi
  fail "$* (TALLY_SKIP_DOCKER_TEST=1 skips this test where Docker cannot run)"
}

# A Docker engine: the running one, or dockerd started here (as root). Sets
# started_dockerd to the pid of a dockerd it started (empty otherwise).
started_dockerd=""
docker_engine_up() {
  local tool
  for tool in docker docker-compose psql python3; do
    command -v "$tool" >/dev/null || cannot_run "$tool is not installed (scripts/setup.sh --test installs it)"
  done
  docker info >/dev/null 2>&1 && return 0
  command -v dockerd >/dev/null || cannot_run "no Docker engine runs and dockerd is not installed"
  [ "$(id -u)" -eq 0 ] || cannot_run "no Docker engine runs, and starting dockerd needs root"
  say "no Docker engine was running: starting dockerd (log: /tmp/tally-dockerd.log)"
  dockerd >/tmp/tally-dockerd.log 2>&1 &
  started_dockerd=$!
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    kill -0 "$started_dockerd" 2>/dev/null || break
    sleep 1
  done
  docker info >/dev/null 2>&1 ||
    { tail -n 20 /tmp/tally-dockerd.log >&2; cannot_run "dockerd did not start (log above)"; }
}

# Stops the dockerd docker_engine_up started, if any, and waits for it, so a next run does
# not find a daemon that is still shutting down.
docker_engine_down() {
  if [ -n "$started_dockerd" ]; then
    kill -TERM "$started_dockerd" 2>/dev/null && wait "$started_dockerd" 2>/dev/null
    say "stopped the dockerd it started"
  fi
  started_dockerd=""
}

# build_cpu_image IMAGE LOG: the Debian base (scripts/docker_base_image.sh, debootstrap) and
# the CPU image from docker/Dockerfile, incrementally: the build stage's ccache is kept in
# the image tally/cpu-build-cache and seeds the next build. Build output goes to LOG.
build_cpu_image() {
  local image=$1 log=$2 cache_image=tally/cpu-build-cache seed=tally/debian:12 old_image start=$SECONDS
  if ! docker image inspect tally/debian:12 >/dev/null 2>&1; then
    [ "$(id -u)" -eq 0 ] || cannot_run "tally/debian:12 is missing and debootstrap needs root"
    command -v debootstrap >/dev/null || cannot_run "debootstrap is not installed (scripts/setup.sh --test)"
  fi
  scripts/docker_base_image.sh
  docker image inspect "$cache_image" >/dev/null 2>&1 && seed=$cache_image
  old_image=$(docker image inspect -f '{{.Id}}' "$image" 2>/dev/null || true)
  # The legacy builder (docker-compose 1.29's) on purpose: the image must build with it.
  _build() {
    DOCKER_BUILDKIT=0 docker build -f docker/Dockerfile --build-arg CCACHE_IMAGE="$seed" "$@" . \
      >>"$log" 2>&1 || { tail -n 40 "$log" >&2; fail "docker build $*"; }
  }
  _build --target build -t "$cache_image"
  _build -t "$image"
  # The previous seed and its layers are untagged now; without this each run would leave
  # a gigabyte behind. Only images labelled by docker/Dockerfile's build stage go.
  docker image prune -f --filter label=org.tally.ccache-seed=1 >/dev/null
  if [ -n "$old_image" ] && [ "$old_image" != "$(docker image inspect -f '{{.Id}}' "$image")" ]; then
    docker rmi "$old_image" >/dev/null 2>&1 || true
  fi
  local context ccache_line size
  context=$(grep -m 1 'Sending build context' "$log" | sed 's/.*daemon *//')
  ccache_line=$(grep -E '^ *(Hits|Misses):' "$log" | head -n 2 | tr -s ' ' | paste -sd ';' || true)
  size=$(docker image inspect -f '{{.Size}}' "$image" | awk '{ printf "%.0f MB", $1 / 1e6 }')
  say "CPU image built in $((SECONDS - start)) s: $size, build context $context, ccache: ${ccache_line:-n/a}"
}

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
