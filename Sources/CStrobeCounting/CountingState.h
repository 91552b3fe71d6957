// The state the allocation and retain wrappers share: the window's switch,
// whether Strobe's own work is left out, and each thread's counts. Not part
// of the public header.

#ifndef CSTROBE_COUNTING_STATE_H
#define CSTROBE_COUNTING_STATE_H

// Whether this build wraps the allocator and the retains. A sanitizer brings
// an allocator and interceptors of its own, which wrappers that go straight
// to glibc would bypass (memory from one allocator freed by the other), so
// a sanitized build counts nothing and says so through the *_available()
// functions.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CSTROBE_COUNTING_WRAPS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define CSTROBE_COUNTING_WRAPS 0
#endif
#endif
#ifndef CSTROBE_COUNTING_WRAPS
#if defined(__linux__) && defined(__GLIBC__)
#define CSTROBE_COUNTING_WRAPS 1
#else
#define CSTROBE_COUNTING_WRAPS 0
#endif
#endif

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

/// One thread's counts in the open window. Only its thread adds to them
/// (a plain load and store, no locked instruction); the thread that closes
/// the window reads them. The record outlives its thread, so the counts of a
/// thread that exits during the window are kept.
typedef struct cstrobe_thread_counts {
    _Atomic uint64_t allocations;
    _Atomic uint64_t allocated_bytes;
    _Atomic uint64_t frees;
    _Atomic uint64_t retains;
    _Atomic uint64_t releases;
    /// The thread's kernel id, for reading its state (0 when not known).
    pid_t tid;
    /// The thread's CPU time when the closing window last saw it running,
    /// in nanoseconds (-1: not seen running); only the thread that closes
    /// the window writes it.
    int64_t settle_cpu;
    /// The record of the thread that counted before this one.
    struct cstrobe_thread_counts *next;
} cstrobe_thread_counts;

typedef struct cstrobe_counting_state {
    /// Non-zero while a window is open.
    _Atomic int open;
    /// Non-zero when Strobe's own work (`cstrobe_own_work_depth`) is not
    /// counted.
    _Atomic int leaves_out_strobe;
    /// Non-zero when the window counts retains and releases.
    _Atomic int count_retains;
    /// Every thread's record, newest first; records are never removed.
    _Atomic(cstrobe_thread_counts *) threads;
} cstrobe_counting_state;

extern cstrobe_counting_state cstrobe_counting;

/// Strobe's mark of its own work on the calling thread (CStrobe's
/// CStrobeRuntime.h): non-zero on the session's writer, and on an app's
/// thread while Strobe does its bookkeeping there.
extern __thread unsigned cstrobe_own_work_depth __attribute__((tls_model("initial-exec")));

/// The calling thread's record, made the first time it counts.
extern __thread cstrobe_thread_counts *cstrobe_counting_mine __attribute__((tls_model("initial-exec")));

/// Makes the calling thread's record and adds it to the list.
cstrobe_thread_counts *cstrobe_counting_register_thread(void);

/// The most code ranges whose allocator calls are left out.
#define CSTROBE_COUNTING_LEFT_OUT_CAPACITY 8

/// The code ranges whose allocator calls no window counts (the runtime's
/// own caches, RuntimeCaches.c): `[start, end)` of each of the first
/// `cstrobe_counting_left_out_count`, written once before any window opens.
extern uintptr_t cstrobe_counting_left_out_start[CSTROBE_COUNTING_LEFT_OUT_CAPACITY];
extern uintptr_t cstrobe_counting_left_out_end[CSTROBE_COUNTING_LEFT_OUT_CAPACITY];
extern _Atomic int cstrobe_counting_left_out_count;

/// Whether `caller`, the return address of an allocator call, lies in code
/// whose calls are left out.
static inline int cstrobe_counting_left_out(const void *caller) {
    int count = atomic_load_explicit(&cstrobe_counting_left_out_count, memory_order_acquire);
    uintptr_t address = (uintptr_t)caller;
    for (int i = 0; i < count; i++) {
        if (address >= cstrobe_counting_left_out_start[i] && address < cstrobe_counting_left_out_end[i]) return 1;
    }
    return 0;
}

/// Non-zero on a thread that is exiting: its thread-local destructors have
/// begun (ThreadExit.c). `CSTROBE_COUNTING_EXITING_ENTRY` until glibc has
/// freed the entry of the destructor that set it, then 1.
extern __thread char cstrobe_counting_exiting __attribute__((tls_model("initial-exec")));

/// The exit mark while its own entry's free is still to come.
#define CSTROBE_COUNTING_EXITING_ENTRY 2

/// Non-zero once the calling thread registered the destructor that marks
/// its exit (ThreadExit.c).
extern __thread char cstrobe_counting_exit_watched __attribute__((tls_model("initial-exec")));

/// Registers the calling thread's exit mark.
void cstrobe_counting_watch_exit_slow(void);

/// Registers the calling thread's exit mark the first time it is called on
/// a thread (the allocator's wrappers call it); one thread-local load after.
static inline void cstrobe_counting_watch_exit(void) {
    if (__builtin_expect(!cstrobe_counting_exit_watched, 0)) { cstrobe_counting_watch_exit_slow(); }
}

/// Whether `record` counted anything in the open window.
static inline int cstrobe_counting_record_counted(cstrobe_thread_counts *record) {
    return atomic_load_explicit(&record->allocations, memory_order_relaxed) != 0 ||
           atomic_load_explicit(&record->frees, memory_order_relaxed) != 0 ||
           atomic_load_explicit(&record->retains, memory_order_relaxed) != 0 ||
           atomic_load_explicit(&record->releases, memory_order_relaxed) != 0;
}

/// Whether the calling thread's work counts now: a window is open; when the
/// window leaves Strobe's own work out, the thread is not doing it; and the
/// thread is not exiting without having counted in the window (an idle pool
/// thread whose timeout fell: its destructors free what it kept, whenever
/// that is). One relaxed load when no window is open.
static inline int cstrobe_counting_counts_here(void) {
    if (__builtin_expect(!atomic_load_explicit(&cstrobe_counting.open, memory_order_relaxed), 1)) {
        return 0;
    }
    if (cstrobe_own_work_depth != 0 &&
        atomic_load_explicit(&cstrobe_counting.leaves_out_strobe, memory_order_relaxed)) {
        return 0;
    }
    if (__builtin_expect(cstrobe_counting_exiting, 0) &&
        (cstrobe_counting_mine == NULL || !cstrobe_counting_record_counted(cstrobe_counting_mine))) {
        return 0;
    }
    return 1;
}

/// Whether the calling thread's retains and releases count now.
static inline int cstrobe_counting_counts_retains_here(void) {
    return cstrobe_counting_counts_here() &&
           atomic_load_explicit(&cstrobe_counting.count_retains, memory_order_relaxed);
}

/// The calling thread's record (call only when it counts).
static inline cstrobe_thread_counts *cstrobe_counting_record(void) {
    cstrobe_thread_counts *record = cstrobe_counting_mine;
    return __builtin_expect(record != NULL, 1) ? record : cstrobe_counting_register_thread();
}

/// Adds to a counter of the calling thread's own record.
static inline void cstrobe_counting_add(_Atomic uint64_t *counter, uint64_t amount) {
    uint64_t value = atomic_load_explicit(counter, memory_order_relaxed);
    atomic_store_explicit(counter, value + amount, memory_order_relaxed);
}

#endif
