#ifndef CSTROBE_BUILD_INFO_H
#define CSTROBE_BUILD_INFO_H

/// The git commit the `strobe` command was built from (`git describe
/// --always --dirty`), or an empty string when the build did not record one.
const char *cstrobe_build_commit(void);

#endif
