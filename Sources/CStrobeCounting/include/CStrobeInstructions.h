// Instructions a stretch of code executes, in user space: counted by the
// CPU's hardware counter (a perf event per thread) where the machine has
// one, or where it does not by a simulation (callgrind, with the whole
// process run under Valgrind) or an emulation (the whole process run by
// QEMU's user-mode emulator with Strobe's counting plugin).
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

/// The system call number the emulation's counting plugin watches for. No
/// kernel defines it: outside the emulator the call fails with ENOSYS and
/// does nothing. This and the marks below are the plugin's only definition
/// (StrobePerf's QEMUCountingPlugin.c is built with them as `-D` flags).
#define CSTROBE_EMULATION_SYSCALL 0x5354524fL

/// What a marking call asks of the emulation's counting plugin.
enum {
    /// Start a window: note every thread's count so far.
    CSTROBE_EMULATION_BEGIN = 1,
    /// End the window: write what every thread executed since its start.
    CSTROBE_EMULATION_END = 2,
};

/// Marks the start or end (`CSTROBE_EMULATION_BEGIN` or `_END`) of a
/// counting window for the emulation's plugin, with a system call it
/// watches for. Does nothing outside the emulator but fail with ENOSYS.
void cstrobe_emulation_mark(int mark);

/// Turns address-space randomization off for the processes this one starts
/// from now on (`personality(ADDR_NO_RANDOMIZE)`, what `setarch -R` does),
/// so that a counting child's heap, stack and libraries lie at the same
/// addresses in every run. Returns 0, or -1 with errno set.
int cstrobe_counting_fix_layout_for_children(void);

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
