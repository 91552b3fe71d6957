// What the CPU profiler's two kinds of sampler share (see CStrobeProfiler.h):
// the sampler's state and the layout of the records they drain. Private to
// CStrobeSampler.c (perf events, and what both do) and
// CStrobeTimerSampler.c (CPU-time timers and their signal handler).

#ifndef CSTROBE_SAMPLER_STATE_H
#define CSTROBE_SAMPLER_STATE_H

#include "CStrobeProfiler.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/// The three words of a record before its frames.
#define SAMPLE_HEADER_WORDS 3

/// The words of a record after its frames, at most: the stack pointer, the
/// frame pointer and the stack words.
#define SAMPLE_UNWIND_WORDS (2 + CSTROBE_SAMPLE_STACK_WORDS)

struct cstrobe_sampler {
    cstrobe_sampler_kind kind;
    int32_t tid;
    // Perf.
    int fd;
    void *mapping;
    size_t mapping_bytes;
    size_t data_bytes;
    uint64_t perf_lost_reported;
    bool perf_reads_lost;  // read() gives the samples the ring had no room for
    bool perf_regs;        // samples carry the user registers
    bool perf_stack;       // samples carry the user stack
    // Timer.
    struct cstrobe_sampler *next_free;
    timer_t timer;
    bool has_timer;
    _Atomic bool live;
    uintptr_t stack_low;
    uintptr_t stack_high;
    uint64_t *ring;
    size_t ring_words;
    _Atomic uint64_t head;  // words written by the handler
    _Atomic uint64_t tail;  // words read by the writer
    _Atomic uint64_t lost;
    uint64_t lost_reported;
};

#if defined(__linux__)

static inline uint64_t cstrobe_boottime_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/// Moves whole records of a timer sampler's ring to `out`.
size_t cstrobe_timer_drain(cstrobe_sampler *sampler, uint64_t *out, size_t capacity, uint64_t *lost);

/// Stops a timer sampler and returns its memory to the pool.
void cstrobe_timer_release(cstrobe_sampler *sampler);

#endif

#endif
