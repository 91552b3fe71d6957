#!/usr/bin/env bash
# Records the git commit of the checkout for `strobe --version`: writes
# Tools/Sources/CStrobeBuildInfo/BuildCommit.h (ignored by git), and only
# when the commit changed, so that an unchanged checkout rebuilds nothing.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
header="$ROOT/Tools/Sources/CStrobeBuildInfo/BuildCommit.h"
commit=$(git -C "$ROOT" describe --always --dirty --abbrev=12 2>/dev/null || true)
text="#define STROBE_BUILD_COMMIT \"$commit\""
if [ ! -f "$header" ] || [ "$(cat "$header")" != "$text" ]; then
    printf '%s\n' "$text" >"$header"
fi
