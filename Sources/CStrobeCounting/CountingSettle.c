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
// waited for no longer than that. The limit is of the CPU time those
// threads get while the window waits, not of the clock: on a loaded
// machine a helper can wait for a CPU longer than the limit before it runs
// its tail (the demo's `apply lens` counted 318 or 319 releases beside a
// sanitizer build and a fuzzer), and waiting for a CPU is not running. The
// clock bounds the wait at `SETTLE_CLOCK_FACTOR` times the limit.
//
// Nothing here allocates or retains: the window is open. A thread's state
// is the third field of /proc/self/task/TID/stat, its CPU time the first of
// /proc/self/task/TID/schedstat, each read with open and read into a buffer
// on the stack.

#define _GNU_SOURCE

#include "CStrobeCounting.h"
#include "CountingState.h"

#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/// How many times the limit the clock may run while the threads waited for
/// have had less CPU time than the limit.
#define SETTLE_CLOCK_FACTOR 20

/// Reads /proc/self/task/TID/FILE into `buffer` (NUL-terminated); returns
/// the bytes read, or 0 when the thread has exited or the file cannot be
/// read.
static ssize_t read_task_file(pid_t tid, const char *file, char *buffer, size_t capacity) {
    // "/proc/self/task/" + the id in decimal + "/" + FILE, without printf.
    char path[64] = "/proc/self/task/";
    size_t length = strlen(path);
    char digits[16];
    int count = 0;
    for (unsigned value = (unsigned)tid; value != 0 && count < 15; value /= 10) {
        digits[count++] = (char)('0' + value % 10);
    }
    if (count == 0 || strlen(file) + length + count + 2 > sizeof path) { return 0; }
    while (count > 0) { path[length++] = digits[--count]; }
    path[length++] = '/';
    memcpy(path + length, file, strlen(file) + 1);
    int descriptor = open(path, O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) { return 0; }
    ssize_t read_bytes = read(descriptor, buffer, capacity - 1);
    close(descriptor);
    if (read_bytes <= 0) { return 0; }
    buffer[read_bytes] = 0;
    return read_bytes;
}

/// Whether thread `tid` of this process is running or waiting for a CPU
/// (state R); 0 when it sleeps, has exited, or its state cannot be read.
static int is_running(pid_t tid) {
    char buffer[512];
    if (read_task_file(tid, "stat", buffer, sizeof buffer) == 0) { return 0; }
    // "TID (COMMAND) STATE ...": the command may hold spaces and parentheses.
    char *end_of_command = strrchr(buffer, ')');
    if (end_of_command == NULL || end_of_command[1] != ' ') { return 0; }
    return end_of_command[2] == 'R';
}

/// The CPU time thread `tid` has had, in nanoseconds (the first field of
/// its schedstat); -1 when it cannot be read.
static int64_t cpu_nanoseconds(pid_t tid) {
    char buffer[128];
    if (read_task_file(tid, "schedstat", buffer, sizeof buffer) == 0) { return -1; }
    int64_t value = 0;
    const char *digit = buffer;
    if (*digit < '0' || *digit > '9') { return -1; }
    for (; *digit >= '0' && *digit <= '9'; digit++) { value = value * 10 + (*digit - '0'); }
    return value;
}

static uint64_t now_nanoseconds(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return (uint64_t)time.tv_sec * 1000000000u + (uint64_t)time.tv_nsec;
}

/// Whether a record is another thread's that counted in the window.
static int is_other_counting(cstrobe_thread_counts *record, cstrobe_thread_counts *mine) {
    return record != mine && record->tid != 0 && cstrobe_counting_record_counted(record);
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
/// Adds to `*spent` the CPU time each running one had since the last call
/// that saw it running; sets `*unknown` when one's CPU time cannot be read.
static int others_running(int64_t *spent, int *unknown) {
    cstrobe_thread_counts *mine = cstrobe_counting_mine;
    int running = 0;
    for (cstrobe_thread_counts *record = atomic_load_explicit(&cstrobe_counting.threads, memory_order_acquire);
         record != NULL; record = record->next) {
        if (!is_other_counting(record, mine)) { continue; }
        if (!is_running(record->tid)) {
            record->settle_cpu = -1;
            continue;
        }
        running = 1;
        int64_t used = cpu_nanoseconds(record->tid);
        if (used < 0) {
            *unknown = 1;
        } else if (record->settle_cpu >= 0 && used >= record->settle_cpu) {
            *spent += used - record->settle_cpu;
        }
        record->settle_cpu = used;
    }
    return running;
}

uint64_t cstrobe_counting_settle(uint64_t limit_nanoseconds) {
    if (!atomic_load_explicit(&cstrobe_counting.open, memory_order_relaxed) || !others_counted()) { return 0; }
    uint64_t start = now_nanoseconds();
    for (cstrobe_thread_counts *record = atomic_load_explicit(&cstrobe_counting.threads, memory_order_acquire);
         record != NULL; record = record->next) {
        record->settle_cpu = -1;
    }
    // The CPU time the threads waited for have had while running since the
    // wait began.
    int64_t spent = 0;
    int unknown = 0;
    // At least one short sleep: under a simulator that runs one thread at a
    // time, the others run their tails only while this one blocks.
    while (1) {
        struct timespec pause = {0, 50000};
        nanosleep(&pause, NULL);
        if (!others_running(&spent, &unknown)) { break; }
        uint64_t elapsed = now_nanoseconds() - start;
        // Where no CPU time can be read, the clock is the limit.
        if (elapsed >= (unknown ? 1 : SETTLE_CLOCK_FACTOR) * limit_nanoseconds) { break; }
        if (spent >= (int64_t)limit_nanoseconds) { break; }
    }
    return now_nanoseconds() - start;
}
