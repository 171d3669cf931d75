#!/usr/bin/env bash
# Configures and builds Tally into build/ (or $TALLY_BUILD_DIR). Extra arguments
# go to cmake, e.g. scripts/build.sh -DTALLY_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${TALLY_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
ninja -C "$build_dir" ${TALLY_BUILD_TARGETS:-}
