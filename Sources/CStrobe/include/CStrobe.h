// The C layer of the Strobe SDK, as one module: the recording runtime (the
// per-thread cursor, clocks, rusage), the category switches and the crash
// handler. Each header includes only what it builds on, with no cycle:
// CStrobeCrash.h builds on CStrobeRuntime.h; CStrobeProfiler.h (the CPU
// profiler's samplers and symbol reading) and CStrobeUnwind.h (its
// call-frame information) stand alone; this umbrella includes all five.

#ifndef CSTROBE_H
#define CSTROBE_H

#include "CStrobeCategories.h"
#include "CStrobeRuntime.h"
#include "CStrobeCrash.h"
#include "CStrobeProfiler.h"
#include "CStrobeUnwind.h"

#endif
