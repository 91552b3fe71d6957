// The fatal-signal handler of crash capture: installing it, the handler,
// and the threads' alternate stacks. Everything it touches is allocated when
// a session installs it; it takes no lock, allocates nothing and calls only
// async-signal-safe functions (open, write, close, sigaction, clock_gettime,
// syscall). The crash file itself is written by CStrobeCrashWriter.c. See
// CStrobeCrash.h.

#define _GNU_SOURCE
#include "CStrobeCrash.h"
#include "CStrobeCrashState.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#define FATAL_SIGNAL_COUNT 6
static const int fatal_signals[FATAL_SIGNAL_COUNT] = {SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE, SIGTRAP};

/// The action each signal had before the handler was first installed; kept
/// for the life of the process, because a handler installed over ours may
/// still call ours after the session ends.
static struct sigaction previous_actions[NSIG];
/// Whether our handler is (or may still be reached as) the action of a signal.
static int handler_installed[NSIG];

/// 0: not armed, 1: armed, 2: a crash is being written.
static int armed = 0;
/// The thread writing the crash file, 0 before a crash.
static uint64_t writer_thread = 0;
static int writing_done = 0;

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;

// The state the writer reads at a crash (CStrobeCrashState.h), set up here
// when a session installs the handler.
char *cstrobe_crash_path = NULL;
cstrobe_crash_header cstrobe_crash_header_template;
uint8_t *cstrobe_crash_metadata = NULL;
uint64_t cstrobe_crash_metadata_length = 0;
uint64_t *cstrobe_crash_scratch = NULL;
uint64_t cstrobe_crash_scratch_words = 0;
uint8_t *cstrobe_crash_output = NULL;
uint64_t *cstrobe_crash_seen_names = NULL;
cstrobe_crash_thread *cstrobe_crash_threads = NULL;

// MARK: - The handler

static void crash_handler(int signal, siginfo_t *info, void *context);

/// Hands the signal to the action that was installed before ours: restores
/// it, then lets a fault happen again on return (the faulting instruction
/// runs again) or sends the same signal, with the same information, again.
static void chain(int signal, siginfo_t *info, void *context) {
    struct sigaction *previous = &previous_actions[signal];
    struct sigaction current;
    if (sigaction(signal, NULL, &current) == 0
        && !((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == crash_handler)) {
        // A handler installed over ours called us: call the one before us
        // in turn, and leave the rest to the caller.
        if (previous->sa_flags & SA_SIGINFO) {
            if (previous->sa_sigaction != NULL) previous->sa_sigaction(signal, info, context);
        } else if (previous->sa_handler != SIG_DFL && previous->sa_handler != SIG_IGN) {
            previous->sa_handler(signal);
        }
        return;
    }
    sigaction(signal, previous, NULL);
    handler_installed[signal] = 0;
    // A fault raised by the processor repeats when the handler returns; a
    // trap (int3 on x86) would not, and sent signals never do.
    if (info != NULL && info->si_code > 0 && signal != SIGTRAP && signal != SIGABRT) return;
#if defined(__linux__)
    if (info != NULL
        && syscall(SYS_rt_tgsigqueueinfo, getpid(), (pid_t)cstrobe_crash_current_thread_id(), signal, info) == 0) {
        return;
    }
    syscall(SYS_tgkill, getpid(), (pid_t)cstrobe_crash_current_thread_id(), signal);
#else
    raise(signal);
#endif
}

static void crash_handler(int signal, siginfo_t *info, void *context) {
    int saved_errno = errno;
    uint64_t self = cstrobe_crash_current_thread_id();
    uint64_t none = 0;
    if (__atomic_compare_exchange_n(&writer_thread, &none, self, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        int expected = 1;
        if (__atomic_compare_exchange_n(&armed, &expected, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            // si_addr means something only for a fault the processor raised.
            uint64_t address = info != NULL && info->si_code > 0 ? (uint64_t)(uintptr_t)info->si_addr : 0;
            cstrobe_crash_write_file(signal, info != NULL ? info->si_code : 0, address, self);
        }
        __atomic_store_n(&writing_done, 1, __ATOMIC_RELEASE);
    } else if (none != self) {
        // Another thread is writing the file: let it finish before this
        // thread's signal ends the process.
        struct timespec pause = {0, 1000000};
        for (int waited = 0; waited < 5000 && !__atomic_load_n(&writing_done, __ATOMIC_ACQUIRE); waited++) {
            nanosleep(&pause, NULL);
        }
    }
    // Else: a fault inside the handler itself, which gives up the file.
    chain(signal, info, context);
    errno = saved_errno;
}

int cstrobe_crash_write_now(int signal, uint64_t address) {
    if (__atomic_load_n(&armed, __ATOMIC_ACQUIRE) != 1) return EINVAL;
    return cstrobe_crash_write_file(signal, 0, address, cstrobe_crash_current_thread_id());
}

// MARK: - Installing

// Frees the buffers the handler writes with; only under install_lock, while
// no handler is armed.
static void free_handler_buffers(void) {
    free(cstrobe_crash_path);
    free(cstrobe_crash_scratch);
    free(cstrobe_crash_output);
    free(cstrobe_crash_seen_names);
    free(cstrobe_crash_metadata);
    cstrobe_crash_metadata = NULL;
    cstrobe_crash_metadata_length = 0;
    cstrobe_crash_path = NULL;
    cstrobe_crash_scratch = NULL;
    cstrobe_crash_output = NULL;
    cstrobe_crash_seen_names = NULL;
    cstrobe_crash_scratch_words = 0;
}

/// After a signal that the process survived (a handler installed over ours
/// called ours, then returned): the write it started has finished, so the
/// handler is free for the next session. Only under install_lock.
static void forget_survived_signal(void) {
    if (__atomic_load_n(&writer_thread, __ATOMIC_ACQUIRE) == 0) return;
    if (!__atomic_load_n(&writing_done, __ATOMIC_ACQUIRE)) return;
    int expected = 2;
    __atomic_compare_exchange_n(&armed, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    __atomic_store_n(&writing_done, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&writer_thread, 0, __ATOMIC_RELEASE);
}

int cstrobe_crash_install(const cstrobe_crash_config *config) {
    pthread_mutex_lock(&install_lock);
    forget_survived_signal();
    if (__atomic_load_n(&armed, __ATOMIC_ACQUIRE) != 0 || __atomic_load_n(&writer_thread, __ATOMIC_ACQUIRE) != 0) {
        pthread_mutex_unlock(&install_lock);
        return EBUSY;
    }
    cstrobe_crash_path = strdup(config->path);
    cstrobe_crash_scratch_words = config->chunk_words;
    cstrobe_crash_scratch = malloc(cstrobe_crash_scratch_words * 8);
    cstrobe_crash_output = malloc(CSTROBE_CRASH_OUTPUT_CAPACITY);
    cstrobe_crash_seen_names = calloc(CSTROBE_CRASH_SEEN_CAPACITY, 8);
    if (config->metadata != NULL && config->metadata_bytes > 0) {
        cstrobe_crash_metadata = malloc(config->metadata_bytes);
        if (cstrobe_crash_metadata != NULL) {
            memcpy(cstrobe_crash_metadata, config->metadata, config->metadata_bytes);
            cstrobe_crash_metadata_length = config->metadata_bytes;
        }
    }
    if (cstrobe_crash_path == NULL || cstrobe_crash_scratch == NULL || cstrobe_crash_output == NULL
        || cstrobe_crash_seen_names == NULL || (config->metadata_bytes > 0 && cstrobe_crash_metadata == NULL)) {
        free_handler_buffers();
        pthread_mutex_unlock(&install_lock);
        return ENOMEM;
    }
    // Touch the buffers now, so that the handler takes no page fault on them.
    memset(cstrobe_crash_scratch, 0, cstrobe_crash_scratch_words * 8);
    memset(cstrobe_crash_output, 0, CSTROBE_CRASH_OUTPUT_CAPACITY);
    memset(&cstrobe_crash_header_template, 0, sizeof(cstrobe_crash_header_template));
    // Version 2 only when the file carries the METADATA section, so that a
    // reader of version 1 still reads a file without it.
    cstrobe_crash_header_template.version =
        cstrobe_crash_metadata_length > 0 ? CSTROBE_CRASH_VERSION : CSTROBE_CRASH_VERSION_FIRST;
    cstrobe_crash_header_template.header_bytes = sizeof(cstrobe_crash_header_template);
    cstrobe_crash_header_template.process_id = (uint64_t)getpid();
    cstrobe_crash_header_template.timestamp_is_tsc =
        (uint64_t)__atomic_load_n((int *)&cstrobe_timestamp_source_is_tsc, __ATOMIC_RELAXED);
    cstrobe_crash_header_template.base_raw = config->base_raw;
    cstrobe_crash_header_template.base_boottime_ns = config->base_boottime_ns;
    cstrobe_crash_header_template.buffer_bytes = config->buffer_bytes;
    if (config->process_name != NULL) {
        strncpy(cstrobe_crash_header_template.process_name, config->process_name,
                sizeof(cstrobe_crash_header_template.process_name) - 1);
    }
    cstrobe_crash_threads = NULL;
    cstrobe_crash_prepare_thread();
    __atomic_store_n(&armed, 1, __ATOMIC_RELEASE);
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = crash_handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (int index = 0; index < FATAL_SIGNAL_COUNT; index++) {
        int signal = fatal_signals[index];
        // Still reachable through a handler installed over ours: keep the
        // action saved then, or the two would call each other.
        if (handler_installed[signal]) continue;
        if (sigaction(signal, &action, &previous_actions[signal]) == 0) handler_installed[signal] = 1;
    }
    pthread_mutex_unlock(&install_lock);
    return 0;
}

void cstrobe_crash_uninstall(void) {
    pthread_mutex_lock(&install_lock);
    // A crash file written for a signal the process survived: its buffers
    // are no longer in use, and are freed as after any session.
    forget_survived_signal();
    int expected = 1;
    if (!__atomic_compare_exchange_n(&armed, &expected, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        // Not armed, or a crash is being written with these buffers: the
        // process is about to end, so nothing is freed.
        pthread_mutex_unlock(&install_lock);
        return;
    }
    for (int index = 0; index < FATAL_SIGNAL_COUNT; index++) {
        int signal = fatal_signals[index];
        if (!handler_installed[signal]) continue;
        struct sigaction current;
        if (sigaction(signal, NULL, &current) != 0) continue;
        if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == crash_handler) {
            sigaction(signal, &previous_actions[signal], NULL);
            handler_installed[signal] = 0;
        }
    }
    cstrobe_crash_thread *thread = __atomic_exchange_n(&cstrobe_crash_threads, NULL, __ATOMIC_ACQ_REL);
    while (thread != NULL) {
        cstrobe_crash_thread *next = thread->next;
        free(thread->sealed);
        free(thread);
        thread = next;
    }
    free_handler_buffers();
    pthread_mutex_unlock(&install_lock);
}

cstrobe_crash_thread *cstrobe_crash_add_thread(uint64_t thread_id, uint64_t serial, uint64_t capacity) {
    if (__atomic_load_n(&armed, __ATOMIC_ACQUIRE) != 1) return NULL;
    cstrobe_crash_thread *thread = calloc(1, sizeof(cstrobe_crash_thread));
    cstrobe_crash_chunk *sealed = calloc(capacity == 0 ? 1 : capacity, sizeof(cstrobe_crash_chunk));
    if (thread == NULL || sealed == NULL) {
        free(thread);
        free(sealed);
        return NULL;
    }
    thread->thread_id = thread_id;
    thread->serial = serial;
    thread->capacity = capacity;
    thread->sealed = sealed;
    cstrobe_crash_prepare_thread();
    cstrobe_crash_thread *head = __atomic_load_n(&cstrobe_crash_threads, __ATOMIC_ACQUIRE);
    do {
        thread->next = head;
    } while (
        !__atomic_compare_exchange_n(&cstrobe_crash_threads, &head, thread, 1, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE));
    return thread;
}

// MARK: - Alternate stacks

static __thread void *alternate_stack = NULL;
static __thread size_t alternate_stack_bytes = 0;

void cstrobe_crash_prepare_thread(void) {
    if (alternate_stack != NULL) return;
    stack_t current;
    if (sigaltstack(NULL, &current) == 0 && !(current.ss_flags & SS_DISABLE)) return;
    size_t bytes = 64 << 10;
    void *memory = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return;
    stack_t stack = {.ss_sp = memory, .ss_flags = 0, .ss_size = bytes};
    if (sigaltstack(&stack, NULL) != 0) {
        munmap(memory, bytes);
        return;
    }
    alternate_stack = memory;
    alternate_stack_bytes = bytes;
}

void cstrobe_crash_release_thread(void) {
    if (alternate_stack == NULL) return;
    stack_t disable = {.ss_sp = NULL, .ss_flags = SS_DISABLE, .ss_size = 0};
    stack_t current;
    if (sigaltstack(NULL, &current) == 0 && current.ss_sp == alternate_stack) {
        if (sigaltstack(&disable, NULL) != 0) return;
    }
    munmap(alternate_stack, alternate_stack_bytes);
    alternate_stack = NULL;
    alternate_stack_bytes = 0;
}
