// The end of a counting window waits for the threads that worked in it.
//
// A measure block that hands work to other threads returns when they
// signal it, and a helper often does a little more after its signal: it
// releases the job it held, frees a buffer, drops a group or a closure.
// Whether that lands before the window closes is the scheduler's choice,
// so an exact count would move by one now and then without the code
// moving. The window therefore stays open until every other thread that
// counted in it has gone to sleep (blocked on a lock, a condition, a
// semaphore, a futex, or in a sleep) or has exited, up to a limit: a
// thread that keeps running (a spinning pool, a busy background thread) is
// waited for no longer than that.
//
// Nothing here allocates or retains: the window is open. A thread's state
// is the third field of /proc/self/task/TID/stat, read with open and read
// into a buffer on the stack.

#define _GNU_SOURCE

#include "CStrobeCounting.h"
#include "CountingState.h"

#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/// Whether the record counted anything in the open window.
static int counted(cstrobe_thread_counts *record) {
    return atomic_load_explicit(&record->allocations, memory_order_relaxed) != 0 ||
           atomic_load_explicit(&record->frees, memory_order_relaxed) != 0 ||
           atomic_load_explicit(&record->retains, memory_order_relaxed) != 0 ||
           atomic_load_explicit(&record->releases, memory_order_relaxed) != 0;
}

/// Whether thread `tid` of this process is running or waiting for a CPU
/// (state R); 0 when it sleeps, has exited, or its state cannot be read.
static int is_running(pid_t tid) {
    // "/proc/self/task/" + the id in decimal + "/stat", without printf.
    char path[48] = "/proc/self/task/";
    size_t length = strlen(path);
    char digits[16];
    int count = 0;
    for (unsigned value = (unsigned)tid; value != 0 && count < 15; value /= 10) {
        digits[count++] = (char)('0' + value % 10);
    }
    if (count == 0) { return 0; }
    while (count > 0) { path[length++] = digits[--count]; }
    memcpy(path + length, "/stat", sizeof "/stat");
    int descriptor = open(path, O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) { return 0; }
    char buffer[512];
    ssize_t read_bytes = read(descriptor, buffer, sizeof buffer - 1);
    close(descriptor);
    if (read_bytes <= 0) { return 0; }
    buffer[read_bytes] = 0;
    // "TID (COMMAND) STATE ...": the command may hold spaces and parentheses.
    char *end_of_command = strrchr(buffer, ')');
    if (end_of_command == NULL || end_of_command[1] != ' ') { return 0; }
    return end_of_command[2] == 'R';
}

static uint64_t now_nanoseconds(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return (uint64_t)time.tv_sec * 1000000000u + (uint64_t)time.tv_nsec;
}

/// Whether a record is another thread's that counted in the window.
static int is_other_counting(cstrobe_thread_counts *record, cstrobe_thread_counts *mine) {
    return record != mine && record->tid != 0 && counted(record);
}

/// Whether another thread counted in the window; reads no thread's state.
static int others_counted(void) {
    cstrobe_thread_counts *mine = cstrobe_counting_mine;
    for (cstrobe_thread_counts *record = atomic_load_explicit(&cstrobe_counting.threads, memory_order_acquire);
         record != NULL; record = record->next) {
        if (is_other_counting(record, mine)) { return 1; }
    }
    return 0;
}

/// Whether another thread that counted in the window is still running.
static int others_running(void) {
    cstrobe_thread_counts *mine = cstrobe_counting_mine;
    for (cstrobe_thread_counts *record = atomic_load_explicit(&cstrobe_counting.threads, memory_order_acquire);
         record != NULL; record = record->next) {
        if (is_other_counting(record, mine) && is_running(record->tid)) { return 1; }
    }
    return 0;
}

uint64_t cstrobe_counting_settle(uint64_t limit_nanoseconds) {
    if (!atomic_load_explicit(&cstrobe_counting.open, memory_order_relaxed) || !others_counted()) { return 0; }
    uint64_t start = now_nanoseconds();
    // At least one short sleep: under a simulator that runs one thread at a
    // time, the others run their tails only while this one blocks.
    do {
        struct timespec pause = {0, 50000};
        nanosleep(&pause, NULL);
    } while (others_running() && now_nanoseconds() - start < limit_nanoseconds);
    return now_nanoseconds() - start;
}
