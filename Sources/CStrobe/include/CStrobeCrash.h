// Crash capture: a handler for fatal signals that writes every registered
// thread's buffer, and the text of the names its records use, to a crash
// file with async-signal-safe code only. `strobe recover` turns the file into
// a trace. See CrashCapture.swift for the Swift side and the file format.

#ifndef CSTROBE_CRASH_H
#define CSTROBE_CRASH_H

#include <stdint.h>

#include "CStrobeRuntime.h"
#include "CStrobeCrashFile.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A sealed chunk as the handler sees it.
typedef struct cstrobe_crash_chunk {
    uint64_t *base;
    uint64_t used_words;
    uint64_t first_event;
    uint64_t end_event;
} cstrobe_crash_chunk;

/// One recording thread's chunks, mirrored for the handler by the thread's
/// recorder whenever they change (under the recorder's lock, off the hot
/// path). `version` is odd while an update is in progress.
typedef struct cstrobe_crash_thread {
    struct cstrobe_crash_thread *next;
    uint64_t version;
    uint64_t thread_id;
    uint64_t serial;
    /// The cursor whose `published` ends the current chunk; NULL once the
    /// thread has no current chunk.
    cstrobe_thread_cursor *cursor;
    uint64_t *current_base;
    uint64_t current_words;
    uint64_t current_first_event;
    /// Discards as of the last update; the handler reads the cursor's own
    /// count while there is a cursor.
    uint64_t discarded;
    uint64_t overwritten;
    uint64_t lost;
    uint64_t sealed_count;
    uint64_t capacity;
    cstrobe_crash_chunk *sealed;
    char name[64];
} cstrobe_crash_thread;

/// What the handler needs, given when a session installs it.
typedef struct cstrobe_crash_config {
    const char *path;
    const char *process_name;
    uint64_t base_raw;
    uint64_t base_boottime_ns;
    uint64_t buffer_bytes;
    /// Words in the session's chunks (the handler's scratch buffer).
    uint64_t chunk_words;
    /// The session's metadata (see CSTROBE_CRASH_SECTION_METADATA), copied
    /// at install; NULL or empty for none.
    const uint8_t *metadata;
    uint64_t metadata_bytes;
} cstrobe_crash_config;

/// Installs the handler for SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE and
/// SIGTRAP, after preallocating everything it uses. Returns 0, or an errno.
int cstrobe_crash_install(const cstrobe_crash_config *config);

/// Disarms the handler, restores the previous actions where the handler is
/// still the installed one, and frees the thread mirrors.
void cstrobe_crash_uninstall(void);

/// A mirror for a thread that records while the handler is installed, with
/// room for `capacity` sealed chunks; NULL when none is installed.
cstrobe_crash_thread *cstrobe_crash_add_thread(uint64_t thread_id, uint64_t serial, uint64_t capacity);

static inline void cstrobe_crash_begin_update(cstrobe_crash_thread *thread) {
    __atomic_store_n(&thread->version, thread->version + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void cstrobe_crash_end_update(cstrobe_crash_thread *thread) {
    __atomic_store_n(&thread->version, thread->version + 1, __ATOMIC_RELEASE);
}

/// Gives the calling thread an alternate signal stack, unless it has one,
/// so that the handler runs even when the thread's stack overflowed.
void cstrobe_crash_prepare_thread(void);

/// Removes and frees the alternate stack `cstrobe_crash_prepare_thread`
/// gave the calling thread (at its exit).
void cstrobe_crash_release_thread(void);

/// Notes the text of an interned name (`word`) or a category (index), so
/// that the handler can write it. `text` must stay valid for the life of the
/// process.
void cstrobe_crash_note_name(uint64_t word, const uint8_t *text, uint64_t length);
void cstrobe_crash_note_category(uint64_t index, const uint8_t *text, uint64_t length);

/// Writes the crash file as the handler does, for `signal` at `address`,
/// without a signal; returns 0 or an errno. For tests of the file format.
int cstrobe_crash_write_now(int signal, uint64_t address);

#ifdef __cplusplus
}
#endif

#endif
