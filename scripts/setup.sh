#!/usr/bin/env bash
# Installs the Debian packages Tally needs. Idempotent.
#   scripts/setup.sh          what building and running tallyd needs, and psql
#                             (called by scripts/start.sh)
#   scripts/setup.sh --test   also the test tools: the PostgreSQL 15 oracle, the real
#                             clients, sanitizers, Chromium, Docker (called by scripts/test.sh)
set -euo pipefail

want_test=0
case "${1:-}" in
  "") ;;
  --test) want_test=1 ;;
  -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "setup: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac

packages=(
  build-essential cmake ninja-build pkg-config git
  libboost-dev libboost-system-dev libssl-dev libsqlite3-dev sqlite3
  libpg-query-dev libfmt-dev libtomlplusplus-dev libcli11-dev nlohmann-json3-dev
  # SASLprep of SCRAM passwords (common/saslprep.cpp: stringprep's SASLprep profile).
  libidn-dev
  # Regular expressions (executor/scalar/regex.cpp).
  libpcre2-dev
  # psql, to connect (the client only: the server package would start a cluster on 5432).
  postgresql-client-15
)
test_packages=(
  libgtest-dev libgmock-dev
  # Real clients used by the tests, and the PostgreSQL 15 oracle.
  postgresql-15 postgresql-contrib libpq-dev libpqxx-dev
  python3 python3-psycopg2 python3-psycopg nodejs
  default-jdk-headless libpostgresql-jdbc-java
  unixodbc unixodbc-dev odbc-postgresql
  # The client tests make a CA and certificates with the openssl tool.
  openssl xz-utils
  # Fuzzing and sanitizers, the admin page test, the compose-file check.
  clang libclang-rt-14-dev chromium docker-compose curl procps shellcheck python3-yaml
  # The tools tests (tests/tools): pg_dump and pgbench come with postgresql-client-15.
  python3-sqlalchemy python3-pandas pgcli sqlsmith
  # The docker_compose test: a Docker engine, and debootstrap for the Debian 12 base image.
  docker.io debootstrap
)
((want_test)) && packages+=("${test_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
apt_install() { DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null; }

if ((${#missing[@]})); then
  # The tests start their own PostgreSQL on free ports. Debian's postgresql package would
  # otherwise create and start a cluster on 5432, the port tallyd listens on by default.
  if ((want_test)) && [ ! -e /etc/postgresql-common/createcluster.conf ]; then
    $SUDO mkdir -p /etc/postgresql-common
    echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.conf >/dev/null
  fi
  echo "setup: installing ${#missing[@]} packages: ${missing[*]}"
  $SUDO apt-get update -qq
  apt_install "${missing[@]}"
fi

# node-postgres for the clients_node_pg test. Debian's node-pg needs Debian's
# nodejs; where another nodejs is installed (NodeSource's), apt cannot install
# it, and it comes from npm (into `npm root -g`) instead.
if ((want_test)) && [ ! -e /usr/share/nodejs/pg/package.json ] &&
  ! { command -v npm >/dev/null && [ -e "$(npm root -g)/pg/package.json" ]; }; then
  $SUDO apt-get update -qq
  if ! apt_install node-pg 2>/dev/null; then
    command -v npm >/dev/null || apt_install npm
    echo "setup: installing node-postgres (pg 8) with npm"
    $SUDO npm install -g --silent --no-fund --no-audit pg@8 >/dev/null
  fi
fi
# knex 3 and sequelize 6 for the tools_knex and tools_sequelize tests: npm
# packages only, installed globally beside node-postgres (they find pg there or
# through NODE_PATH's /usr/share/nodejs).
if ((want_test)); then
  command -v npm >/dev/null || { $SUDO apt-get update -qq; apt_install npm; }
  npm_root="$(npm root -g)"
  node_tools=()
  [ -e "$npm_root/knex/package.json" ] || node_tools+=(knex@3)
  [ -e "$npm_root/sequelize/package.json" ] || node_tools+=(sequelize@6)
  if ((${#node_tools[@]})); then
    echo "setup: installing ${node_tools[*]} with npm"
    $SUDO npm install -g --silent --no-fund --no-audit "${node_tools[@]}" >/dev/null
  fi
fi
echo "setup: all dependencies present"
