#include "CMallocCounter.h"

#include <stddef.h>

#if defined(__linux__) && defined(__GLIBC__)

static uint64_t allocations = 0;

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static inline void count_one(void) { __atomic_fetch_add(&allocations, 1, __ATOMIC_RELAXED); }

void *malloc(size_t size) {
    count_one();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    count_one();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    count_one();
    return __libc_realloc(pointer, size);
}

void free(void *pointer) { __libc_free(pointer); }

void *memalign(size_t alignment, size_t size) {
    count_one();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_one();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    count_one();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) {
        return 12; /* ENOMEM */
    }
    *result = pointer;
    return 0;
}

uint64_t cmalloc_counter_allocations(void) { return __atomic_load_n(&allocations, __ATOMIC_RELAXED); }

int cmalloc_counter_is_active(void) { return 1; }

#else

uint64_t cmalloc_counter_allocations(void) { return 0; }

int cmalloc_counter_is_active(void) { return 0; }

#endif
