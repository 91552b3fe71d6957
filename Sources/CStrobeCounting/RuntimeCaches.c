// The code of the runtime's own caches, whose allocator calls no window
// counts.
//
// libdispatch keeps a cache of continuations (the records of queued work
// items) per thread: a thread takes one from its own cache and frees one
// into the cache of whichever thread ran it. Only when a thread's cache is
// empty does it call the allocator (`_dispatch_continuation_alloc_from_heap`),
// so whether an iteration of a `concurrentPerform`, a task group or a
// `DispatchQueue.async` calls calloc once, twice or not at all follows which
// thread ran which work item the times before, not the code: 3 or 4
// allocations per iteration of the same `concurrentPerform`, 18 to 26 of the
// same task group; and an idle worker thread that exits frees its cache
// whenever its timeout falls (2 frees of blocks from before the window, in
// 3 of 200 iterations of a single-threaded test). Those calls are found by
// the caller's address (the function's extent in the library's symbol
// table, placed where the library is loaded) and left out; what the code
// allocates itself through libdispatch (a queue, a group, a copied block)
// still counts. A continuation freed to the heap because a thread's cache is
// full is not found this way (the free is a tail call from many places).

// dl_iterate_phdr.
#define _GNU_SOURCE

#include "CStrobeCounting.h"
#include "CStrobeProfiler.h"
#include "CountingState.h"

#include <string.h>

uintptr_t cstrobe_counting_left_out_start[CSTROBE_COUNTING_LEFT_OUT_CAPACITY];
uintptr_t cstrobe_counting_left_out_end[CSTROBE_COUNTING_LEFT_OUT_CAPACITY];
_Atomic int cstrobe_counting_left_out_count;

#if defined(__linux__)

#include <link.h>

/// A library and a function of it whose allocator calls are left out.
typedef struct {
    const char *library;
    const char *function;
} cache_function;

static const cache_function cache_functions[] = {
    // A thread's cache refilled from the heap.
    {"libdispatch.so", "_dispatch_continuation_alloc_from_heap"},
    // The cache of a thread that exits, freed (an idle worker thread of the
    // pool ends whenever its timeout falls, inside a window or not).
    {"libdispatch.so", "_dispatch_cache_cleanup"},
};

/// Whether `path`'s file name starts with `library` ("libdispatch.so" for
/// ".../libdispatch.so" and ".../libdispatch.so.1").
static int names_library(const char *path, const char *library) {
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    return strncmp(name, library, strlen(library)) == 0;
}

static int add_library(struct dl_phdr_info *info, size_t size, void *context) {
    (void)size, (void)context;
    if (!info->dlpi_name || !info->dlpi_name[0]) return 0;
    cstrobe_elf_symbols *symbols = NULL;
    for (size_t i = 0; i < sizeof cache_functions / sizeof cache_functions[0]; i++) {
        if (!names_library(info->dlpi_name, cache_functions[i].library)) continue;
        if (!symbols) symbols = cstrobe_elf_symbols_load(info->dlpi_name);
        uint64_t address = 0, extent = 0;
        int count = atomic_load_explicit(&cstrobe_counting_left_out_count, memory_order_relaxed);
        if (!symbols || count == CSTROBE_COUNTING_LEFT_OUT_CAPACITY ||
            !cstrobe_elf_symbols_find(symbols, cache_functions[i].function, &address, &extent) || extent == 0)
            continue;
        cstrobe_counting_left_out_start[count] = (uintptr_t)(info->dlpi_addr + address);
        cstrobe_counting_left_out_end[count] = (uintptr_t)(info->dlpi_addr + address + extent);
        atomic_store_explicit(&cstrobe_counting_left_out_count, count + 1, memory_order_release);
    }
    cstrobe_elf_symbols_free(symbols);
    return 0;
}

int cstrobe_counting_leave_out_runtime_caches(void) {
    static _Atomic int found = -1;
    int known = atomic_load_explicit(&found, memory_order_acquire);
    if (known >= 0) return known;
    // Found once, before any window opens: loading a symbol table allocates.
    dl_iterate_phdr(add_library, NULL);
    known = atomic_load_explicit(&cstrobe_counting_left_out_count, memory_order_relaxed);
    atomic_store_explicit(&found, known, memory_order_release);
    return known;
}

#else

int cstrobe_counting_leave_out_runtime_caches(void) { return 0; }

#endif
