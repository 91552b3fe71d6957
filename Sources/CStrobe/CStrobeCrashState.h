// The state the crash handler's two files share: CStrobeCrash.c allocates
// and fills it when a session installs the handler, CStrobeCrashWriter.c
// reads it to write the crash file. Private to CStrobe (not in include/),
// and hidden from other images.

#ifndef CSTROBE_CRASH_STATE_H
#define CSTROBE_CRASH_STATE_H

#include "CStrobeCrash.h"

#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/syscall.h>
#endif

#define CSTROBE_CRASH_HIDDEN __attribute__((visibility("hidden")))

/// The crash file's path.
extern CSTROBE_CRASH_HIDDEN char *cstrobe_crash_path;
/// The header, but for what the crash itself fills in.
extern CSTROBE_CRASH_HIDDEN cstrobe_crash_header cstrobe_crash_header_template;
/// The session's metadata section payload, copied at install.
extern CSTROBE_CRASH_HIDDEN uint8_t *cstrobe_crash_metadata;
extern CSTROBE_CRASH_HIDDEN uint64_t cstrobe_crash_metadata_length;
/// Where a chunk is copied before it is written (a chunk's words).
extern CSTROBE_CRASH_HIDDEN uint64_t *cstrobe_crash_scratch;
extern CSTROBE_CRASH_HIDDEN uint64_t cstrobe_crash_scratch_words;
/// The output buffer, of CSTROBE_CRASH_OUTPUT_CAPACITY bytes.
extern CSTROBE_CRASH_HIDDEN uint8_t *cstrobe_crash_output;
#define CSTROBE_CRASH_OUTPUT_CAPACITY ((size_t)64 << 10)
/// Literal name words already written, an open-addressing set of
/// CSTROBE_CRASH_SEEN_CAPACITY words.
extern CSTROBE_CRASH_HIDDEN uint64_t *cstrobe_crash_seen_names;
#define CSTROBE_CRASH_SEEN_CAPACITY ((uint64_t)16384)
/// Registered thread mirrors (a list only ever pushed to while armed).
extern CSTROBE_CRASH_HIDDEN cstrobe_crash_thread *cstrobe_crash_threads;

/// Writes the crash file for `signal`; returns 0 or an errno value.
CSTROBE_CRASH_HIDDEN int cstrobe_crash_write_file(int signal, int64_t code, uint64_t address, uint64_t thread_id);

/// The calling thread's kernel id, by a raw syscall (async-signal-safe).
static inline uint64_t cstrobe_crash_current_thread_id(void) {
#if defined(__linux__)
    return (uint64_t)syscall(SYS_gettid);
#else
    return cstrobe_thread_id();
#endif
}

#endif
