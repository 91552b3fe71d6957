// The CPU profiler's per-thread samplers (see CStrobeProfiler.h).
//
// A perf sampler is a perf event on the software CPU clock of one thread,
// with user call chains, the user registers and stack words the writer
// unwinds a frameless function with, timestamps on CLOCK_BOOTTIME and an
// mmap ring the background writer reads; the kernel walks the stack.
//
// The timer samplers are in CStrobeTimerSampler.c; what both do (drain,
// stop, close) is here.

#define _GNU_SOURCE
#include "CStrobeSamplerState.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#if defined(__linux__) && !defined(PERF_FORMAT_LOST)
#define PERF_FORMAT_LOST (1U << 4)
#endif

#if defined(__linux__)

// MARK: - Perf samplers

/// The event Strobe's samplers open: the software CPU clock of user code
/// every `period_ns`, with what a sample keeps (`full`: time, CPU, the user
/// call chain, the user registers the unwind needs and the stack words; else
/// the thread id alone).
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
#if defined(__x86_64__)
    // bp (6), sp (7) and ip (8) of arch/x86's perf_regs.h, given in that order.
    attr->sample_type |= PERF_SAMPLE_REGS_USER;
    attr->sample_regs_user = (1ull << 6) | (1ull << 7) | (1ull << 8);
#endif
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
        attr.sample_type &= ~(uint64_t)(PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_USER);
        attr.sample_stack_user = 0;
        attr.sample_regs_user = 0;
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
    sampler->perf_regs = (attr.sample_type & PERF_SAMPLE_REGS_USER) != 0;
    sampler->perf_stack = (attr.sample_type & PERF_SAMPLE_STACK_USER) != 0;
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
    // Header, pid/tid, time, cpu, nr, the frames with their context
    // markers, the registers and the stack.
    uint64_t record[SAMPLE_HEADER_WORDS + 4 + CSTROBE_SAMPLE_MAX_FRAMES + 8 + 4 + CSTROBE_SAMPLE_STACK_WORDS + 2];
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
            // After the call chain: the user registers (an ABI word, then
            // bp, sp, ip, when the ABI is not 0), the user stack's size,
            // its bytes, and how many of them the kernel could copy.
            const uint64_t *after = ips + count;
            const uint64_t *limit = body + available;
            uint64_t unwind[SAMPLE_UNWIND_WORDS];
            size_t stack_words = 0;
            bool has_registers = false;
            if (sampler->perf_regs && after < limit) {
                uint64_t abi = *after++;
                if (abi != 0 && after + 3 <= limit) {
                    unwind[0] = after[1];  // sp
                    unwind[1] = after[0];  // bp
                    has_registers = true;
                    after += 3;
                }
            }
            if (sampler->perf_stack && after < limit && after[0] > 0) {
                size_t dumped = (size_t)(after[0] / 8);
                if (after + 1 + dumped + 1 <= limit && has_registers) {
                    size_t copied = (size_t)(after[1 + dumped] / 8);
                    size_t words = copied < dumped ? copied : dumped;
                    if (words > CSTROBE_SAMPLE_STACK_WORDS) words = CSTROBE_SAMPLE_STACK_WORDS;
                    memcpy(unwind + 2, after + 1, words * 8);
                    stack_words = 2 + words;
                }
            }
            if (written + SAMPLE_HEADER_WORDS + frames + stack_words > capacity) break;
            out[written++] = (uint64_t)tid | ((uint64_t)cpu << 32);
            out[written++] = time;
            out[written++] = frames | ((uint64_t)stack_words << 32);
            for (uint64_t i = 0; i < count; i++)
                if (ips[i] < (uint64_t)PERF_CONTEXT_MAX) out[written++] = ips[i];
            for (size_t i = 0; i < stack_words; i++) out[written++] = unwind[i];
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
        if (read(sampler->fd, values, sizeof values) == (ssize_t)sizeof values
            && values[1] > sampler->perf_lost_reported) {
            *lost += values[1] - sampler->perf_lost_reported;
            sampler->perf_lost_reported = values[1];
        }
    }
    return written;
}

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
    return cstrobe_timer_drain(sampler, out, capacity, lost);
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
    cstrobe_timer_release(sampler);
}

#else

int cstrobe_sampler_open_perf(int32_t tid, uint64_t period_ns, size_t ring_pages, cstrobe_sampler **out) {
    (void)tid, (void)period_ns, (void)ring_pages, (void)out;
    return ENOSYS;
}
int32_t cstrobe_sampler_tid(const cstrobe_sampler *sampler) { return sampler->tid; }
size_t cstrobe_sampler_drain(cstrobe_sampler *sampler, uint64_t *out, size_t capacity, uint64_t *lost) {
    (void)sampler, (void)out, (void)capacity, (void)lost;
    return 0;
}
void cstrobe_sampler_stop(cstrobe_sampler *sampler) { (void)sampler; }
void cstrobe_sampler_close(cstrobe_sampler *sampler) { (void)sampler; }
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
