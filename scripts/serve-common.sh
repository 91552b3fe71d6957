# Starting and stopping `strobe serve` from a script (sourced by
# scripts/demo-fleet.sh and scripts/measure-serve.sh).

# serve_token FILE: writes a fresh random bearer token (64 hex digits) to FILE.
serve_token() {
    head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$1"
}

# serve_start STROBE STORE TOKEN_FILE LOG: starts `STROBE serve` on a free
# loopback port, its output in LOG, and waits (up to 10 s) until it listens.
# Sets serve_pid and serve_port; on failure prints LOG and returns 1.
serve_start() {
    "$1" serve --history "$2" --listen 127.0.0.1:0 --token-file "$3" > "$4" 2>&1 &
    serve_pid=$!
    serve_port=""
    for _ in $(seq 1 100); do
        serve_port=$(sed -n 's/^strobe serve: listening on [^:]*:\([0-9]*\),.*/\1/p' "$4")
        [ -n "$serve_port" ] && return 0
        kill -0 "$serve_pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "strobe serve did not start:" >&2
    cat "$4" >&2
    return 1
}

# serve_stop: stops the server serve_start started, letting it finish the
# uploads under way.
serve_stop() {
    kill -TERM "$serve_pid"
    wait "$serve_pid" || true
}
