#define _GNU_SOURCE
#include "CStrobeRuntime.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#if defined(__linux__)
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#elif defined(__APPLE__)
#include <mach/mach.h>
#endif

#if CSTROBE_HAS_TSC
#include <cpuid.h>
#endif

uint64_t _Atomic cstrobe_active_generation = 0;
__thread cstrobe_thread_cursor *cstrobe_current_cursor
    __attribute__((tls_model("initial-exec"))) = NULL;
__thread unsigned cstrobe_own_work_depth __attribute__((tls_model("initial-exec"))) = 0;
int _Atomic cstrobe_timestamp_source_is_tsc = 0;

static uint64_t read_clock(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t cstrobe_monotonic_ns(void) { return read_clock(CLOCK_MONOTONIC); }

uint64_t cstrobe_realtime_ns(void) { return read_clock(CLOCK_REALTIME); }

uint64_t cstrobe_boottime_ns(void) {
#ifdef CLOCK_BOOTTIME
    return read_clock(CLOCK_BOOTTIME);
#else
    return read_clock(CLOCK_MONOTONIC);
#endif
}


#if CSTROBE_HAS_TSC
static int read_tsc_invariance(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000007u) {
        return 0;
    }
    if (!__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx)) {
        return 0;
    }
    return (edx & (1u << 8)) != 0;
}

/// Whether the CPU declares an invariant TSC. `cpuid` traps to the
/// hypervisor in a virtual machine (several microseconds), and the answer
/// never changes, so it is asked once.
static int tsc_invariant = 0;
static pthread_once_t tsc_invariant_once = PTHREAD_ONCE_INIT;

static void check_tsc_invariance(void) { tsc_invariant = read_tsc_invariance(); }

static int tsc_is_invariant(void) {
    pthread_once(&tsc_invariant_once, check_tsc_invariance);
    return tsc_invariant;
}

#if defined(__linux__)
static int clocksource_descriptor = -1;
static pthread_once_t clocksource_once = PTHREAD_ONCE_INIT;

static void open_clocksource(void) {
    clocksource_descriptor =
        open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
}
#endif

/// The kernel's own clocksource tells whether it trusts the TSC across cores.
/// The kernel can drop the TSC at any time, so every session asks again; a
/// positional read of a descriptor kept open costs about a microsecond, an
/// open and close of the sysfs file over ten.
static int kernel_trusts_tsc(void) {
#if defined(__linux__)
    pthread_once(&clocksource_once, open_clocksource);
    if (clocksource_descriptor < 0) {
        return 0;
    }
    char name[32] = {0};
    ssize_t length = pread(clocksource_descriptor, name, sizeof name - 1, 0);
    return length >= 3 && strncmp(name, "tsc", 3) == 0;
#else
    return 1;
#endif
}
#endif

int cstrobe_select_timestamp_source(int allow_tsc) {
#if CSTROBE_HAS_TSC
    int use_tsc = allow_tsc && tsc_is_invariant() && kernel_trusts_tsc();
#else
    (void)allow_tsc;
    int use_tsc = 0;
#endif
    __atomic_store_n((int *)&cstrobe_timestamp_source_is_tsc, use_tsc, __ATOMIC_RELAXED);
    return use_tsc;
}

#if defined(__linux__) && defined(__NR_membarrier)
#include <linux/membarrier.h>
#endif
#include <sys/mman.h>

/// The barrier by page protection: revoking access to a page that this
/// process has touched makes the kernel interrupt every CPU that runs one of
/// its threads (a TLB shootdown), which serializes each of them.
static void protection_barrier(void) {
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static volatile uint64_t *page = NULL;
    pthread_mutex_lock(&lock);
    long size = sysconf(_SC_PAGESIZE);
    if (page == NULL) {
        void *mapped = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        page = mapped == MAP_FAILED ? NULL : mapped;
    }
    if (page != NULL) {
        mprotect((void *)page, (size_t)size, PROT_READ | PROT_WRITE);
        *page += 1;
        mprotect((void *)page, (size_t)size, PROT_NONE);
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&lock);
}

#if defined(__linux__) && defined(__NR_membarrier)
/// 1: private expedited membarrier registered; 2: only the global one; 3: none.
static int membarrier_mode = 0;
static pthread_once_t membarrier_once = PTHREAD_ONCE_INIT;

static void membarrier_setup(void) {
    long commands = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (commands > 0 && (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED)
        && syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0) {
        membarrier_mode = 1;
    } else if (commands > 0 && (commands & MEMBARRIER_CMD_GLOBAL)) {
        membarrier_mode = 2;
    } else {
        membarrier_mode = 3;
    }
}
#endif

void cstrobe_process_barrier(void) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#if defined(__linux__) && defined(__NR_membarrier)
    pthread_once(&membarrier_once, membarrier_setup);
    if (membarrier_mode == 1 && syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) {
        return;
    }
    if (membarrier_mode == 2 && syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0) {
        return;
    }
#endif
    protection_barrier();
}

cstrobe_clock_pair cstrobe_read_clock_pair(void) {
    cstrobe_clock_pair best = {0, 0};
    uint64_t best_window = UINT64_MAX;
    for (int attempt = 0; attempt < 16; attempt++) {
        uint64_t before = cstrobe_raw_timestamp();
        uint64_t boot = cstrobe_boottime_ns();
        uint64_t after = cstrobe_raw_timestamp();
        if (after >= before && after - before < best_window) {
            best_window = after - before;
            best.raw = before + (after - before) / 2;
            best.boottime_ns = boot;
        }
    }
    return best;
}

uint64_t cstrobe_thread_id(void) {
#if defined(__linux__)
    return (uint64_t)syscall(SYS_gettid);
#else
    uint64_t tid = 0;
    pthread_threadid_np(NULL, &tid);
    return tid;
#endif
}

uint64_t cstrobe_process_id(void) { return (uint64_t)getpid(); }

static uint64_t timeval_ns(struct timeval tv) {
    return (uint64_t)tv.tv_sec * 1000000000ull + (uint64_t)tv.tv_usec * 1000ull;
}

static int fill_rusage(int who, cstrobe_rusage *out) {
    struct rusage usage;
    if (getrusage(who, &usage) != 0) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    out->user_ns = timeval_ns(usage.ru_utime);
    out->system_ns = timeval_ns(usage.ru_stime);
    out->voluntary_switches = (uint64_t)usage.ru_nvcsw;
    out->involuntary_switches = (uint64_t)usage.ru_nivcsw;
    out->minor_faults = (uint64_t)usage.ru_minflt;
    out->major_faults = (uint64_t)usage.ru_majflt;
#if defined(__APPLE__)
    out->max_rss_bytes = (uint64_t)usage.ru_maxrss;
#else
    out->max_rss_bytes = (uint64_t)usage.ru_maxrss * 1024ull;
#endif
    return 0;
}

int cstrobe_thread_rusage(cstrobe_rusage *out) {
#if defined(RUSAGE_THREAD)
    return fill_rusage(RUSAGE_THREAD, out);
#else
    return fill_rusage(RUSAGE_SELF, out);
#endif
}

int cstrobe_thread_rusage_is_per_thread(void) {
#if defined(RUSAGE_THREAD)
    return 1;
#else
    return 0;
#endif
}

int cstrobe_process_rusage(cstrobe_rusage *out) { return fill_rusage(RUSAGE_SELF, out); }

uint64_t cstrobe_thread_cpu_ns(pthread_t thread) {
#if defined(__APPLE__)
    thread_basic_info_data_t info;
    mach_msg_type_number_t count = THREAD_BASIC_INFO_COUNT;
    if (thread_info(pthread_mach_thread_np(thread), THREAD_BASIC_INFO, (thread_info_t)&info, &count) != KERN_SUCCESS) {
        return 0;
    }
    return (uint64_t)(info.user_time.seconds + info.system_time.seconds) * 1000000000ull
        + (uint64_t)(info.user_time.microseconds + info.system_time.microseconds) * 1000ull;
#else
    clockid_t clock;
    struct timespec ts;
    if (pthread_getcpuclockid(thread, &clock) != 0 || clock_gettime(clock, &ts) != 0) {
        return 0;
    }
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

typedef struct exit_hook {
    void (*callback)(void *);
    void *context;
} exit_hook;

static void run_exit_hook(void *value) {
    exit_hook *hook = (exit_hook *)value;
    if (hook != NULL) {
        hook->callback(hook->context);
    }
}

static void make_exit_key(void) { pthread_key_create(&exit_key, run_exit_hook); }

static __thread exit_hook thread_exit_hook;

void cstrobe_on_thread_exit(void (*callback)(void *), void *context) {
    pthread_once(&exit_key_once, make_exit_key);
    thread_exit_hook.callback = callback;
    thread_exit_hook.context = context;
    pthread_setspecific(exit_key, &thread_exit_hook);
}

int cstrobe_thread_name(char *buffer, size_t size) {
    if (size == 0) {
        return -1;
    }
    buffer[0] = 0;
#if defined(__linux__) || defined(__APPLE__)
    return pthread_getname_np(pthread_self(), buffer, size);
#else
    return -1;
#endif
}

static int read_process_name(char *buffer, size_t size) {
    if (size == 0) {
        return -1;
    }
    buffer[0] = 0;
#if defined(__linux__)
    // The executable's name from argv[0]: /proc/self/comm is cut at 15 bytes.
    FILE *file = fopen("/proc/self/cmdline", "r");
    if (file != NULL) {
        char arguments[4096];
        size_t length = fread(arguments, 1, sizeof arguments - 1, file);
        fclose(file);
        arguments[length] = 0;
        if (length > 0 && arguments[0] != 0) {
            const char *slash = strrchr(arguments, '/');
            const char *name = slash != NULL ? slash + 1 : arguments;
            snprintf(buffer, size, "%s", name);
            return 0;
        }
    }
    file = fopen("/proc/self/comm", "r");
    if (file == NULL) {
        return -1;
    }
    if (fgets(buffer, (int)size, file) == NULL) {
        buffer[0] = 0;
    }
    fclose(file);
    size_t length = strlen(buffer);
    if (length > 0 && buffer[length - 1] == '\n') {
        buffer[length - 1] = 0;
    }
    return 0;
#else
    return -1;
#endif
}

/// The name is read from /proc once per process (an open, a read and a
/// close cost several microseconds, and every session start asks).
static char process_name[256];
static int process_name_status = -1;
static pthread_once_t process_name_once = PTHREAD_ONCE_INIT;

static void read_process_name_once(void) { process_name_status = read_process_name(process_name, sizeof process_name); }

int cstrobe_process_name(char *buffer, size_t size) {
    if (size == 0) {
        return -1;
    }
    pthread_once(&process_name_once, read_process_name_once);
    snprintf(buffer, size, "%s", process_name);
    return process_name_status;
}

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CSTROBE_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define CSTROBE_TSAN 1
#endif

#ifdef CSTROBE_TSAN
void __tsan_acquire(void *address);
void __tsan_release(void *address);
void cstrobe_sanitizer_acquire(void *address) { __tsan_acquire(address); }
void cstrobe_sanitizer_release(void *address) { __tsan_release(address); }
#else
void cstrobe_sanitizer_acquire(void *address) { (void)address; }
void cstrobe_sanitizer_release(void *address) { (void)address; }
#endif
