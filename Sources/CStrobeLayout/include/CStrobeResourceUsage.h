// The resource usage a record carries (the six words of a rusage
// attachment, see RecordLayout) and the runtime reads (CStrobeRuntime.h).

#ifndef CSTROBE_RESOURCE_USAGE_H
#define CSTROBE_RESOURCE_USAGE_H

#include <stdint.h>

/// Resource usage of the calling thread (RUSAGE_THREAD) or process (RUSAGE_SELF).
typedef struct cstrobe_rusage {
    uint64_t user_ns;
    uint64_t system_ns;
    uint64_t voluntary_switches;
    uint64_t involuntary_switches;
    uint64_t minor_faults;
    uint64_t major_faults;
    uint64_t max_rss_bytes;
} cstrobe_rusage;

#endif
