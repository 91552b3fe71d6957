// Counting wrappers around glibc's allocator, and the counting window.
//
// A program that links this file defines malloc and its family itself, so
// the dynamic linker binds every caller in the process (the Swift runtime,
// Foundation, the C library's own users) to these wrappers, which pass each
// call on to glibc's `__libc_*` entry points. Outside a counting window a
// wrapper costs one relaxed load of a flag.
//
// It defines malloc_usable_size too. The Swift runtime sizes an array's
// capacity by it right after allocating the buffer, and glibc's answer
// depends on where the block was placed: a free chunk 16 bytes larger than
// asked for is handed out whole, and a large block is mapped or taken from
// the heap as the mmap threshold moves. An array then grows (allocates
// again) at an iteration that depends on the heap's history, and an exact
// count moves without the code. For the block the calling thread allocated
// last, the answer here is the usable size of a block that fits the
// request exactly, as glibc gives it on a fresh heap (never more than the
// real one); for any other block, glibc's own answer.

// RTLD_NEXT.
#define _GNU_SOURCE

#include "CStrobeCounting.h"
#include "CountingState.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

cstrobe_counting_state cstrobe_counting;

#if CSTROBE_COUNTING_WRAPS

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);
extern void __libc_free(void *pointer);

/// Whether an allocator call from `caller` counts now: the calling thread's
/// work counts, and the call is not the runtime's own cache's.
static inline int counts_call(const void *caller) {
    return cstrobe_counting_counts_here() && !cstrobe_counting_left_out(caller);
}

/// Counts an allocation of `size` bytes that `caller` asked for.
static inline void count_allocation(size_t size, const void *caller) {
    cstrobe_counting_watch_exit();
    if (counts_call(caller)) {
        cstrobe_thread_counts *record = cstrobe_counting_record();
        cstrobe_counting_add(&record->allocations, 1);
        cstrobe_counting_add(&record->allocated_bytes, size);
    }
}

/// Counts a free that `caller` asked for, but for glibc's free of the exit
/// mark's own entry (ThreadExit.c).
static inline void count_free(const void *caller) {
    if (__builtin_expect(cstrobe_counting_exiting == CSTROBE_COUNTING_EXITING_ENTRY, 0)) {
        cstrobe_counting_exiting = 1;
        return;
    }
    if (counts_call(caller)) { cstrobe_counting_add(&cstrobe_counting_record()->frees, 1); }
}

// The block the calling thread allocated last, and the size it asked for.
static __thread void *last_block __attribute__((tls_model("initial-exec")));
static __thread size_t last_request __attribute__((tls_model("initial-exec")));

static inline void *remembered(void *block, size_t size) {
    last_block = block;
    last_request = size;
    return block;
}

void *malloc(size_t size) {
    count_allocation(size, __builtin_return_address(0));
    return remembered(__libc_malloc(size), size);
}

void *calloc(size_t count, size_t size) {
    count_allocation(count * size, __builtin_return_address(0));
    return remembered(__libc_calloc(count, size), count * size);
}

void *realloc(void *pointer, size_t size) {
    if (pointer != NULL) { count_free(__builtin_return_address(0)); }
    // realloc(p, 0) frees p and allocates nothing.
    if (pointer == NULL || size != 0) { count_allocation(size, __builtin_return_address(0)); }
    return remembered(__libc_realloc(pointer, size), size);
}

/// glibc's malloc_usable_size, found once.
static size_t (*_Atomic glibc_usable_size)(void *);

/// What glibc answers for `pointer`: its own function, or, where it cannot
/// be found, the same reading of the chunk's size word (the size less the
/// 8-byte header, 16 for a mapped chunk).
static size_t real_usable_size(void *pointer) {
    size_t (*function)(void *) = atomic_load_explicit(&glibc_usable_size, memory_order_relaxed);
    if (function == NULL) {
        function = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
        if (function != NULL) { atomic_store_explicit(&glibc_usable_size, function, memory_order_relaxed); }
    }
    if (function != NULL) { return function(pointer); }
    size_t word = ((size_t *)pointer)[-1];
    return (word & ~(size_t)7) - ((word & 2) != 0 ? 16 : 8);
}

size_t malloc_usable_size(void *pointer) {
    if (pointer == NULL) { return 0; }
    size_t real = real_usable_size(pointer);
    if (pointer != last_block) { return real; }
    // An exactly fitting chunk: the request and an 8-byte header, rounded
    // up to 16 bytes, at least 32; less the header.
    size_t chunk = (last_request + 8 + 15) & ~(size_t)15;
    if (chunk < 32) { chunk = 32; }
    size_t exact = chunk - 8;
    return exact < real ? exact : real;
}

void free(void *pointer) {
    if (pointer != NULL) { count_free(__builtin_return_address(0)); }
    __libc_free(pointer);
}

void *memalign(size_t alignment, size_t size) {
    count_allocation(size, __builtin_return_address(0));
    return remembered(__libc_memalign(alignment, size), size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_allocation(size, __builtin_return_address(0));
    return remembered(__libc_memalign(alignment, size), size);
}

void *valloc(size_t size) {
    count_allocation(size, __builtin_return_address(0));
    return __libc_valloc(size);
}

void *pvalloc(size_t size) {
    count_allocation(size, __builtin_return_address(0));
    return __libc_pvalloc(size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) { return EINVAL; }
    count_allocation(size, __builtin_return_address(0));
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) { return ENOMEM; }
    *result = remembered(pointer, size);
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
#if defined(__linux__)
    record->tid = (pid_t)syscall(SYS_gettid);
#endif
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
