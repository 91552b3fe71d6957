#!/usr/bin/env bash
# Runs a command beside a throwaway PostgreSQL cluster (scripts/postgres.sh)
# and stops and removes the cluster however the command ends:
#   scripts/with-postgres.sh COMMAND [ARGUMENT...]
# The command sees STROBE_TEST_POSTGRES_URL (the Unix-socket URL),
# STROBE_TEST_POSTGRES_TCP_URL (loopback, with a password) and
# STROBE_TEST_POSTGRES_PASSWORD_FILE; its exit status is this script's.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: scripts/with-postgres.sh COMMAND [ARGUMENT...]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /tmp/strobe-pg.XXXXXX) && rmdir "$dir"
if ! url=$(bash "$here/postgres.sh" start "$dir"); then
    bash "$here/postgres.sh" stop "$dir" >/dev/null 2>&1
    echo "with-postgres: the PostgreSQL cluster did not start" >&2
    exit 1
fi
trap 'bash "$here/postgres.sh" stop "$dir"' EXIT
STROBE_TEST_POSTGRES_URL="$url" \
STROBE_TEST_POSTGRES_TCP_URL="$(cat "$dir/tcp-url")" \
STROBE_TEST_POSTGRES_PASSWORD_FILE="$dir/password" \
    "$@"
