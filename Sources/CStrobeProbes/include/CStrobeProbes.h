// USDT probes (statically defined tracing points) for Strobe's events.
//
// Each function holds one probe of the provider `strobe`. Until a tool such as
// `perf` or `bpftrace` attaches, a probe is a single `nop` and the call costs
// only the call. The probes and their arguments:
//
//   strobe:begin         (const char *name, uint64 name_length, int64 depth)
//   strobe:end           (const char *name, uint64 name_length, int64 depth)
//   strobe:instant       (const char *name, uint64 name_length)
//   strobe:counter       (const char *name, uint64 name_length, int64 value)
//   strobe:counter_f64   (const char *name, uint64 name_length, uint64 value_bits)
//   strobe:async_begin   (const char *name, uint64 name_length, uint64 id)
//   strobe:async_end     (const char *name, uint64 name_length, uint64 id)
//
// Names are UTF-8 and not NUL-terminated: read them with the length, for
// example `str(arg0, arg1)` in bpftrace. `depth` is the nesting level of the
// interval on its thread, 0 for the outermost. `value_bits` is the IEEE 754
// bit pattern of a floating-point counter value.

#ifndef CSTROBE_PROBES_H
#define CSTROBE_PROBES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when this build carries the probes (sys/sdt.h was found), else 0.
int cstrobe_probes_available(void);

void cstrobe_probe_begin(const char *name, uint64_t name_length, int64_t depth);
void cstrobe_probe_end(const char *name, uint64_t name_length, int64_t depth);
void cstrobe_probe_instant(const char *name, uint64_t name_length);
void cstrobe_probe_counter(const char *name, uint64_t name_length, int64_t value);
void cstrobe_probe_counter_f64(const char *name, uint64_t name_length, uint64_t value_bits);
void cstrobe_probe_async_begin(const char *name, uint64_t name_length, uint64_t id);
void cstrobe_probe_async_end(const char *name, uint64_t name_length, uint64_t id);

#ifdef __cplusplus
}
#endif

#endif
