#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the run history's tests.
#
#   scripts/postgres.sh start DIR   creates DIR, a cluster in it and the
#                                   database strobe_test, starts the server
#                                   and prints the URL to use
#   scripts/postgres.sh stop DIR    stops that server and removes DIR
#
# The server listens on a Unix socket in DIR, where anyone may log in as
# `strobe` without a password, and on a free loopback port, where `strobe`
# logs in with the password in DIR/password (scram-sha-256). DIR/url holds
# the socket URL (printed by start), DIR/tcp-url the loopback one. Installs
# Debian's postgresql when initdb is missing. As root, the server runs as the
# user `postgres` (or `nobody`), which owns DIR.
set -euo pipefail

usage() { echo "usage: scripts/postgres.sh start|stop DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
action=$1
dir=$2
marker=.strobe-postgres-cluster

find_bin() {
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1
}

# Runs a command as the cluster's owner.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u "$owner" -- "$@"
    else
        "$@"
    fi
}

pick_owner() {
    owner=$(id -un)
    if [ "$(id -u)" -eq 0 ]; then
        if id postgres >/dev/null 2>&1; then owner=postgres; else owner=nobody; fi
    fi
}

case $action in
start)
    bin=$(find_bin)
    if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
        echo "postgres.sh: installing Debian's postgresql" >&2
        sudo_cmd=""
        if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
        $sudo_cmd apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq postgresql >/dev/null
        bin=$(find_bin)
        [ -n "$bin" ] && [ -x "$bin/initdb" ] || { echo "postgres.sh: no initdb after installing postgresql" >&2; exit 1; }
    fi
    if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
        echo "postgres.sh: $dir exists and is not empty; give a new or empty directory" >&2
        exit 1
    fi
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    touch "$dir/$marker"
    pick_owner
    if [ "$(id -u)" -eq 0 ]; then
        chown -R "$owner" "$dir"
        if ! runuser -u "$owner" -- test -w "$dir"; then
            echo "postgres.sh: the server's user $owner cannot reach $dir (a parent directory is closed to it); choose a directory under /tmp" >&2
            exit 1
        fi
    fi
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    password=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
    umask 077
    printf '%s\n' "$password" > "$dir/password"
    [ "$(id -u)" -eq 0 ] && chown "$owner" "$dir/password"
    as_owner "$bin/initdb" -D "$dir/data" -U strobe --auth-local=trust --auth-host=scram-sha-256 \
        --pwfile="$dir/password" -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 || {
        cat "$dir/initdb.log" >&2
        exit 1
    }
    # The server outlives this script, so it starts holding none of the
    # descriptors this script was handed beyond the standard three: a test
    # process that starts the cluster while another of its tests reads a
    # child's output through a pipe would hand the server that pipe's
    # writing end, and the reader would wait for its end until the server
    # stopped, after the tests (fd 255 is bash's own copy of this script).
    (
        for fd in /proc/$BASHPID/fd/*; do
            fd=${fd##*/}
            if [ "$fd" -gt 2 ] && [ "$fd" -ne 255 ]; then eval "exec $fd>&-"; fi
        done
        as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
            -o "-k $dir -c listen_addresses=127.0.0.1 -p $port -c fsync=off -c max_connections=50" start >/dev/null
    ) || {
        cat "$dir/server.log" >&2
        exit 1
    }
    as_owner "$bin/createdb" -h "$dir" -p "$port" -U strobe strobe_test
    url="postgres://strobe@/strobe_test?host=$dir&port=$port"
    printf '%s\n' "$url" > "$dir/url"
    printf '%s\n' "postgres://strobe@127.0.0.1:$port/strobe_test?sslmode=disable" > "$dir/tcp-url"
    chmod 644 "$dir/url" "$dir/tcp-url"
    chmod 755 "$dir"
    echo "$url"
    ;;
stop)
    [ -d "$dir" ] || exit 0
    if [ ! -f "$dir/$marker" ]; then
        echo "postgres.sh: $dir was not made by postgres.sh start; not removing it" >&2
        exit 1
    fi
    pick_owner
    bin=$(find_bin)
    if [ -f "$dir/data/postmaster.pid" ] && [ -n "$bin" ]; then
        as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null || true
    fi
    rm -rf "$dir"
    ;;
*)
    usage
    ;;
esac
