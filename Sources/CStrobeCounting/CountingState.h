// The state the allocation and retain wrappers share: the window's switch,
// the excluded thread and the counters. Not part of the public header.

#ifndef CSTROBE_COUNTING_STATE_H
#define CSTROBE_COUNTING_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct cstrobe_counting_state {
    /// Non-zero while a window is open.
    _Atomic int open;
    /// Non-zero when `excluded` names a thread whose work is not counted.
    _Atomic int has_excluded;
    pthread_t excluded;
    /// Non-zero when the window counts retains and releases.
    _Atomic int count_retains;
    _Atomic uint64_t allocations;
    _Atomic uint64_t allocated_bytes;
    _Atomic uint64_t frees;
    _Atomic uint64_t retains;
    _Atomic uint64_t releases;
} cstrobe_counting_state;

extern cstrobe_counting_state cstrobe_counting;

/// Whether the calling thread's work counts now: a window is open and the
/// thread is not the excluded one. One relaxed load when no window is open.
static inline int cstrobe_counting_counts_here(void) {
    if (__builtin_expect(!atomic_load_explicit(&cstrobe_counting.open, memory_order_relaxed), 1)) {
        return 0;
    }
    if (atomic_load_explicit(&cstrobe_counting.has_excluded, memory_order_relaxed) &&
        pthread_equal(pthread_self(), cstrobe_counting.excluded)) {
        return 0;
    }
    return 1;
}

/// Whether the calling thread's retains and releases count now.
static inline int cstrobe_counting_counts_retains_here(void) {
    return cstrobe_counting_counts_here() &&
           atomic_load_explicit(&cstrobe_counting.count_retains, memory_order_relaxed);
}

static inline void cstrobe_counting_add(_Atomic uint64_t *counter, uint64_t amount) {
    atomic_fetch_add_explicit(counter, amount, memory_order_relaxed);
}

#endif
