// Counts heap allocations made by the process, for the benchmarks' figure of
// allocations per event. Linking this target replaces malloc and friends with
// counting wrappers around glibc's allocator.

#ifndef CMALLOC_COUNTER_H
#define CMALLOC_COUNTER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Allocations (malloc, calloc, realloc, aligned variants) since start-up.
uint64_t cmalloc_counter_allocations(void);

/// Whether the counting wrappers are active on this platform.
int cmalloc_counter_is_active(void);

#ifdef __cplusplus
}
#endif

#endif
