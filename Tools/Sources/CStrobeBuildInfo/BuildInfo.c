#include "CStrobeBuildInfo.h"

// scripts/build-commit.sh writes BuildCommit.h (not committed) before the
// Makefile's builds; a build without it records no commit.
#if __has_include("BuildCommit.h")
#include "BuildCommit.h"
#endif

#ifndef STROBE_BUILD_COMMIT
#define STROBE_BUILD_COMMIT ""
#endif

const char *cstrobe_build_commit(void) { return STROBE_BUILD_COMMIT; }
