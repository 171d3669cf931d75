#!/usr/bin/env bash
# psql against tallyd (run through tallyd_harness.py): every password method,
# with and without TLS (sslmode disable / require / verify-full with the test
# CA), SELECT 1, a statement with a psql variable, and a failing statement
# whose SQLSTATE psql shows with VERBOSITY=verbose.
set -uo pipefail
psql=${PSQL:-/usr/lib/postgresql/15/bin/psql}
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

conn() {  # conn USER SSLMODE
  echo "host=localhost hostaddr=$TALLY_TEST_HOST port=$TALLY_TEST_PORT dbname=$TALLY_TEST_DB" \
       "user=$1 sslmode=$2 sslrootcert=$TALLY_TEST_CA connect_timeout=10"
}

export PGPASSWORD=$TALLY_TEST_PASSWORD
for user in "$TALLY_TEST_PASSWORD_USER" "$TALLY_TEST_SCRAM_USER" "$TALLY_TEST_MD5_USER"; do
  for mode in disable require verify-full; do
    what="$user/$mode"
    out=$($psql "$(conn "$user" "$mode")" -XAt -c 'SELECT 1' 2>&1) || fail "$what: SELECT 1 failed: $out"
    [ "$out" = "1" ] || fail "$what: SELECT 1 gave '$out'"

    info=$($psql "$(conn "$user" "$mode")" -X -c '\conninfo' 2>&1)
    if [ "$mode" = disable ]; then
      [[ "$info" != *"SSL connection"* ]] || fail "$what: TLS used with sslmode=disable"
    else
      [[ "$info" == *"SSL connection"* ]] || fail "$what: no TLS with sslmode=$mode: $info"
    fi

    out=$(echo "SELECT :'v'::int4 + 1;" | $psql "$(conn "$user" "$mode")" -XAt -v v=41 2>&1)
    [ "$out" = "42" ] || fail "$what: parameterized statement gave '$out'"

    out=$($psql "$(conn "$user" "$mode")" -XAt -v VERBOSITY=verbose -c 'SELEC 1' 2>&1)
    status=$?
    [ $status -eq 1 ] || fail "$what: failing statement exited $status"
    [[ "$out" == *"ERROR:  42601"* ]] || fail "$what: failing statement said '$out'"
  done
done

# Wrong password: 28P01 (libpq shows the FATAL message, not the code).
out=$(PGPASSWORD=wrong $psql "$(conn "$TALLY_TEST_SCRAM_USER" disable)" -XAt -c 'SELECT 1' 2>&1)
[[ "$out" == *'password authentication failed for user "scram_user"'* ]] ||
  fail "wrong password said '$out'"
# Unknown user (the same password exchange and answer as a wrong password, as
# PostgreSQL 15 gives under password methods: no user enumeration) and unknown database.
out=$($psql "$(conn nobody disable)" -XAt -c 'SELECT 1' 2>&1)
[[ "$out" == *'password authentication failed for user "nobody"'* ]] || fail "unknown user said '$out'"
out=$($psql "host=$TALLY_TEST_HOST port=$TALLY_TEST_PORT dbname=nowhere user=$TALLY_TEST_TRUST_USER" \
      -XAt -c 'SELECT 1' 2>&1)
[[ "$out" == *'database "nowhere" does not exist'* ]] || fail "unknown database said '$out'"
# Trust over loopback, several statements in one Query, an empty query.
out=$($psql "host=$TALLY_TEST_HOST port=$TALLY_TEST_PORT dbname=$TALLY_TEST_DB user=$TALLY_TEST_TRUST_USER" \
      -XAt -c 'SELECT 1; SELECT 2' 2>&1)
# psql 15 prints the result of every statement of a -c string.
[ "$out" = $'1\n2' ] || fail "two statements gave '$out'"

# SASLprep: the password U+2168 (ROMAN NUMERAL NINE) normalizes to "IX". libpq
# normalizes it before SCRAM; with cleartext authentication the server must.
for user in "$TALLY_TEST_SASLPREP_SCRAM_USER" "$TALLY_TEST_SASLPREP_PASSWORD_USER"; do
  # As UTF-8 bytes: $'\u...' would depend on the locale.
  for spelling in $'\xe2\x85\xa8' IX $'I\xc2\xadX'; do
    out=$(PGPASSWORD=$spelling $psql "$(conn "$user" disable)" -XAt -c 'SELECT 1' 2>&1)
    [ "$out" = "1" ] || fail "$user with password '$spelling': '$out'"
  done
  out=$(PGPASSWORD=ix $psql "$(conn "$user" disable)" -XAt -c 'SELECT 1' 2>&1)
  [[ "$out" == *"password authentication failed for user \"$user\""* ]] ||
    fail "$user with a wrong password said '$out'"
done

if [ $failures -ne 0 ]; then
  echo "psql_test: $failures failure(s)" >&2
  exit 1
fi
echo "psql_test: all passed"
