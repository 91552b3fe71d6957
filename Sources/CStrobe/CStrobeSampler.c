// The CPU profiler's per-thread samplers (see CStrobeProfiler.h).
//
// A perf sampler is a perf event on the software CPU clock of one thread,
// with user call chains, timestamps on CLOCK_BOOTTIME and an mmap ring the
// background writer reads; the kernel walks the stack.
//
// A timer sampler is a POSIX timer on the thread's CPU-time clock whose
// SIGPROF goes to that thread (SIGEV_THREAD_ID). The handler is
// async-signal-safe: it allocates nothing and takes no lock. It finds its
// sampler through the signal's value (set when the timer was created), walks
// the frame pointers of the interrupted code within the thread's stack
// bounds and writes one record into the sampler's single-producer ring; a
// full ring counts the sample as lost.

#define _GNU_SOURCE
#include "CStrobeProfiler.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__linux__)
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#endif

#if defined(__linux__) && !defined(PERF_FORMAT_LOST)
#define PERF_FORMAT_LOST (1U << 4)
#endif

/// The three words of a record before its frames.
#define SAMPLE_HEADER_WORDS 3

struct cstrobe_sampler {
    cstrobe_sampler_kind kind;
    int32_t tid;
    // Perf.
    int fd;
    void *mapping;
    size_t mapping_bytes;
    size_t data_bytes;
    uint64_t perf_lost_reported;
    bool perf_reads_lost;  // read() gives the samples the ring had no room for
    // Timer.
    struct cstrobe_sampler *next_free;
    timer_t timer;
    bool has_timer;
    _Atomic bool live;
    uintptr_t stack_low;
    uintptr_t stack_high;
    uint64_t *ring;
    size_t ring_words;
    _Atomic uint64_t head;  // words written by the handler
    _Atomic uint64_t tail;  // words read by the writer
    _Atomic uint64_t lost;
    uint64_t lost_reported;
};

#if defined(__linux__)

static uint64_t boottime_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// MARK: - Perf samplers

/// The event Strobe's samplers open: the software CPU clock of user code
/// every `period_ns`, with what a sample keeps (`full`: time, CPU, the user
/// call chain and the stack words; else the thread id alone).
static void sampling_attr(struct perf_event_attr *attr, uint64_t period_ns, bool full) {
    memset(attr, 0, sizeof *attr);
    attr->size = sizeof *attr;
    attr->type = PERF_TYPE_SOFTWARE;
    attr->config = PERF_COUNT_SW_CPU_CLOCK;
    attr->sample_period = period_ns;
    attr->sample_type = PERF_SAMPLE_TID;
    attr->exclude_kernel = 1;
    attr->exclude_hv = 1;
    if (!full) return;
    attr->sample_type |= PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER;
    attr->sample_stack_user = CSTROBE_SAMPLE_STACK_WORDS * 8;
    attr->exclude_callchain_kernel = 1;
    attr->use_clockid = 1;
    attr->clockid = CLOCK_BOOTTIME;
    attr->sample_max_stack = CSTROBE_SAMPLE_MAX_FRAMES;
}

int cstrobe_sampler_open_perf(int32_t tid, uint64_t period_ns, size_t ring_pages, cstrobe_sampler **out) {
    struct perf_event_attr attr;
    sampling_attr(&attr, period_ns, true);
    // The kernel writes a PERF_RECORD_LOST only once the ring has room
    // again, which after the last drain it never may; kernels from 6.0 on
    // give the count to read() as well.
    attr.read_format = PERF_FORMAT_LOST;
    bool reads_lost = true;
    long fd = syscall(SYS_perf_event_open, &attr, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && errno == EINVAL) {
        attr.read_format = 0;
        reads_lost = false;
        fd = syscall(SYS_perf_event_open, &attr, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    }
    // A kernel that copies no user stack still walks the frame pointers.
    if (fd < 0 && errno == EINVAL) {
        attr.sample_type &= ~(uint64_t)PERF_SAMPLE_STACK_USER;
        attr.sample_stack_user = 0;
        fd = syscall(SYS_perf_event_open, &attr, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    }
    if (fd < 0) return errno;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t bytes = (ring_pages + 1) * page;
    void *mapping = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
    // Rings are locked memory, limited per user (perf_event_mlock_kb per
    // CPU, then RLIMIT_MEMLOCK): past the limit, smaller rings, down to 4
    // pages.
    while (mapping == MAP_FAILED && (errno == EPERM || errno == ENOMEM) && ring_pages > 4) {
        ring_pages /= 2;
        bytes = (ring_pages + 1) * page;
        mapping = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
    }
    if (mapping == MAP_FAILED) {
        int error = errno;
        close((int)fd);
        return error;
    }
    cstrobe_sampler *sampler = calloc(1, sizeof *sampler);
    if (!sampler) {
        munmap(mapping, bytes);
        close((int)fd);
        return ENOMEM;
    }
    sampler->kind = CSTROBE_SAMPLER_PERF_EVENT;
    sampler->tid = tid;
    sampler->fd = (int)fd;
    sampler->mapping = mapping;
    sampler->mapping_bytes = bytes;
    sampler->data_bytes = ring_pages * page;
    sampler->perf_reads_lost = reads_lost;
    *out = sampler;
    return 0;
}

/// Copies `count` bytes at ring offset `offset` (wrapping) to `to`.
static void ring_copy(const uint8_t *data, size_t size, uint64_t offset, void *to, size_t count) {
    size_t start = (size_t)(offset % size);
    size_t first = size - start < count ? size - start : count;
    memcpy(to, data + start, first);
    if (first < count) memcpy((uint8_t *)to + first, data, count - first);
}

static size_t drain_perf(cstrobe_sampler *sampler, uint64_t *out, size_t capacity, uint64_t *lost) {
    struct perf_event_mmap_page *meta = sampler->mapping;
    const uint8_t *data = (const uint8_t *)sampler->mapping + meta->data_offset;
    size_t size = sampler->data_bytes;
    if (meta->data_size) size = (size_t)meta->data_size;
    uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = meta->data_tail;
    size_t written = 0;
    uint64_t record[SAMPLE_HEADER_WORDS + 2 + CSTROBE_SAMPLE_MAX_FRAMES + 2 + CSTROBE_SAMPLE_STACK_WORDS + 8];
    while (tail < head) {
        struct perf_event_header header;
        ring_copy(data, size, tail, &header, sizeof header);
        if (header.size < sizeof header) break;
        if (header.type == PERF_RECORD_SAMPLE && header.size <= sizeof record) {
            ring_copy(data, size, tail, record, header.size);
            // After the header: pid/tid, time, cpu/res, nr, ips.
            const uint64_t *body = (const uint64_t *)((const uint8_t *)record + sizeof header);
            uint32_t tid = (uint32_t)(body[0] >> 32);
            uint64_t time = body[1];
            uint32_t cpu = (uint32_t)body[2];
            uint64_t count = body[3];
            const uint64_t *ips = body + 4;
            size_t available = (header.size - sizeof header) / 8;
            if (count > available - 4) count = available - 4;
            size_t frames = 0;
            for (uint64_t i = 0; i < count; i++)
                if (ips[i] < (uint64_t)PERF_CONTEXT_MAX) frames++;
            // After the call chain: the user stack's size, its bytes, and
            // how many of them the kernel could copy (dyn_size).
            const uint64_t *stack = ips + count;
            size_t stack_words = 0;
            if (available >= 4 + count + 1 && stack[0] > 0) {
                size_t dumped = (size_t)(stack[0] / 8);
                if (available >= 4 + count + 1 + dumped + 1) {
                    size_t copied = (size_t)(stack[1 + dumped] / 8);
                    stack_words = copied < dumped ? copied : dumped;
                    if (stack_words > CSTROBE_SAMPLE_STACK_WORDS) stack_words = CSTROBE_SAMPLE_STACK_WORDS;
                }
            }
            if (written + SAMPLE_HEADER_WORDS + frames + stack_words > capacity) break;
            out[written++] = (uint64_t)tid | ((uint64_t)cpu << 32);
            out[written++] = time;
            out[written++] = frames | ((uint64_t)stack_words << 32);
            for (uint64_t i = 0; i < count; i++)
                if (ips[i] < (uint64_t)PERF_CONTEXT_MAX) out[written++] = ips[i];
            for (size_t i = 0; i < stack_words; i++) out[written++] = stack[1 + i];
        } else if (header.type == PERF_RECORD_LOST) {
            uint64_t body[2];
            ring_copy(data, size, tail + sizeof header, body, sizeof body);
            if (!sampler->perf_reads_lost) *lost += body[1];
        } else if (header.type == PERF_RECORD_SAMPLE) {
            *lost += 1;
        }
        tail += header.size;
    }
    __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
    if (sampler->perf_reads_lost) {
        uint64_t values[2];
        if (read(sampler->fd, values, sizeof values) == (ssize_t)sizeof values && values[1] > sampler->perf_lost_reported) {
            *lost += values[1] - sampler->perf_lost_reported;
            sampler->perf_lost_reported = values[1];
        }
    }
    return written;
}

// MARK: - Timer samplers

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
    // The words at the stack pointer, within the thread's stack: the
    // writer finds a frameless leaf's caller among them.
    uint64_t stack[CSTROBE_SAMPLE_STACK_WORDS];
    size_t stack_words = 0;
    if ((sp & 7) == 0 && sp >= sampler->stack_low) {
        while (stack_words < CSTROBE_SAMPLE_STACK_WORDS && sp + (stack_words + 1) * 8 <= sampler->stack_high) {
            stack[stack_words] = ((const uint64_t *)sp)[stack_words];
            stack_words++;
        }
    }
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
    uint64_t words[SAMPLE_HEADER_WORDS] = {(uint64_t)(uint32_t)sampler->tid | ((uint64_t)cpu << 32), boottime_now(),
                                           count | ((uint64_t)stack_words << 32)};
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

static size_t drain_timer(cstrobe_sampler *sampler, uint64_t *out, size_t capacity, uint64_t *lost) {
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

// MARK: - The kernel's sampling alone, for the benchmarks

#define FLOOR_RING_PAGES 32

struct cstrobe_perf_floor {
    int fd;
    void *mapping;
    size_t bytes;
};

cstrobe_perf_floor *cstrobe_perf_floor_open(uint64_t period_ns, int as_strobe, int *error) {
    struct perf_event_attr attr;
    sampling_attr(&attr, period_ns, as_strobe != 0);
    long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        *error = errno;
        return NULL;
    }
    size_t bytes = (FLOOR_RING_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE);
    void *mapping = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
    cstrobe_perf_floor *floor = mapping == MAP_FAILED ? NULL : calloc(1, sizeof *floor);
    if (!floor) {
        *error = mapping == MAP_FAILED ? errno : ENOMEM;
        if (mapping != MAP_FAILED) munmap(mapping, bytes);
        close((int)fd);
        return NULL;
    }
    floor->fd = (int)fd;
    floor->mapping = mapping;
    floor->bytes = bytes;
    return floor;
}

uint64_t cstrobe_perf_floor_discard(cstrobe_perf_floor *floor) {
    if (!floor) return 0;
    struct perf_event_mmap_page *meta = floor->mapping;
    uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = meta->data_tail;
    __atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
    return head - tail;
}

void cstrobe_perf_floor_close(cstrobe_perf_floor *floor) {
    if (!floor) return;
    ioctl(floor->fd, PERF_EVENT_IOC_DISABLE, 0);
    munmap(floor->mapping, floor->bytes);
    close(floor->fd);
    free(floor);
}

// MARK: - Both

int32_t cstrobe_sampler_tid(const cstrobe_sampler *sampler) { return sampler->tid; }

size_t cstrobe_sampler_drain(cstrobe_sampler *sampler, uint64_t *out, size_t capacity, uint64_t *lost) {
    if (sampler->kind == CSTROBE_SAMPLER_PERF_EVENT) return drain_perf(sampler, out, capacity, lost);
    return drain_timer(sampler, out, capacity, lost);
}

void cstrobe_sampler_stop(cstrobe_sampler *sampler) {
    if (sampler->kind == CSTROBE_SAMPLER_PERF_EVENT) {
        ioctl(sampler->fd, PERF_EVENT_IOC_DISABLE, 0);
    } else if (sampler->has_timer) {
        timer_delete(sampler->timer);
        sampler->has_timer = false;
    }
}

void cstrobe_sampler_close(cstrobe_sampler *sampler) {
    if (sampler->kind == CSTROBE_SAMPLER_PERF_EVENT) {
        munmap(sampler->mapping, sampler->mapping_bytes);
        close(sampler->fd);
        free(sampler);
        return;
    }
    cstrobe_sampler_stop(sampler);
    atomic_store_explicit(&sampler->live, false, memory_order_release);
    pthread_mutex_lock(&pool_lock);
    sampler->next_free = free_samplers;
    free_samplers = sampler;
    pthread_mutex_unlock(&pool_lock);
}

#else

int cstrobe_sampler_open_perf(int32_t tid, uint64_t period_ns, size_t ring_pages, cstrobe_sampler **out) {
    (void)tid, (void)period_ns, (void)ring_pages, (void)out;
    return ENOSYS;
}
int cstrobe_sampler_open_timer(uint64_t period_ns, size_t ring_words, cstrobe_sampler **out) {
    (void)period_ns, (void)ring_words, (void)out;
    return ENOSYS;
}
int32_t cstrobe_sampler_tid(const cstrobe_sampler *sampler) { return sampler->tid; }
size_t cstrobe_sampler_drain(cstrobe_sampler *sampler, uint64_t *out, size_t capacity, uint64_t *lost) {
    (void)sampler, (void)out, (void)capacity, (void)lost;
    return 0;
}
void cstrobe_sampler_stop(cstrobe_sampler *sampler) { (void)sampler; }
void cstrobe_sampler_close(cstrobe_sampler *sampler) { (void)sampler; }
uint64_t cstrobe_sampler_timer_samples(void) { return 0; }
cstrobe_perf_floor *cstrobe_perf_floor_open(uint64_t period_ns, int as_strobe, int *error) {
    (void)period_ns, (void)as_strobe;
    *error = ENOSYS;
    return NULL;
}
uint64_t cstrobe_perf_floor_discard(cstrobe_perf_floor *floor) {
    (void)floor;
    return 0;
}
void cstrobe_perf_floor_close(cstrobe_perf_floor *floor) { (void)floor; }

#endif
