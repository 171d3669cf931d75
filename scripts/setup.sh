#!/usr/bin/env bash
# Installs every Debian package Tally needs to build, run and test.
# Idempotent; called by scripts/start.sh and scripts/test.sh.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libboost-dev libboost-system-dev libssl-dev libsqlite3-dev sqlite3
  libpg-query-dev libfmt-dev libtomlplusplus-dev libcli11-dev nlohmann-json3-dev
  # SASLprep of SCRAM passwords (protocol/saslprep.cpp: stringprep's SASLprep profile).
  libidn-dev
  libgtest-dev libgmock-dev
  # Real clients used by the tests, and the PostgreSQL 15 oracle.
  postgresql-15 postgresql-client-15 postgresql-contrib libpq-dev libpqxx-dev
  python3 python3-psycopg2
  default-jdk-headless libpostgresql-jdbc-java
  unixodbc unixodbc-dev odbc-postgresql
  # The client tests make a CA and certificates with the openssl tool.
  openssl
  # Fuzzing and sanitizers, the admin page test, the compose-file check.
  clang libclang-rt-14-dev chromium docker-compose curl procps shellcheck python3-yaml
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: all dependencies present"
