// The layout of a crash file, as the fatal-signal handler (CStrobeCrash.c)
// writes it and `strobe recover` (StrobeCrashRecovery) reads it. Layout
// only: no code, so a reader of crash files links nothing of the recording
// runtime.

#ifndef CSTROBE_CRASH_FILE_H
#define CSTROBE_CRASH_FILE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The crash file's first eight bytes.
#define CSTROBE_CRASH_MAGIC "STRBCRSH"
/// The version of a crash file with only the sections of the first layout
/// (THREAD, CHUNK, NAME, CATEGORY, END): readers of every version read it.
#define CSTROBE_CRASH_VERSION_FIRST 1
/// The version of a crash file that carries a section the first layout does
/// not have (METADATA): a reader of version 1 says the file is newer than it
/// reads. The newest version written and read.
#define CSTROBE_CRASH_VERSION 2

/// Section tags: each section is a 16-byte header (tag, 0, payload bytes)
/// and a payload padded to whole 8-byte words.
#define CSTROBE_CRASH_SECTION_THREAD 1
#define CSTROBE_CRASH_SECTION_CHUNK 2
#define CSTROBE_CRASH_SECTION_NAME 3
#define CSTROBE_CRASH_SECTION_CATEGORY 4
#define CSTROBE_CRASH_SECTION_END 5
/// The session's metadata: a word 0, the length, then NUL-terminated name and
/// value pairs (the layout of a NAME section).
#define CSTROBE_CRASH_SECTION_METADATA 6

/// The file header, after the magic. Every field is a little-endian word
/// except the names.
typedef struct cstrobe_crash_header {
    uint64_t version;
    uint64_t header_bytes;
    uint64_t process_id;
    /// The thread that received the signal.
    uint64_t thread_id;
    uint64_t signal;
    int64_t signal_code;
    uint64_t fault_address;
    /// 1 when raw timestamps are TSC ticks, 0 for CLOCK_MONOTONIC ns.
    uint64_t timestamp_is_tsc;
    /// The session's raw timestamp base and CLOCK_BOOTTIME at that moment.
    uint64_t base_raw;
    uint64_t base_boottime_ns;
    /// The raw timestamp source and CLOCK_BOOTTIME read in the handler.
    uint64_t crash_raw;
    uint64_t crash_boottime_ns;
    /// Each thread's buffer size, in bytes.
    uint64_t buffer_bytes;
    char process_name[64];
    char thread_name[16];
} cstrobe_crash_header;

/// A THREAD section's payload; the CHUNK sections of the thread follow it.
typedef struct cstrobe_crash_thread_record {
    uint64_t thread_id;
    /// The recorder's serial, unique in the process.
    uint64_t serial;
    uint64_t recorded;
    uint64_t discarded;
    uint64_t overwritten;
    /// Events in sealed chunks the handler could not reach.
    uint64_t lost;
    uint64_t chunk_count;
    char name[64];
} cstrobe_crash_thread_record;

/// A CHUNK section's payload starts with these three words; the records
/// follow, `words` of them.
typedef struct cstrobe_crash_chunk_record {
    uint64_t first_event;
    uint64_t end_event;
    uint64_t words;
} cstrobe_crash_chunk_record;

#ifdef __cplusplus
}
#endif

#endif
