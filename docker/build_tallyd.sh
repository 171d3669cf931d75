#!/bin/sh
# Build stage of docker/Dockerfile and docker/Dockerfile.gpu: configures and builds tallyd
# alone (no tests, no benchmarks) from /src into /build, then lays out under /out what the
# runtime stage copies: tallyd, the entrypoint, the example configuration, and the shared
# libraries tallyd links besides glibc's (so the runtime stage needs no -dev packages and
# no list of runtime package names to keep in step with the build's).
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
install -D -m 0755 /build/tallyd /out/usr/local/bin/tallyd
install -D -m 0755 /src/docker/entrypoint.sh /out/usr/local/bin/tally-entrypoint
install -D -m 0644 /src/config/tally.example.toml /out/etc/tally/tally.example.toml
mkdir -p /out/usr/local/lib/tally
ldd /build/tallyd | awk '/=> \// { print $3 }' \
  | grep -Ev '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' \
  | xargs -r -I{} cp -L {} /out/usr/local/lib/tally/
