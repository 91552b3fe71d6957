#define _GNU_SOURCE
#include "CStrobeProcess.h"

#include <errno.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

int cstrobe_process_exit_descriptor(int pid) {
#if defined(__linux__) && defined(SYS_pidfd_open)
    return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}
