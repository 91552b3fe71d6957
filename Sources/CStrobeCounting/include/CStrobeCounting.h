// Exact counts of what a stretch of code does: heap allocations (and their
// bytes), frees, and the Swift runtime's retains and releases, for the perf
// runner's measure blocks and the benchmarks.
//
// Linking this target replaces malloc and its family with wrappers around
// glibc's allocator (`__libc_malloc` and friends), and the Swift runtime's
// `swift_retain`, `swift_release`, `swift_retain_n` and `swift_release_n`
// with wrappers around the runtime's own (RetainCounting.c says why not the
// runtime's hook variables). The wrappers count only while a window is open
// (one relaxed load of a flag otherwise), on every thread of the process;
// a perf test's window leaves out Strobe's own work (the session's writer,
// and Strobe's bookkeeping on the test's threads: CStrobeRuntime.h's
// `cstrobe_own_work_depth`).
//
// Only StrobePerf (and the benchmarks) link this target: an app that links
// the SDK alone keeps the C library's malloc and the runtime's retains.

#ifndef CSTROBE_COUNTING_H
#define CSTROBE_COUNTING_H

#include <pthread.h>
#include <stdint.h>

#include "CStrobeInstructions.h"

#ifdef __cplusplus
extern "C" {
#endif

/// What a counting window saw.
typedef struct cstrobe_counts {
    /// Allocations: malloc, calloc, realloc, memalign, aligned_alloc,
    /// posix_memalign, valloc and pvalloc calls (a realloc that moves or
    /// resizes a block is one allocation and one free).
    uint64_t allocations;
    /// Bytes those calls asked for.
    uint64_t allocated_bytes;
    /// Frees of a non-null pointer (free, or realloc of a block).
    uint64_t frees;
    /// Swift retains (`swift_retain`, and `n` for `swift_retain_n`).
    uint64_t retains;
    /// Swift releases (`swift_release`, and `n` for `swift_release_n`).
    uint64_t releases;
} cstrobe_counts;

/// Whether allocations are counted on this platform (glibc): the wrappers
/// are linked in.
int cstrobe_counting_allocations_available(void);

/// Whether retains and releases can be counted: the wrappers are the
/// definitions in effect (the Swift runtime is linked dynamically).
int cstrobe_counting_retains_available(void);

/// Finds the code of the runtime's own caches in the libraries loaded now
/// (libdispatch's continuation cache, RuntimeCaches.c), whose allocator calls
/// no window counts from then on: their number follows the scheduling, not
/// the code. Call before the first window; later calls return at once.
/// Returns how many functions were found (0 where the library is absent or
/// its symbol table stripped: then those calls count).
int cstrobe_counting_leave_out_runtime_caches(void);

/// Opens a counting window: zeroes the counts and starts counting on every
/// thread; with `leaves_out_strobe` non-zero, not while a thread does
/// Strobe's own work (a benchmark of the SDK passes 0 to count it). With
/// `count_retains` non-zero, retains and releases are counted too. One
/// window at a time per process.
void cstrobe_counting_begin(int leaves_out_strobe, int count_retains);

/// Waits, with the window still open, until every other thread that
/// counted in it is asleep or gone, for at most `limit_nanoseconds` of the
/// CPU time those threads get while it waits (a thread waiting for a CPU on
/// a loaded machine is waited for) and at most 20 times that by the clock
/// (the clock alone where a thread's CPU time cannot be read): a helper
/// thread that signalled the block's end and then freed or released what it
/// held does so inside the window every time, not when the scheduler lets
/// it. Returns at once when no other thread counted; else it sleeps at
/// least once (a serializing simulator runs the other threads then).
/// Returns the nanoseconds it waited.
uint64_t cstrobe_counting_settle(uint64_t limit_nanoseconds);

/// Closes the window and returns what it counted.
cstrobe_counts cstrobe_counting_end(void);

/// Whether a window is open.
int cstrobe_counting_is_open(void);

#ifdef __cplusplus
}
#endif

#endif
