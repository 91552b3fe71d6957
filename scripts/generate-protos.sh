#!/usr/bin/env bash
# Regenerates the protobuf-c sources of the StrobeProtos target from Proto/.
#
#   scripts/generate-protos.sh           rewrite the generated files in place
#   scripts/generate-protos.sh --check   regenerate into a temporary directory
#                                        and exit 1 if the files in the tree
#                                        differ (names the stale files)
#
# Output layout (SwiftPM C target):
#   Sources/StrobeProtos/<name>.pb-c.c          implementation
#   Sources/StrobeProtos/include/<name>.pb-c.h  public header
#
# protoc-c runs with --proto_path=Proto, so each .c file includes its header
# as "<name>.pb-c.h", which the target finds through its include/ directory.
# The output depends only on the .proto files and the protoc-c version
# (EXPECTED_PROTOC_C_VERSION below); it can be run from any directory.
set -euo pipefail

EXPECTED_PROTOC_C_VERSION="1.4.1"
PROTOS=(perfetto_trace strobe_results)

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROTO_DIR="$ROOT/Proto"
SRC_DIR="$ROOT/Sources/StrobeProtos"
INCLUDE_DIR="$SRC_DIR/include"

export LC_ALL=C

usage() {
    echo "usage: $0 [--check]" >&2
    exit 2
}

mode="write"
case "${1:-}" in
    "") ;;
    --check) mode="check" ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) usage ;;
esac
[ $# -le 1 ] || usage

if ! command -v protoc-c >/dev/null 2>&1; then
    echo "error: protoc-c not found (Debian/Ubuntu: apt-get install protobuf-c-compiler)" >&2
    exit 2
fi
version="$(protoc-c --version 2>/dev/null | sed -n 's/^protobuf-c \([0-9.]*\).*/\1/p' | head -n 1)"
if [ "$version" != "$EXPECTED_PROTOC_C_VERSION" ]; then
    echo "warning: protoc-c ${version:-unknown} found, the checked-in code was made with" \
         "$EXPECTED_PROTOC_C_VERSION; output may differ" >&2
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/strobe-protos.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# Generates every proto into $1/ (sources) and $1/include/ (headers).
generate() {
    local out="$1" name raw
    raw="$tmp/raw"
    mkdir -p "$out/include" "$raw"
    for name in "${PROTOS[@]}"; do
        (cd "$ROOT" && protoc-c --proto_path=Proto --c_out="$raw" "Proto/$name.proto")
        # The include must be the bare header name; fail loudly if a future
        # protoc-c spells it differently instead of emitting broken code.
        if ! grep -q "^#include \"$name.pb-c.h\"$" "$raw/$name.pb-c.c"; then
            sed -i -E "s|^#include \"([^\"]*/)?$name\\.pb-c\\.h\"$|#include \"$name.pb-c.h\"|" \
                "$raw/$name.pb-c.c"
            grep -q "^#include \"$name.pb-c.h\"$" "$raw/$name.pb-c.c" || {
                echo "error: unexpected header include in generated $name.pb-c.c" >&2
                exit 1
            }
        fi
        mv "$raw/$name.pb-c.c" "$out/$name.pb-c.c"
        mv "$raw/$name.pb-c.h" "$out/include/$name.pb-c.h"
    done
    rm -rf "$raw"
}

# Lists generated files (relative to the target dir) present under $1.
list_generated() {
    (cd "$1" && find . -maxdepth 2 \( -name '*.pb-c.c' -o -name '*.pb-c.h' \) -type f \
        | sed 's|^\./||' | sort)
}

if [ "$mode" = "write" ]; then
    generate "$tmp/out"
    mkdir -p "$INCLUDE_DIR"
    # Remove generated files whose proto no longer exists.
    list_generated "$SRC_DIR" | while read -r rel; do
        [ -e "$tmp/out/$rel" ] || { rm -f "$SRC_DIR/$rel"; echo "removed $rel"; }
    done
    list_generated "$tmp/out" | while read -r rel; do
        if ! cmp -s "$tmp/out/$rel" "$SRC_DIR/$rel"; then
            cp "$tmp/out/$rel" "$SRC_DIR/$rel"
            echo "wrote Sources/StrobeProtos/$rel"
        fi
    done
    echo "StrobeProtos sources are up to date."
    exit 0
fi

generate "$tmp/out"
stale=()
while read -r rel; do
    if [ ! -e "$SRC_DIR/$rel" ]; then
        stale+=("Sources/StrobeProtos/$rel (missing)")
    elif ! cmp -s "$tmp/out/$rel" "$SRC_DIR/$rel"; then
        stale+=("Sources/StrobeProtos/$rel (differs)")
    fi
done < <(list_generated "$tmp/out")
while read -r rel; do
    [ -e "$tmp/out/$rel" ] || stale+=("Sources/StrobeProtos/$rel (no longer generated)")
done < <(list_generated "$SRC_DIR")

if [ ${#stale[@]} -gt 0 ]; then
    echo "error: generated protobuf-c code is stale:" >&2
    printf '  %s\n' "${stale[@]}" >&2
    echo "run scripts/generate-protos.sh and commit the result." >&2
    exit 1
fi
echo "StrobeProtos sources match Proto/*.proto."
