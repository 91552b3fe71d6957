#ifndef CSTROBE_PROCESS_H
#define CSTROBE_PROCESS_H

/// A descriptor that becomes readable when process `pid` exits (Linux
/// `pidfd_open`), or -1 with errno set where the system has none. The
/// runner waits on it with a timeout instead of polling `waitpid`.
int cstrobe_process_exit_descriptor(int pid);

#endif
