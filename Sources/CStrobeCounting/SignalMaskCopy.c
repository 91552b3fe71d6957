// sigsuspend with a writable copy of the mask.
//
// libdispatch's main loop (`dispatch_main`, which an asynchronous Swift main
// ends in) hands sigsuspend a signal mask in read-only memory. That is
// allowed, but the Valgrind of Debian 12 (3.19) writes into the mask it is
// given and stops with an internal error, so no suite with an asynchronous
// main could run under simulation. A program that links this file defines
// sigsuspend itself, and the dynamic linker binds libdispatch's call to it;
// it passes glibc's own entry point a copy of the mask, which behaves the
// same everywhere.

#include <signal.h>

#if defined(__linux__) && defined(__GLIBC__)

extern int __sigsuspend(const sigset_t *mask);

int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return __sigsuspend(&copy);
}

#endif
