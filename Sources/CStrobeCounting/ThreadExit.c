// Which thread is exiting, for the counting windows.
//
// A thread that ends runs destructors: its thread-local objects', then its
// thread-specific data's (pthread keys: Foundation's run loop, libdispatch's
// cache of continuations), then glibc frees its allocator cache. An idle
// worker of a thread pool ends when its timeout falls, which can be inside a
// window of a test that never used it; under emulation, where a process
// runs 20 to 90 times slower, `capture frame` counted 5 allocations, 21
// frees and 19 releases in 1 of 9 iterations from a worker's run loop freed
// at its exit. So each thread that calls the allocator registers, once, a
// thread-local destructor that marks it exiting; glibc runs those before
// the thread-specific data's. An exiting thread that counted nothing in the
// open window counts nothing more: its exit is the runtime's, not the
// test's. A thread of the test's that worked in the window and ends in it
// is still counted to its end.

#include "CStrobeCounting.h"
#include "CountingState.h"

__thread char cstrobe_counting_exiting __attribute__((tls_model("initial-exec")));

__thread char cstrobe_counting_exit_watched __attribute__((tls_model("initial-exec")));

#if CSTROBE_COUNTING_WRAPS

/// glibc's registration of a thread-local destructor (C++'s thread_local
/// objects use it), run at the thread's exit before its pthread keys'.
extern int __cxa_thread_atexit_impl(void (*destructor)(void *), void *object, void *dso);
extern void *__dso_handle;

static void mark_exiting(void *unused) {
    (void)unused;
    // glibc frees the registration's entry right after this returns: the
    // thread's next free is Strobe's own (CSTROBE_COUNTING_EXITING_ENTRY).
    cstrobe_counting_exiting = CSTROBE_COUNTING_EXITING_ENTRY;
}

void cstrobe_counting_watch_exit_slow(void) {
    // Marked first: the registration allocates, and comes back here. Its
    // entry is Strobe's own work, not the test's, when a thread first
    // allocates inside a window.
    cstrobe_counting_exit_watched = 1;
    cstrobe_own_work_depth++;
    __cxa_thread_atexit_impl(mark_exiting, NULL, &__dso_handle);
    cstrobe_own_work_depth--;
}

#else

void cstrobe_counting_watch_exit_slow(void) { cstrobe_counting_exit_watched = 1; }

#endif
