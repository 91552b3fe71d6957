#!/usr/bin/env python3
"""Sends trace files to `strobe serve` from several connections at once and
reports the rate, the HTTP statuses and any upload that failed.

    scripts/serve-load.py --url http://127.0.0.1:8080 --token-file token \
        --connections 8 TRACE_OR_DIR...

Each file is sent once (`--repeat N` sends the whole set N times, which the
server must count once). Exits 1 when any upload got a status other than
201 (stored) or 200 (already stored), or failed on the wire.
"""
import argparse
import concurrent.futures
import http.client
import os
import sys
import threading
import time
import urllib.parse


def trace_files(paths):
    files = []
    for path in paths:
        if os.path.isdir(path):
            for root, _, names in os.walk(path):
                files.extend(os.path.join(root, n) for n in sorted(names) if n.endswith(".pftrace"))
        else:
            files.append(path)
    return sorted(files)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True, help="the server, e.g. http://127.0.0.1:8080")
    parser.add_argument("--token-file", required=True, help="file holding the bearer token")
    parser.add_argument("--connections", type=int, default=8, help="concurrent connections (default 8)")
    parser.add_argument("--repeat", type=int, default=1, help="send every file this many times (default 1)")
    parser.add_argument("paths", nargs="+", help="trace files or directories of .pftrace files")
    args = parser.parse_args()

    url = urllib.parse.urlparse(args.url)
    if url.scheme != "http" or not url.hostname:
        sys.exit(f"serve-load: --url {args.url!r} is not an http://HOST:PORT address")
    with open(args.token_file, encoding="utf-8") as handle:
        token = handle.read().strip()
    files = trace_files(args.paths)
    if not files:
        sys.exit("serve-load: no trace files in " + " ".join(args.paths))
    bodies = {path: open(path, "rb").read() for path in files}
    jobs = [path for _ in range(args.repeat) for path in files]

    local = threading.local()
    lock = threading.Lock()
    statuses = {}
    failures = []

    def send(path):
        connection = getattr(local, "connection", None)
        if connection is None:
            connection = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=60)
            local.connection = connection
        body = bodies[path]
        headers = {
            "Authorization": "Bearer " + token,
            "Content-Type": "application/octet-stream",
            "X-Strobe-Trace-Name": os.path.basename(path),
        }
        try:
            connection.request("POST", "/v1/traces", body=body, headers=headers)
            response = connection.getresponse()
            text = response.read().decode("utf-8", "replace")
            status = response.status
        except (OSError, http.client.HTTPException) as error:
            local.connection = None
            with lock:
                failures.append(f"{path}: {error}")
            return
        with lock:
            statuses[status] = statuses.get(status, 0) + 1
            if status not in (200, 201):
                failures.append(f"{path}: HTTP {status}: {text.strip()}")

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.connections) as pool:
        list(pool.map(send, jobs))
    elapsed = time.monotonic() - started
    sent = sum(len(bodies[path]) for path in jobs)
    summary = ", ".join(f"{count} × HTTP {status}" for status, count in sorted(statuses.items()))
    print(f"serve-load: {len(jobs)} uploads ({len(files)} distinct traces, {sent / 1e6:.1f} MB) in {elapsed:.2f} s: "
          f"{len(jobs) / elapsed:.0f} traces/s over {args.connections} connections; {summary}")
    for failure in failures[:20]:
        print("serve-load: failed: " + failure, file=sys.stderr)
    if failures:
        print(f"serve-load: {len(failures)} uploads failed", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
