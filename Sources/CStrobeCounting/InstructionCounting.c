// The sources of instruction counts: Valgrind's client requests for a
// simulated run, the marking system call for an emulated one, and perf
// events for the hardware counter.

#include "CStrobeInstructions.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/personality.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#endif

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define CSTROBE_HAS_SIMULATION 1
#endif
#endif
#ifndef CSTROBE_HAS_SIMULATION
#define CSTROBE_HAS_SIMULATION 0
#endif

int cstrobe_simulation_built(void) { return CSTROBE_HAS_SIMULATION; }

int cstrobe_simulation_running(void) {
#if CSTROBE_HAS_SIMULATION
    return RUNNING_ON_VALGRIND ? 1 : 0;
#else
    return 0;
#endif
}

void cstrobe_simulation_begin(void) {
#if CSTROBE_HAS_SIMULATION
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_ZERO_STATS;
#endif
}

void cstrobe_simulation_end(const char *label) {
#if CSTROBE_HAS_SIMULATION
    CALLGRIND_STOP_INSTRUMENTATION;
    CALLGRIND_DUMP_STATS_AT(label);
#else
    (void)label;
#endif
}

void cstrobe_emulation_mark(int mark) {
#if defined(__linux__)
    int saved = errno;
    (void)syscall(CSTROBE_EMULATION_SYSCALL, (long)mark);
    errno = saved;
#else
    (void)mark;
#endif
}

int cstrobe_instructions_open(pid_t tid) {
#if defined(__linux__)
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = PERF_COUNT_HW_INSTRUCTIONS;
    attr.disabled = 1;
    attr.inherit = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    long fd = syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -1 : (int)fd;
#else
    (void)tid;
    errno = ENOSYS;
    return -1;
#endif
}

int cstrobe_instructions_start(int fd) {
#if defined(__linux__)
    if (ioctl(fd, PERF_EVENT_IOC_RESET, 0) != 0) { return -1; }
    return ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) == 0 ? 0 : -1;
#else
    (void)fd;
    errno = ENOSYS;
    return -1;
#endif
}

int cstrobe_instructions_stop(int fd, uint64_t *value) {
#if defined(__linux__)
    if (ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) != 0) { return -1; }
    uint64_t reading[3] = {0, 0, 0};
    ssize_t got = read(fd, reading, sizeof reading);
    if (got != (ssize_t)sizeof reading) {
        if (got >= 0) { errno = EIO; }
        return -1;
    }
    // value, time enabled, time running: a counter multiplexed with others
    // ran part of the time and is scaled up to the whole.
    uint64_t count = reading[0];
    if (reading[2] > 0 && reading[2] < reading[1]) {
        count = (uint64_t)((double)count * (double)reading[1] / (double)reading[2]);
    }
    *value = count;
    return 0;
#else
    (void)fd;
    (void)value;
    errno = ENOSYS;
    return -1;
#endif
}

int cstrobe_counting_fix_layout_for_children(void) {
#if defined(__linux__)
    int current = personality(0xffffffff);
    if (current == -1) { return -1; }
    return personality((unsigned long)current | ADDR_NO_RANDOMIZE) == -1 ? -1 : 0;
#else
    errno = ENOSYS;
    return -1;
#endif
}
