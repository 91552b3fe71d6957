// Counting wrappers around glibc's allocator, and the counting window.
//
// A program that links this file defines malloc and its family itself, so
// the dynamic linker binds every caller in the process (the Swift runtime,
// Foundation, the C library's own users) to these wrappers, which pass each
// call on to glibc's `__libc_*` entry points. Outside a counting window a
// wrapper costs one relaxed load of a flag.

#include "CStrobeCounting.h"
#include "CountingState.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

cstrobe_counting_state cstrobe_counting;

#if CSTROBE_COUNTING_WRAPS

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);
extern void __libc_free(void *pointer);

static inline void count_allocation(size_t size) {
    if (cstrobe_counting_counts_here()) {
        cstrobe_thread_counts *record = cstrobe_counting_record();
        cstrobe_counting_add(&record->allocations, 1);
        cstrobe_counting_add(&record->allocated_bytes, size);
    }
}

static inline void count_free(void) {
    if (cstrobe_counting_counts_here()) { cstrobe_counting_add(&cstrobe_counting_record()->frees, 1); }
}

void *malloc(size_t size) {
    count_allocation(size);
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    count_allocation(count * size);
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    if (pointer != NULL) { count_free(); }
    // realloc(p, 0) frees p and allocates nothing.
    if (pointer == NULL || size != 0) { count_allocation(size); }
    return __libc_realloc(pointer, size);
}

void free(void *pointer) {
    if (pointer != NULL) { count_free(); }
    __libc_free(pointer);
}

void *memalign(size_t alignment, size_t size) {
    count_allocation(size);
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_allocation(size);
    return __libc_memalign(alignment, size);
}

void *valloc(size_t size) {
    count_allocation(size);
    return __libc_valloc(size);
}

void *pvalloc(size_t size) {
    count_allocation(size);
    return __libc_pvalloc(size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) { return EINVAL; }
    count_allocation(size);
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) { return ENOMEM; }
    *result = pointer;
    return 0;
}

int cstrobe_counting_allocations_available(void) { return 1; }

#else

int cstrobe_counting_allocations_available(void) { return 0; }

#endif

__thread cstrobe_thread_counts *cstrobe_counting_mine __attribute__((tls_model("initial-exec")));

cstrobe_thread_counts *cstrobe_counting_register_thread(void) {
    // Straight from the allocator, uncounted; never freed, so the counts of
    // a thread that exits stay readable.
#if CSTROBE_COUNTING_WRAPS
    cstrobe_thread_counts *record = __libc_calloc(1, sizeof(cstrobe_thread_counts));
#else
    cstrobe_thread_counts *record = calloc(1, sizeof(cstrobe_thread_counts));
#endif
    if (record == NULL) { abort(); }
    cstrobe_thread_counts *head = atomic_load_explicit(&cstrobe_counting.threads, memory_order_relaxed);
    do {
        record->next = head;
    } while (!atomic_compare_exchange_weak_explicit(&cstrobe_counting.threads, &head, record, memory_order_release,
                                                    memory_order_relaxed));
    cstrobe_counting_mine = record;
    return record;
}

void cstrobe_counting_begin(int leaves_out_strobe, int count_retains) {
    atomic_store_explicit(&cstrobe_counting.open, 0, memory_order_seq_cst);
    for (cstrobe_thread_counts *record = atomic_load_explicit(&cstrobe_counting.threads, memory_order_acquire);
         record != NULL; record = record->next) {
        atomic_store_explicit(&record->allocations, 0, memory_order_relaxed);
        atomic_store_explicit(&record->allocated_bytes, 0, memory_order_relaxed);
        atomic_store_explicit(&record->frees, 0, memory_order_relaxed);
        atomic_store_explicit(&record->retains, 0, memory_order_relaxed);
        atomic_store_explicit(&record->releases, 0, memory_order_relaxed);
    }
    atomic_store_explicit(&cstrobe_counting.leaves_out_strobe, leaves_out_strobe != 0, memory_order_relaxed);
    atomic_store_explicit(&cstrobe_counting.count_retains, count_retains != 0, memory_order_relaxed);
    // Everything above is visible to a thread that sees the window open.
    atomic_store_explicit(&cstrobe_counting.open, 1, memory_order_seq_cst);
}

cstrobe_counts cstrobe_counting_end(void) {
    atomic_store_explicit(&cstrobe_counting.open, 0, memory_order_seq_cst);
    cstrobe_counts counts = {0, 0, 0, 0, 0};
    for (cstrobe_thread_counts *record = atomic_load_explicit(&cstrobe_counting.threads, memory_order_acquire);
         record != NULL; record = record->next) {
        counts.allocations += atomic_load_explicit(&record->allocations, memory_order_relaxed);
        counts.allocated_bytes += atomic_load_explicit(&record->allocated_bytes, memory_order_relaxed);
        counts.frees += atomic_load_explicit(&record->frees, memory_order_relaxed);
        counts.retains += atomic_load_explicit(&record->retains, memory_order_relaxed);
        counts.releases += atomic_load_explicit(&record->releases, memory_order_relaxed);
    }
    return counts;
}

int cstrobe_counting_is_open(void) { return atomic_load_explicit(&cstrobe_counting.open, memory_order_relaxed); }
