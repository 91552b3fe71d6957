// The CPU profiler's timer samplers (see CStrobeProfiler.h): a POSIX timer
// on the thread's CPU-time clock whose SIGPROF goes to that thread
// (SIGEV_THREAD_ID). The handler is async-signal-safe: it allocates nothing
// and takes no lock. It finds its sampler through the signal's value (set
// when the timer was created), walks the frame pointers of the interrupted
// code within the thread's stack bounds, copies the registers and stack
// words the writer unwinds with, and writes one record into the sampler's
// single-producer ring; a full ring counts the sample as lost.

#define _GNU_SOURCE
#include "CStrobeSamplerState.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static _Atomic uint64_t timer_samples = 0;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static cstrobe_sampler *free_samplers = NULL;
static bool handler_installed = false;

static void record_sample(cstrobe_sampler *sampler, const ucontext_t *context) {
    uintptr_t pc, fp, sp;
#if defined(__x86_64__)
    pc = (uintptr_t)context->uc_mcontext.gregs[REG_RIP];
    fp = (uintptr_t)context->uc_mcontext.gregs[REG_RBP];
    sp = (uintptr_t)context->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
    pc = (uintptr_t)context->uc_mcontext.pc;
    fp = (uintptr_t)context->uc_mcontext.regs[29];
    sp = (uintptr_t)context->uc_mcontext.sp;
#else
    return;
#endif
    uint64_t frames[CSTROBE_SAMPLE_MAX_FRAMES];
    size_t count = 0;
    frames[count++] = pc;
    uintptr_t low = sp > sampler->stack_low ? sp : sampler->stack_low;
    // Each frame record is {previous fp, return address}; frames grow up
    // toward the stack's high end, so a walk that does not climb stops.
    while (count < CSTROBE_SAMPLE_MAX_FRAMES && fp >= low && fp + 16 <= sampler->stack_high && (fp & 7) == 0) {
        const uintptr_t *record = (const uintptr_t *)fp;
        uintptr_t next = record[0];
        uintptr_t ret = record[1];
        if (ret == 0) break;
        frames[count++] = ret;
        if (next <= fp) break;
        fp = next;
    }
    // The stack and frame pointers and the words at the stack pointer,
    // within the thread's stack: the writer unwinds a frame that keeps no
    // frame pointer with them.
    uint64_t stack[SAMPLE_UNWIND_WORDS];
    size_t stack_words = 0;
    // x86-64 only, the registers the writer's unwinder knows; elsewhere the
    // frame-pointer walk stands alone.
#if defined(__x86_64__)
    if ((sp & 7) == 0 && sp >= sampler->stack_low && sp < sampler->stack_high) {
        stack[stack_words++] = sp;
        stack[stack_words++] = fp;
        size_t copied = 0;
        while (copied < CSTROBE_SAMPLE_STACK_WORDS && sp + (copied + 1) * 8 <= sampler->stack_high)
            stack[stack_words++] = ((const uint64_t *)sp)[copied++];
    }
#endif
    uint64_t head = atomic_load_explicit(&sampler->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&sampler->tail, memory_order_acquire);
    size_t needed = SAMPLE_HEADER_WORDS + count + stack_words;
    if (head - tail + needed > sampler->ring_words) {
        atomic_fetch_add_explicit(&sampler->lost, 1, memory_order_relaxed);
        return;
    }
    unsigned cpu = 0;
    int got = sched_getcpu();
    if (got >= 0) cpu = (unsigned)got;
    uint64_t words[SAMPLE_HEADER_WORDS] = {(uint64_t)(uint32_t)sampler->tid | ((uint64_t)cpu << 32),
                                           cstrobe_boottime_now(), count | ((uint64_t)stack_words << 32)};
    for (size_t i = 0; i < SAMPLE_HEADER_WORDS; i++) sampler->ring[(head + i) % sampler->ring_words] = words[i];
    for (size_t i = 0; i < count; i++)
        sampler->ring[(head + SAMPLE_HEADER_WORDS + i) % sampler->ring_words] = frames[i];
    for (size_t i = 0; i < stack_words; i++)
        sampler->ring[(head + SAMPLE_HEADER_WORDS + count + i) % sampler->ring_words] = stack[i];
    atomic_store_explicit(&sampler->head, head + needed, memory_order_release);
    atomic_fetch_add_explicit(&timer_samples, 1, memory_order_relaxed);
}

static void sigprof_handler(int signal, siginfo_t *info, void *context) {
    (void)signal;
    if (!info || info->si_code != SI_TIMER) return;
    int saved = errno;
    cstrobe_sampler *sampler = info->si_value.sival_ptr;
    // A sampler's memory is never unmapped, so a signal queued before its
    // timer was deleted finds it, not live, and records nothing.
    if (sampler && atomic_load_explicit(&sampler->live, memory_order_acquire) &&
        sampler->tid == (int32_t)syscall(SYS_gettid))
        record_sample(sampler, context);
    errno = saved;
}

static int install_handler(void) {
    if (handler_installed) return 0;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = sigprof_handler;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGPROF, &action, NULL) != 0) return errno;
    handler_installed = true;
    return 0;
}

int cstrobe_sampler_open_timer(uint64_t period_ns, size_t ring_words, cstrobe_sampler **out) {
    pthread_attr_t attributes;
    void *stack_address = NULL;
    size_t stack_size = 0;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return EINVAL;
    int got = pthread_attr_getstack(&attributes, &stack_address, &stack_size);
    pthread_attr_destroy(&attributes);
    if (got != 0) return EINVAL;

    pthread_mutex_lock(&pool_lock);
    int installed = install_handler();
    cstrobe_sampler *sampler = NULL;
    if (installed == 0) {
        for (cstrobe_sampler **link = &free_samplers; *link; link = &(*link)->next_free) {
            if ((*link)->ring_words == ring_words) {
                sampler = *link;
                *link = sampler->next_free;
                break;
            }
        }
    }
    pthread_mutex_unlock(&pool_lock);
    if (installed != 0) return installed;
    if (!sampler) {
        size_t bytes = sizeof *sampler + ring_words * sizeof(uint64_t);
        void *memory = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (memory == MAP_FAILED) return ENOMEM;
        sampler = memory;
        sampler->ring = (uint64_t *)((uint8_t *)memory + sizeof *sampler);
        sampler->ring_words = ring_words;
    }
    sampler->kind = CSTROBE_SAMPLER_CPU_TIMER;
    sampler->tid = (int32_t)syscall(SYS_gettid);
    sampler->fd = -1;
    sampler->next_free = NULL;
    sampler->stack_low = (uintptr_t)stack_address;
    sampler->stack_high = (uintptr_t)stack_address + stack_size;
    atomic_store(&sampler->head, 0);
    atomic_store(&sampler->tail, 0);
    atomic_store(&sampler->lost, 0);
    sampler->lost_reported = 0;
    atomic_store_explicit(&sampler->live, true, memory_order_release);

    struct sigevent event;
    memset(&event, 0, sizeof event);
    event.sigev_notify = SIGEV_THREAD_ID;
    event.sigev_signo = SIGPROF;
    event.sigev_value.sival_ptr = sampler;
    event._sigev_un._tid = sampler->tid;
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &sampler->timer) != 0) {
        int error = errno;
        cstrobe_sampler_close(sampler);
        return error;
    }
    sampler->has_timer = true;
    struct itimerspec spec;
    spec.it_interval.tv_sec = (time_t)(period_ns / 1000000000ull);
    spec.it_interval.tv_nsec = (long)(period_ns % 1000000000ull);
    spec.it_value = spec.it_interval;
    if (timer_settime(sampler->timer, 0, &spec, NULL) != 0) {
        int error = errno;
        cstrobe_sampler_close(sampler);
        return error;
    }
    *out = sampler;
    return 0;
}

size_t cstrobe_timer_drain(cstrobe_sampler *sampler, uint64_t *out, size_t capacity, uint64_t *lost) {
    uint64_t head = atomic_load_explicit(&sampler->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&sampler->tail, memory_order_relaxed);
    size_t written = 0;
    while (tail < head) {
        uint64_t counts = sampler->ring[(tail + 2) % sampler->ring_words];
        size_t length = SAMPLE_HEADER_WORDS + (size_t)(uint32_t)counts + (size_t)(counts >> 32);
        if (written + length > capacity) break;
        for (size_t i = 0; i < length; i++) out[written++] = sampler->ring[(tail + i) % sampler->ring_words];
        tail += length;
    }
    atomic_store_explicit(&sampler->tail, tail, memory_order_release);
    uint64_t total = atomic_load_explicit(&sampler->lost, memory_order_relaxed);
    *lost += total - sampler->lost_reported;
    sampler->lost_reported = total;
    return written;
}

uint64_t cstrobe_sampler_timer_samples(void) { return atomic_load_explicit(&timer_samples, memory_order_relaxed); }

void cstrobe_timer_release(cstrobe_sampler *sampler) {
    cstrobe_sampler_stop(sampler);
    atomic_store_explicit(&sampler->live, false, memory_order_release);
    pthread_mutex_lock(&pool_lock);
    sampler->next_free = free_samplers;
    free_samplers = sampler;
    pthread_mutex_unlock(&pool_lock);
}

#else

int cstrobe_sampler_open_timer(uint64_t period_ns, size_t ring_words, cstrobe_sampler **out) {
    (void)period_ns, (void)ring_words, (void)out;
    return ENOSYS;
}
uint64_t cstrobe_sampler_timer_samples(void) { return 0; }

#endif
