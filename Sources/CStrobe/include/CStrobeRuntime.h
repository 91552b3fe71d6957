// Low-level primitives for the Strobe recording core: the per-thread buffer
// cursor, its thread-local slot, a cheap timestamp source and atomics on raw
// memory. Everything on the recording hot path is `static inline` so that the
// Swift compiler inlines it into `@inlinable` callers.

#ifndef CSTROBE_RUNTIME_H
#define CSTROBE_RUNTIME_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "CStrobeCategories.h"
#include "CStrobeResourceUsage.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define CSTROBE_HAS_TSC 1
#else
#define CSTROBE_HAS_TSC 0
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// The hot part of a thread's recording state. Only the owning thread writes
/// it; the drainer reads `published` to learn how far the current chunk holds
/// complete records.
typedef struct cstrobe_thread_cursor {
    /// One past the last usable word of the current chunk. First, because
    /// ThreadSanitizer counts Swift's writes to any field as writes to the
    /// start of the struct, which must be a field only the owner uses.
    uint64_t *limit;
    /// Next free word in the current chunk; everything before it is a complete
    /// record. The owner writes it with release ordering, the drainer reads it
    /// with acquire ordering.
    uint64_t *published;
    /// The session generation this cursor records for; 0 = detached.
    uint64_t generation;
    /// Subtracted from raw timestamps so that 56 bits cover the session.
    uint64_t timestamp_base;
    /// Events since the session began, by what became of them (indexed by
    /// cstrobe_event_fate). Only the owner writes them, so that neither a
    /// record nor a discard takes a lock; others read them atomically.
    uint64_t events[2];
    /// Current begin/end nesting depth of the thread.
    int64_t depth;
    /// Session flags copied at registration (see CSTROBE_FLAG_*).
    uint64_t flags;
    /// Bit n set: the open interval at nesting level n (< 64) captured rusage,
    /// so its end captures it too.
    uint64_t rusage_levels;
    /// Bit n set: the open interval at nesting level n (< 64) was opened by
    /// a begin in a category, the one in `level_categories[n]`. An end in a
    /// category closes the innermost interval only if that interval was
    /// opened in the same category; otherwise its own begin was skipped
    /// while the category was off. Every end clears its level's bit.
    uint64_t categorized_levels;
    /// The Swift object that owns this cursor (unretained).
    void *owner;
    /// Nonzero while the owner is between its check that the session runs
    /// and the publication of its record; a stopping session waits for it
    /// to return to 0 (see cstrobe_enter_write).
    uint64_t writing;
    /// Per nesting level below 64: the category (index plus one) of the
    /// begin that opened it, valid where `categorized_levels` has the bit.
    uint16_t level_categories[64];
} cstrobe_thread_cursor;

/// Notes that the interval opened at `level` is in category `payload`
/// (index plus one). Levels from 64 on are not tracked.
static inline void cstrobe_open_categorized_level(cstrobe_thread_cursor *cursor, int64_t level, uint64_t payload) {
    if (level >= 0 && level < 64) {
        cursor->categorized_levels |= (uint64_t)1 << level;
        cursor->level_categories[level] = (uint16_t)payload;
    }
}

/// Whether an end in category `payload` closes the interval open at
/// `level`: it was opened in that category, or lies 64 levels deep or more,
/// where nothing tells.
static inline bool cstrobe_level_is_in_category(const cstrobe_thread_cursor *cursor, int64_t level, uint64_t payload) {
    if (level < 0) return false;
    if (level >= 64) return true;
    return ((cursor->categorized_levels >> level) & 1) != 0 && cursor->level_categories[level] == (uint16_t)payload;
}

/// Capture rusage at every interval begin and end.
#define CSTROBE_FLAG_RUSAGE_ALL ((uint64_t)1)
/// Capture rusage for intervals whose names are in the session's list.
#define CSTROBE_FLAG_RUSAGE_NAMED ((uint64_t)2)
/// The thread is discarding records; ends must be checked against the drop mask.
#define CSTROBE_FLAG_DROPPING ((uint64_t)4)
/// An interval at nesting level 64 or deeper captured rusage; ends take the
/// slow path, which tracks those levels.
#define CSTROBE_FLAG_DEEP_RUSAGE ((uint64_t)8)
/// The session announces events as signposts; every event takes the slow path.
#define CSTROBE_FLAG_SIGNPOSTS ((uint64_t)16)

/// The generation of the running session, or 0 when no session records.
extern uint64_t _Atomic cstrobe_active_generation;

/// The calling thread's cursor, or NULL before it first records.
extern __thread cstrobe_thread_cursor *cstrobe_current_cursor
    __attribute__((tls_model("initial-exec")));

static inline uint64_t cstrobe_load_generation(void) {
    return __atomic_load_n((uint64_t *)&cstrobe_active_generation, __ATOMIC_RELAXED);
}

static inline void cstrobe_store_generation(uint64_t generation) {
    __atomic_store_n((uint64_t *)&cstrobe_active_generation, generation, __ATOMIC_SEQ_CST);
}

static inline cstrobe_thread_cursor *cstrobe_get_cursor(void) {
    return cstrobe_current_cursor;
}

static inline void cstrobe_set_cursor(cstrobe_thread_cursor *cursor) {
    cstrobe_current_cursor = cursor;
}

/// How deep the calling thread is in Strobe's own work: its bookkeeping on
/// an app's thread (a thread's first record, its joining a session, a chunk
/// taken), or any work of a thread Strobe runs (the session's writer), which
/// stays marked for its life. A perf test's exact counts (StrobePerf's
/// CStrobeCounting) leave out what a marked thread allocates, retains and
/// releases, so that they are the test's own.
extern __thread unsigned cstrobe_own_work_depth __attribute__((tls_model("initial-exec")));

/// Marks the start of a stretch of Strobe's own work on the calling thread.
static inline void cstrobe_own_work_begin(void) { cstrobe_own_work_depth += 1; }

/// Marks its end.
static inline void cstrobe_own_work_end(void) { cstrobe_own_work_depth -= 1; }

/// Publishes `position` as the end of the complete records in the chunk.
static inline void cstrobe_publish(cstrobe_thread_cursor *cursor, uint64_t *position) {
    __atomic_store_n((uint64_t **)&cursor->published, position, __ATOMIC_RELEASE);
}

/// Reads the published end of complete records (pairs with cstrobe_publish).
static inline uint64_t *cstrobe_read_published(cstrobe_thread_cursor *cursor) {
    return __atomic_load_n((uint64_t **)&cursor->published, __ATOMIC_ACQUIRE);
}

/// Marks the thread as writing, then checks that `cursor` records for the
/// running session, `generation`. Returns false (and clears the mark) when
/// it does not.
///
/// The mark is a plain store, ordered before the load of the generation by
/// the stopping thread's cstrobe_process_barrier: after the session sets the
/// generation to 0 and runs the barrier, every thread either sees 0 here or
/// has its mark visible to the session, which waits for it to clear.
static inline bool cstrobe_enter_write(cstrobe_thread_cursor *cursor, uint64_t generation) {
    __atomic_store_n(&cursor->writing, 1, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (__builtin_expect(cursor->generation == generation
            && __atomic_load_n((uint64_t *)&cstrobe_active_generation, __ATOMIC_RELAXED) == generation, 1)) {
        return true;
    }
    __atomic_store_n(&cursor->writing, 0, __ATOMIC_RELEASE);
    return false;
}

/// Clears the writing mark set by cstrobe_enter_write.
static inline void cstrobe_leave_write(cstrobe_thread_cursor *cursor) {
    __atomic_store_n(&cursor->writing, 0, __ATOMIC_RELEASE);
}

/// Publishes `position` and clears the writing mark.
static inline void cstrobe_publish_and_leave(cstrobe_thread_cursor *cursor, uint64_t *position) {
    __atomic_store_n((uint64_t **)&cursor->published, position, __ATOMIC_RELEASE);
    __atomic_store_n(&cursor->writing, 0, __ATOMIC_RELEASE);
}

/// Whether the cursor's thread is in the middle of a write.
static inline bool cstrobe_is_writing(cstrobe_thread_cursor *cursor) {
    return __atomic_load_n(&cursor->writing, __ATOMIC_ACQUIRE) != 0;
}

/// What became of an event a thread offered: written into its buffer, or
/// discarded for want of room.
typedef enum cstrobe_event_fate {
    CSTROBE_EVENT_RECORDED = 0,
    CSTROBE_EVENT_DISCARDED = 1,
} cstrobe_event_fate;

/// Counts one more event of `fate` (owner only; others read the count with
/// cstrobe_events).
static inline void cstrobe_count_event(cstrobe_thread_cursor *cursor, cstrobe_event_fate fate) {
    uint64_t *count = &cursor->events[fate];
    __atomic_store_n(count, __atomic_load_n(count, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

/// Sets the count of `fate` (owner only).
static inline void cstrobe_set_events(cstrobe_thread_cursor *cursor, cstrobe_event_fate fate, uint64_t value) {
    __atomic_store_n(&cursor->events[fate], value, __ATOMIC_RELAXED);
}

/// The events of `fate` the cursor's owner has counted, from any thread.
static inline uint64_t cstrobe_events(cstrobe_thread_cursor *cursor, cstrobe_event_fate fate) {
    return __atomic_load_n(&cursor->events[fate], __ATOMIC_RELAXED);
}

/// A memory barrier on every thread of the process: after it returns, each
/// thread's earlier stores are visible to the caller, and each thread's later
/// loads see what the caller stored before it (membarrier on Linux).
void cstrobe_process_barrier(void);

static inline uint64_t cstrobe_atomic_load_u64(const uint64_t *address) {
    return __atomic_load_n(address, __ATOMIC_ACQUIRE);
}

/// Whether raw timestamps come from the TSC (1) or CLOCK_MONOTONIC (0).
/// Set at each session start while other threads may read it, so it is only
/// accessed atomically.
extern int _Atomic cstrobe_timestamp_source_is_tsc;

/// A raw timestamp: TSC ticks where the TSC is invariant, else CLOCK_MONOTONIC ns.
static inline uint64_t cstrobe_raw_timestamp(void) {
#if CSTROBE_HAS_TSC
    if (__builtin_expect(__atomic_load_n((int *)&cstrobe_timestamp_source_is_tsc, __ATOMIC_RELAXED), 1)) {
        return __rdtsc();
    }
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if CSTROBE_HAS_TSC
/// Set where the build can read the TSC but the session records with
/// CLOCK_MONOTONIC: events take the slow path, whose timestamp reads either,
/// so the fast paths read the TSC without asking.
#define CSTROBE_FLAG_CLOCK_TIMESTAMPS ((uint64_t)32)
/// The raw timestamp on the fast paths, which only run without
/// CSTROBE_FLAG_CLOCK_TIMESTAMPS: the TSC.
static inline uint64_t cstrobe_fast_timestamp(void) { return __rdtsc(); }
#else
#define CSTROBE_FLAG_CLOCK_TIMESTAMPS ((uint64_t)0)
static inline uint64_t cstrobe_fast_timestamp(void) { return cstrobe_raw_timestamp(); }
#endif

/// Decides once whether the TSC is invariant and usable; returns the decision.
int cstrobe_select_timestamp_source(int allow_tsc);

/// Tell ThreadSanitizer, in builds that use it, that a lock guarding
/// `address` was taken or is about to be released: Synchronization's Mutex
/// waits on a futex on Linux, which the sanitizer cannot see. No-ops
/// otherwise.
void cstrobe_sanitizer_acquire(void *address);
void cstrobe_sanitizer_release(void *address);

/// Reads CLOCK_MONOTONIC in nanoseconds.
uint64_t cstrobe_monotonic_ns(void);
/// Reads CLOCK_REALTIME in nanoseconds since the Unix epoch.
uint64_t cstrobe_realtime_ns(void);
/// Reads CLOCK_BOOTTIME in nanoseconds (CLOCK_MONOTONIC where it is missing).
uint64_t cstrobe_boottime_ns(void);

/// A paired reading of the raw timestamp source and CLOCK_BOOTTIME, taken as
/// close together as the machine allows (the tightest of several tries).
typedef struct cstrobe_clock_pair {
    uint64_t raw;
    uint64_t boottime_ns;
} cstrobe_clock_pair;

cstrobe_clock_pair cstrobe_read_clock_pair(void);

/// The kernel thread id of the calling thread.
uint64_t cstrobe_thread_id(void);
/// The process id.
uint64_t cstrobe_process_id(void);


/// Fills `out` for the calling thread; returns 0 on success. Where the
/// system has no per-thread rusage it fills in the whole process's.
int cstrobe_thread_rusage(cstrobe_rusage *out);
/// 1 when `cstrobe_thread_rusage` reads the calling thread alone
/// (`RUSAGE_THREAD`), 0 where it falls back to the whole process.
int cstrobe_thread_rusage_is_per_thread(void);
/// Fills `out` for the whole process; returns 0 on success.
int cstrobe_process_rusage(cstrobe_rusage *out);

/// CPU time (user and system) `thread` has used since it started, in
/// nanoseconds, read from outside the thread; 0 when it cannot be read.
/// `thread` must not have been joined.
uint64_t cstrobe_thread_cpu_ns(pthread_t thread);

/// Registers a destructor that runs `callback(context)` when the calling
/// thread exits. Only one per thread; later calls replace the context.
void cstrobe_on_thread_exit(void (*callback)(void *), void *context);

/// Copies the calling thread's name into `buffer` (NUL-terminated).
int cstrobe_thread_name(char *buffer, size_t size);
/// Copies the process's short name into `buffer` (NUL-terminated); it is read
/// once per process.
int cstrobe_process_name(char *buffer, size_t size);

#ifdef __cplusplus
}
#endif

#endif
