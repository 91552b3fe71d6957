// The run-time state of trace categories: one word per category, read on the
// recording hot path. Kept apart from CStrobeRuntime.h; see TraceCategory.swift.

#ifndef CSTROBE_CATEGORIES_H
#define CSTROBE_CATEGORIES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// How many categories a process may name (slot 0 included).
#define CSTROBE_CATEGORY_LIMIT 1024

/// Per category: the generation of the running session when the session
/// records the category, else 0. One relaxed load tells an event in a
/// category both whether a session runs and whether it wants the event.
extern uint64_t _Atomic cstrobe_category_generations[CSTROBE_CATEGORY_LIMIT];

static inline uint64_t cstrobe_category_generation(uint32_t index) {
    return __atomic_load_n((uint64_t *)&cstrobe_category_generations[index & (CSTROBE_CATEGORY_LIMIT - 1)],
                           __ATOMIC_RELAXED);
}

static inline void cstrobe_set_category_generation(uint32_t index, uint64_t generation) {
    __atomic_store_n((uint64_t *)&cstrobe_category_generations[index & (CSTROBE_CATEGORY_LIMIT - 1)], generation,
                     __ATOMIC_SEQ_CST);
}

#ifdef __cplusplus
}
#endif

#endif
