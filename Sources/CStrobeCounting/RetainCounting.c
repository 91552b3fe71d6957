// Counting retains and releases by wrapping the Swift runtime's entry points.
//
// A program that links this file defines `swift_retain`, `swift_release`,
// `swift_retain_n` and `swift_release_n` itself. Its own Swift code calls
// them directly, and every shared library that calls them through its PLT
// (Foundation, Dispatch) is bound to them by the dynamic linker; each wrapper
// counts inside a window and passes the call on to the runtime's function,
// found with `dlsym(RTLD_NEXT, …)`. The runtime's calls inside libswiftCore
// itself are direct and are not seen. Outside a window a wrapper costs a
// call, a relaxed load of a flag and a jump.
//
// The runtime's own hook variables (`_swift_retain` and its kin, used while
// `_swift_enableSwizzlingOfAllocationAndRefCountingFunctions_forInstrumentsOnly`
// is set) are not used: in the Swift 6.3 runtime for Linux the adapter that
// calls them strips the spare bits of its argument before the call, so a
// tagged value (the payload of a small string) that `swift_retain` would
// ignore reaches the hook, and the runtime's own function behind it, as an
// address, and the process faults.
//
// The wrappers are weak: a program linked with the Swift runtime statically
// keeps the runtime's definitions, and retains are then not counted
// (`cstrobe_counting_retains_available` says so).

#define _GNU_SOURCE
#include "CStrobeCounting.h"
#include "CountingState.h"

#include <dlfcn.h>
#include <stddef.h>

#if CSTROBE_COUNTING_WRAPS

typedef void *(*retain_function)(void *object);
typedef void (*release_function)(void *object);
typedef void *(*retain_n_function)(void *object, uint32_t count);
typedef void (*release_n_function)(void *object, uint32_t count);

/// The runtime's functions, looked up at the first call of each wrapper
/// (a call may come before any constructor of this program has run).
static _Atomic(retain_function) real_retain;
static _Atomic(release_function) real_release;
static _Atomic(retain_n_function) real_retain_n;
static _Atomic(release_n_function) real_release_n;

static void *next_definition(const char *name) { return dlsym(RTLD_NEXT, name); }

/// Whether `object` is one the runtime would retain: it ignores null, and
/// on x86-64 the negative (tagged) values too.
static inline int is_counted_object(void *object) {
#if defined(__x86_64__)
    return (intptr_t)object > 0;
#else
    return object != NULL;
#endif
}

#define LOOK_UP(variable, type, name)                                                                                  \
    type function = atomic_load_explicit(&variable, memory_order_relaxed);                                             \
    if (__builtin_expect(function == NULL, 0)) {                                                                       \
        function = (type)next_definition(name);                                                                        \
        atomic_store_explicit(&variable, function, memory_order_relaxed);                                              \
    }

__attribute__((weak)) void *swift_retain(void *object) {
    if (is_counted_object(object) && cstrobe_counting_counts_retains_here()) {
        cstrobe_counting_add(&cstrobe_counting_record()->retains, 1);
    }
    LOOK_UP(real_retain, retain_function, "swift_retain")
    return function(object);
}

__attribute__((weak)) void swift_release(void *object) {
    if (is_counted_object(object) && cstrobe_counting_counts_retains_here()) {
        cstrobe_counting_add(&cstrobe_counting_record()->releases, 1);
    }
    LOOK_UP(real_release, release_function, "swift_release")
    function(object);
}

__attribute__((weak)) void *swift_retain_n(void *object, uint32_t count) {
    if (is_counted_object(object) && cstrobe_counting_counts_retains_here()) {
        cstrobe_counting_add(&cstrobe_counting_record()->retains, count);
    }
    LOOK_UP(real_retain_n, retain_n_function, "swift_retain_n")
    return function(object, count);
}

__attribute__((weak)) void swift_release_n(void *object, uint32_t count) {
    if (is_counted_object(object) && cstrobe_counting_counts_retains_here()) {
        cstrobe_counting_add(&cstrobe_counting_record()->releases, count);
    }
    LOOK_UP(real_release_n, release_n_function, "swift_release_n")
    function(object, count);
}

int cstrobe_counting_retains_available(void) {
    // The wrappers are in effect when the definitions this program uses are
    // not the runtime's, and the runtime's come after them.
    void *runtime = next_definition("swift_retain");
    return runtime != NULL && runtime != (void *)&swift_retain && next_definition("swift_release") != NULL &&
           next_definition("swift_release") != (void *)&swift_release;
}

#else

int cstrobe_counting_retains_available(void) { return 0; }

#endif
