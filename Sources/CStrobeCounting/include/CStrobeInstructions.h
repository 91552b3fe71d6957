// Instructions a stretch of code executes, in user space: counted by the
// CPU's hardware counter (a perf event per thread) where the machine has
// one, or by a simulation (callgrind, with the whole process run under
// Valgrind) where it does not.
//
// The simulation is steered by Valgrind's client requests: a few
// instructions that do nothing on a real CPU and that Valgrind recognises.
// They are compiled in when Valgrind's headers (Debian's `valgrind`) are
// present at build time.

#ifndef CSTROBE_INSTRUCTIONS_H
#define CSTROBE_INSTRUCTIONS_H

#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Whether this build can steer a simulation (Valgrind's client requests
/// were compiled in).
int cstrobe_simulation_built(void);

/// Whether the process runs under Valgrind now.
int cstrobe_simulation_running(void);

/// Starts counting every thread's instructions in the simulation: turns its
/// instrumentation on and zeroes its counts.
void cstrobe_simulation_begin(void);

/// Stops counting and has the simulation write what it counted since
/// `cstrobe_simulation_begin` to its next dump file, labelled `label`.
void cstrobe_simulation_end(const char *label);

/// Opens a counter of the user-space instructions retired by thread `tid`
/// (and the threads it starts while the counter is open), disabled. Returns
/// the counter's descriptor, or -1 with errno set (ENOENT or EOPNOTSUPP
/// where the CPU exposes no such counter, as in most virtual machines).
int cstrobe_instructions_open(pid_t tid);

/// Zeroes and enables the counter `fd`.
int cstrobe_instructions_start(int fd);

/// Disables the counter `fd` and reads it into `value`. Returns 0, or -1
/// with errno set. A counter the kernel had to share with others is scaled
/// by the share of the time it ran.
int cstrobe_instructions_stop(int fd, uint64_t *value);

#ifdef __cplusplus
}
#endif

#endif
