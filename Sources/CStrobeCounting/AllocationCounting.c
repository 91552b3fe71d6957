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

cstrobe_counting_state cstrobe_counting;

#if defined(__linux__) && defined(__GLIBC__)

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);
extern void __libc_free(void *pointer);

static inline void count_allocation(size_t size) {
    if (cstrobe_counting_counts_here()) {
        cstrobe_counting_add(&cstrobe_counting.allocations, 1);
        cstrobe_counting_add(&cstrobe_counting.allocated_bytes, size);
    }
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
    if (pointer != NULL && cstrobe_counting_counts_here()) {
        cstrobe_counting_add(&cstrobe_counting.frees, 1);
    }
    // realloc(p, 0) frees p and allocates nothing.
    if (pointer == NULL || size != 0) { count_allocation(size); }
    return __libc_realloc(pointer, size);
}

void free(void *pointer) {
    if (pointer != NULL && cstrobe_counting_counts_here()) {
        cstrobe_counting_add(&cstrobe_counting.frees, 1);
    }
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

void cstrobe_counting_begin(pthread_t excluded, int has_excluded, int count_retains) {
    atomic_store_explicit(&cstrobe_counting.open, 0, memory_order_relaxed);
    atomic_store_explicit(&cstrobe_counting.allocations, 0, memory_order_relaxed);
    atomic_store_explicit(&cstrobe_counting.allocated_bytes, 0, memory_order_relaxed);
    atomic_store_explicit(&cstrobe_counting.frees, 0, memory_order_relaxed);
    atomic_store_explicit(&cstrobe_counting.retains, 0, memory_order_relaxed);
    atomic_store_explicit(&cstrobe_counting.releases, 0, memory_order_relaxed);
    cstrobe_counting.excluded = excluded;
    atomic_store_explicit(&cstrobe_counting.has_excluded, has_excluded != 0, memory_order_relaxed);
    atomic_store_explicit(&cstrobe_counting.count_retains, count_retains != 0, memory_order_relaxed);
    // Everything above is visible to a thread that sees the window open.
    atomic_store_explicit(&cstrobe_counting.open, 1, memory_order_seq_cst);
}

cstrobe_counts cstrobe_counting_end(void) {
    atomic_store_explicit(&cstrobe_counting.open, 0, memory_order_seq_cst);
    cstrobe_counts counts;
    counts.allocations = atomic_load_explicit(&cstrobe_counting.allocations, memory_order_relaxed);
    counts.allocated_bytes = atomic_load_explicit(&cstrobe_counting.allocated_bytes, memory_order_relaxed);
    counts.frees = atomic_load_explicit(&cstrobe_counting.frees, memory_order_relaxed);
    counts.retains = atomic_load_explicit(&cstrobe_counting.retains, memory_order_relaxed);
    counts.releases = atomic_load_explicit(&cstrobe_counting.releases, memory_order_relaxed);
    return counts;
}

int cstrobe_counting_is_open(void) { return atomic_load_explicit(&cstrobe_counting.open, memory_order_relaxed); }
