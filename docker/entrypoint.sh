#!/bin/sh
# Container entrypoint of tallyd. Configuration is by environment:
#   TALLY_*            any setting (`tallyd --help` lists them); tallyd reads these itself
#   TALLY_USER         name of the database user to create (default: tally)
#   TALLY_PASSWORD     its password, or TALLY_PASSWORD_FILE (a Docker secret);
#                      becomes TALLY_USERS=<user>:scram-sha-256:<password> unless
#                      TALLY_USERS is set. Never passed on the command line.
#   TALLY_HTTP_TOKEN   the admin endpoint's token, or TALLY_HTTP_TOKEN_FILE; without
#                      one (and no TALLY_HTTP_PORT) the admin endpoint stays off, since
#                      /metrics and /tuning would otherwise answer anyone who reaches the port
#   TALLY_AUTH_METHOD  method for TALLY_USER (default scram-sha-256)
# Container defaults, given as flags so that a TALLY_* variable still wins
# (tallyd: file < flags < environment); none is added when TALLY_CONFIG names a
# configuration file, which is then in charge:
#   --listen-address 0.0.0.0  --data-dir /var/lib/tally/data
#   --http-address 0.0.0.0  --http-port 8080   (only with a token)
# Arguments starting with "-" are passed to tallyd after the defaults; any other
# command (e.g. "sh") is run instead of tallyd.
set -eu

TALLYD_BIN=${TALLYD_BIN:-/usr/local/bin/tallyd}
# One word: the defaults below are split on spaces.
TALLY_DEFAULT_DATA_DIR=${TALLY_DEFAULT_DATA_DIR:-/var/lib/tally/data}

fail() {
  echo "tally-entrypoint: $*" >&2
  exit 2
}

# Reads VAR_FILE into VAR (Docker secrets); both set is ambiguous.
from_file() {
  var=$1
  file_var="${var}_FILE"
  eval "value=\${$var:-}"
  eval "file=\${$file_var:-}"
  if [ -n "$file" ]; then
    [ -z "$value" ] || fail "both $var and $file_var are set; use one"
    [ -r "$file" ] || fail "$file_var: cannot read $file"
    # Command substitution drops trailing newlines, as secrets files often have one.
    value=$(cat "$file")
    export "$var=$value"
  fi
  unset "$file_var" 2>/dev/null || true
}

if [ "$#" -gt 0 ] && [ "${1#-}" = "$1" ] && [ "$1" != "tallyd" ]; then
  exec "$@"
fi
[ "${1:-}" = "tallyd" ] && shift

from_file TALLY_PASSWORD
from_file TALLY_HTTP_TOKEN

if [ -n "${TALLY_PASSWORD:-}" ]; then
  if [ -n "${TALLY_USERS:-}" ]; then
    fail "TALLY_PASSWORD and TALLY_USERS are both set; put the password in TALLY_USERS"
  fi
  user=${TALLY_USER:-tally}
  case "$user" in *[:,]*) fail "TALLY_USER must not contain ':' or ','" ;; esac
  case "$TALLY_PASSWORD" in *,*) fail "TALLY_PASSWORD must not contain ','; use TALLY_CONFIG with [[users]]" ;; esac
  export TALLY_USERS="$user:${TALLY_AUTH_METHOD:-scram-sha-256}:$TALLY_PASSWORD"
  unset TALLY_PASSWORD
elif [ -z "${TALLY_USERS:-}" ] && [ -z "${TALLY_CONFIG:-}" ]; then
  echo "tally-entrypoint: no TALLY_PASSWORD: user \"tally\" is trusted on loopback only," \
       "so clients outside the container cannot log in" >&2
fi
unset TALLY_USER TALLY_AUTH_METHOD 2>/dev/null || true

# Container defaults as flags, each only when its variable is unset.
defaults=""
add_default() {  # add_default VAR --flag value
  eval "given=\${$1:-}"
  if [ -z "$given" ] && [ -z "${TALLY_CONFIG:-}" ]; then
    defaults="$defaults $2 $3"
  fi
}
add_default TALLY_LISTEN_ADDRESS --listen-address 0.0.0.0
if [ -n "${TALLY_HTTP_TOKEN:-}" ]; then
  add_default TALLY_HTTP_ADDRESS --http-address 0.0.0.0
  add_default TALLY_HTTP_PORT --http-port 8080
elif [ -z "${TALLY_HTTP_PORT:-}" ] && [ -z "${TALLY_CONFIG:-}" ]; then
  echo "tally-entrypoint: no TALLY_HTTP_TOKEN: the admin endpoint (/metrics, /tuning) is off" >&2
fi
add_default TALLY_DATA_DIR --data-dir "$TALLY_DEFAULT_DATA_DIR"
unset TALLY_DEFAULT_DATA_DIR

# shellcheck disable=SC2086  # the defaults are single words by construction
exec "$TALLYD_BIN" $defaults "$@"
