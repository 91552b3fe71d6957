// The CPU profiler's sampling: one sampler per thread, either a kernel
// perf event (the software CPU clock, user call chains, an mmap ring) or,
// where the kernel refuses one, a CPU-time timer whose signal handler walks
// frame pointers into a preallocated ring. Both give the same records to the
// background writer through `cstrobe_sampler_drain`.

#ifndef CSTROBE_PROFILER_H
#define CSTROBE_PROFILER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The most frames a sample keeps (the kernel's default limit).
#define CSTROBE_SAMPLE_MAX_FRAMES 127

/// The words at the top of the interrupted stack a sample keeps beside its
/// frames (512 bytes): where a function keeps no frame pointer (a leaf of
/// libm, or any function in its prologue or epilogue), the writer unwinds
/// it by its call-frame information, which finds the return address into
/// its caller at an offset from the stack pointer.
#define CSTROBE_SAMPLE_STACK_WORDS 64

/// How a sampler samples.
typedef enum {
    /// A perf event on the software CPU clock; the kernel walks the stack.
    CSTROBE_SAMPLER_PERF_EVENT = 1,
    /// A CPU-time timer and a signal handler that walks frame pointers.
    CSTROBE_SAMPLER_CPU_TIMER = 2,
} cstrobe_sampler_kind;

/// One thread's sampler. Opaque; the writer drains and closes it.
typedef struct cstrobe_sampler cstrobe_sampler;

/// Opens a perf-event sampler on thread `tid` of this process, sampling
/// every `period_ns` of the thread's CPU time, with timestamps on
/// CLOCK_BOOTTIME, into a ring of `ring_pages` pages (a power of two;
/// halved, down to 4, while the locked-memory limit refuses it).
/// Returns 0, or the errno of the call that failed (EACCES or EPERM where
/// `perf_event_paranoid` or seccomp forbid it, ENOSYS or ENOENT where the
/// kernel has no perf events).
int cstrobe_sampler_open_perf(int32_t tid, uint64_t period_ns, size_t ring_pages, cstrobe_sampler **out);

/// Opens a CPU-time-timer sampler on the calling thread, sampling every
/// `period_ns` of its CPU time into a ring of `ring_words` words. Installs
/// the SIGPROF handler first if need be. Returns 0 or an errno.
int cstrobe_sampler_open_timer(uint64_t period_ns, size_t ring_words, cstrobe_sampler **out);

/// The thread a sampler samples.
int32_t cstrobe_sampler_tid(const cstrobe_sampler *sampler);

/// Moves whole samples from the sampler's ring into `out` (at most
/// `capacity` words), each as: word 0 the thread id in the low 32 bits and
/// the CPU in the high 32, word 1 the CLOCK_BOOTTIME time in nanoseconds,
/// word 2 the frame count `n` in the low 32 bits and the count `k` of
/// unwind words in the high 32, then `n` program counters, innermost first
/// (the interrupted one, then the frame-pointer walk's return addresses),
/// then the `k` unwind words: none where the sample has no registers, else
/// the interrupted stack pointer, the frame pointer, and up to
/// `CSTROBE_SAMPLE_STACK_WORDS` words at the stack pointer, lowest address
/// first. Returns the words written; call again while it returns more than
/// 0. Adds the samples the ring lost since the last call to `*lost`.
size_t cstrobe_sampler_drain(cstrobe_sampler *sampler, uint64_t *out, size_t capacity, uint64_t *lost);

/// Stops sampling. A perf sampler's ring stays readable until
/// `cstrobe_sampler_close`; a timer sampler's too.
void cstrobe_sampler_stop(cstrobe_sampler *sampler);

/// Releases the sampler. A perf sampler's fd and ring are unmapped; a timer
/// sampler's memory returns to a pool for the next timer sampler (never to
/// the system, since a signal already queued may still land in it).
void cstrobe_sampler_close(cstrobe_sampler *sampler);

/// Samples taken so far by timer samplers' handlers, process-wide (for tests).
uint64_t cstrobe_sampler_timer_samples(void);

/// A perf event that samples and is never read: the benchmarks' floor.
typedef struct cstrobe_perf_floor cstrobe_perf_floor;

/// For the benchmarks' floor: a perf event on the calling thread's software
/// CPU clock sampling every `period_ns`, with the user call chain, registers
/// and stack words Strobe's samplers ask for when `as_strobe` is set (else the thread
/// id alone), into a 32-page ring (as Strobe's) nobody decodes (left full, the kernel
/// counts samples lost and still takes every interrupt; drained with
/// `cstrobe_perf_floor_discard`, it writes them all). It measures what the
/// kernel's sampling costs by itself. Returns NULL with `*error` set to
/// the errno where the kernel refuses.
cstrobe_perf_floor *cstrobe_perf_floor_open(uint64_t period_ns, int as_strobe, int *error);

/// Throws away what the floor's ring holds, as a reader that decodes nothing
/// would: with the ring drained, the kernel writes every sample (a full ring
/// costs it less, since it drops the sample before copying it). Returns the
/// bytes thrown away.
uint64_t cstrobe_perf_floor_discard(cstrobe_perf_floor *floor);

/// Stops, unmaps and frees what `cstrobe_perf_floor_open` opened.
void cstrobe_perf_floor_close(cstrobe_perf_floor *floor);

/// The ELF note of the GNU build id of the file at `path` into `out`
/// (at most `capacity` bytes); returns its length, or 0 when it has none.
size_t cstrobe_elf_build_id(const char *path, uint8_t *out, size_t capacity);

/// Calls `swift_demangle` from the Swift runtime when the process has it:
/// the demangled text of `name` into `out` (NUL-terminated), returning its
/// length, or 0 when the name is not a Swift symbol or there is no runtime.
size_t cstrobe_swift_demangle(const char *name, size_t length, char *out, size_t capacity);

/// Calls the C++ runtime's `__cxa_demangle` when the process has it (the
/// Swift runtime links it on Linux): the demangled text of `name` into `out`,
/// returning its length, or 0. Allocates: for the writer, never a handler.
size_t cstrobe_cxx_demangle(const char *name, char *out, size_t capacity);

/// The GNU build id of this process's vDSO, read from its image in memory
/// (`getauxval(AT_SYSINFO_EHDR)`), as `cstrobe_elf_build_id`.
size_t cstrobe_vdso_build_id(uint8_t *out, size_t capacity);

/// A file's ELF symbol table (`.symtab`, else `.dynsym`), function symbols
/// sorted by address, one per address (the preferred of its names), with its
/// loadable segments. Where the dynamic table names an IFUNC (libm's `sin`)
/// and the library is loaded, the implementation the IFUNC chose is named
/// after it too, over the extent of its FDE. Opaque.
typedef struct cstrobe_elf_symbols cstrobe_elf_symbols;

/// Loads the function symbols of the ELF file at `path`; NULL when it cannot
/// be read or is not a 64-bit ELF file of this machine's byte order.
cstrobe_elf_symbols *cstrobe_elf_symbols_load(const char *path);

/// Loads the function symbols of this process's vDSO from its image in
/// memory; NULL when there is none.
cstrobe_elf_symbols *cstrobe_vdso_symbols_load(void);

/// The name of the function holding the byte at `file_offset` of the file
/// (as a mapping of it places that byte), or NULL when no symbol covers it.
/// `*symbol_offset` is set to the address of that byte minus the symbol's
/// (the offset into the function). The name lives as long as the table.
const char *cstrobe_elf_symbols_lookup(const cstrobe_elf_symbols *symbols, uint64_t file_offset,
                                       uint64_t *symbol_offset);

/// The address (the file's own, before the library is placed in memory) and
/// the size of the function named `name`; 0 when the table holds no function
/// of that name (a stripped file, or an address another name kept).
int cstrobe_elf_symbols_find(const cstrobe_elf_symbols *symbols, const char *name, uint64_t *address,
                             uint64_t *size);

/// The number of function symbols loaded.
size_t cstrobe_elf_symbols_count(const cstrobe_elf_symbols *symbols);

/// Frees the table.
void cstrobe_elf_symbols_free(cstrobe_elf_symbols *symbols);

#ifdef __cplusplus
}
#endif

#endif
