// The layouts Strobe's recording runtime and its readers share, with no code:
// the resource usage of a record's rusage attachment and the crash file.

#ifndef CSTROBE_LAYOUT_H
#define CSTROBE_LAYOUT_H

#include "CStrobeCrashFile.h"
#include "CStrobeResourceUsage.h"

#endif
