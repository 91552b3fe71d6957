#include "CStrobeProbes.h"

#if defined(__linux__) && defined(__has_include)
#if __has_include(<sys/sdt.h>)
#include <sys/sdt.h>
#define CSTROBE_HAVE_SDT 1
#endif
#endif

#ifndef CSTROBE_HAVE_SDT
#define CSTROBE_HAVE_SDT 0
#define STAP_PROBE2(provider, probe, a, b) ((void)(a), (void)(b))
#define STAP_PROBE3(provider, probe, a, b, c) ((void)(a), (void)(b), (void)(c))
#endif

int cstrobe_probes_available(void) { return CSTROBE_HAVE_SDT; }

void cstrobe_probe_begin(const char *name, uint64_t name_length, int64_t depth) {
    STAP_PROBE3(strobe, begin, name, name_length, depth);
}

void cstrobe_probe_end(const char *name, uint64_t name_length, int64_t depth) {
    STAP_PROBE3(strobe, end, name, name_length, depth);
}

void cstrobe_probe_instant(const char *name, uint64_t name_length) {
    STAP_PROBE2(strobe, instant, name, name_length);
}

void cstrobe_probe_counter(const char *name, uint64_t name_length, int64_t value) {
    STAP_PROBE3(strobe, counter, name, name_length, value);
}

void cstrobe_probe_counter_f64(const char *name, uint64_t name_length, uint64_t value_bits) {
    STAP_PROBE3(strobe, counter_f64, name, name_length, value_bits);
}

void cstrobe_probe_async_begin(const char *name, uint64_t name_length, uint64_t id) {
    STAP_PROBE3(strobe, async_begin, name, name_length, id);
}

void cstrobe_probe_async_end(const char *name, uint64_t name_length, uint64_t id) {
    STAP_PROBE3(strobe, async_end, name, name_length, id);
}
