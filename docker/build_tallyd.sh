#!/bin/sh
# Build stage of docker/Dockerfile and docker/Dockerfile.gpu: configures and builds tallyd
# alone (no tests, no benchmarks) from /src into /build, then lays out under /out what the
# runtime stage copies: tallyd with the shared libraries it links (install_with_libs.sh),
# the entrypoint and the example configuration.
# Arguments go to cmake (the GPU image passes its CUDA architectures).
set -eu
# ccache is used where the build stage has it (CCACHE_DIR is then the cache to fill).
launcher=""
if command -v ccache >/dev/null; then
  launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache"
  ccache --zero-stats >/dev/null  # the statistics printed below are this build's
fi
# shellcheck disable=SC2086  # the launcher flags are single words by construction
cmake -S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DTALLY_BUILD_TESTS=OFF -DTALLY_BUILD_BENCH=OFF $launcher "$@"
ninja -C /build tallyd
if command -v ccache >/dev/null; then ccache --show-stats; fi
/src/docker/install_with_libs.sh /out /build/tallyd
install -D -m 0755 /src/docker/entrypoint.sh /out/usr/local/bin/tally-entrypoint
install -D -m 0644 /src/config/tally.example.toml /out/etc/tally/tally.example.toml
