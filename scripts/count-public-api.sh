#!/usr/bin/env bash
# Counts the public declarations of a module (default: Strobe, the SDK) and
# prints the count; with --list, prints each declaration's file and line.
#
# What counts: every declaration whose modifiers say `public` or `open`
# (types, functions, initializers, properties, subscripts, type aliases,
# members of types and of extensions alike), one per declaration. Enum cases
# and protocol requirements, which take their type's access and carry no
# modifier, do not count separately; neither does `package` API, which no
# app sees. `public extension` is refused, since it would make members
# public without saying so on them.
#
# `scripts/count-public-api.sh --max N` fails when the count is over N
# (`make lint` checks the SDK's bar this way).
set -euo pipefail
cd "$(dirname "$0")/.."
module=Strobe
max=""
list=0
while [ $# -gt 0 ]; do
    case "$1" in
        --list) list=1 ;;
        --max) max="$2"; shift ;;
        --module) module="$2"; shift ;;
        *) echo "count-public-api.sh: unknown argument $1 (--list, --max N, --module NAME)" >&2; exit 2 ;;
    esac
    shift
done
directory="Sources/$module"
[ -d "$directory" ] || { echo "count-public-api.sh: no module at $directory" >&2; exit 2; }
modifiers='(@[A-Za-z_]+(\([^)]*\))?[[:space:]]+)*((static|class|final|override|mutating|nonmutating|nonisolated|convenience|required|indirect|lazy|dynamic|optional|(private|fileprivate|internal|package)\(set\))[[:space:]]+)*'
declaration="^[[:space:]]*${modifiers}(public|open)[[:space:]]+${modifiers}(func|var|let|init|subscript|struct|class|enum|protocol|typealias|actor|associatedtype|macro|extension|static|final)\b"
if grep -rnE --include='*.swift' "^[[:space:]]*${modifiers}public[[:space:]]+extension\b" "$directory"; then
    echo "count-public-api.sh: mark each member public instead of the extension" >&2
    exit 1
fi
matches=$(grep -rnE --include='*.swift' "$declaration" "$directory" || true)
count=$(printf '%s' "$matches" | grep -c . || true)
if [ "$list" = 1 ]; then printf '%s\n' "$matches"; fi
echo "$count"
if [ -n "$max" ] && [ "$count" -gt "$max" ]; then
    echo "count-public-api.sh: $module has $count public declarations, more than $max" >&2
    exit 1
fi
