// Call-frame information for the CPU profiler: where a sampled function's
// caller left its return address, read from the `.eh_frame` of the module
// the function is in (present even in stripped libraries), for the
// background writer to unwind a frame that keeps no frame pointer.

#ifndef CSTROBE_UNWIND_H
#define CSTROBE_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// How a register of the caller is found, by the rules of DWARF's
/// call-frame information.
typedef enum {
    /// The caller's value is the callee's (the register was not saved).
    CSTROBE_SAVED_UNCHANGED = 0,
    /// The value is in memory at the CFA plus `offset`.
    CSTROBE_SAVED_AT_CFA = 1,
    /// The register has no value in the caller: for the return address,
    /// the outermost frame.
    CSTROBE_SAVED_UNDEFINED = 2,
    /// A rule this reader does not follow (an expression, another
    /// register).
    CSTROBE_SAVED_UNSUPPORTED = 3,
} cstrobe_saved_rule;

/// What the call-frame information says at one address: the canonical
/// frame address (CFA) as a register plus an offset, and where the return
/// address and the frame pointer of the caller are kept.
typedef struct {
    /// The DWARF register the CFA is computed from (x86-64: 7 the stack
    /// pointer, 6 the frame pointer), or -1 when it is an expression.
    int32_t cfa_register;
    int64_t cfa_offset;
    cstrobe_saved_rule return_address;
    int64_t return_address_offset;
    cstrobe_saved_rule frame_pointer;
    int64_t frame_pointer_offset;
    /// The address range of the function (its FDE) in the process.
    uint64_t function_start;
    uint64_t function_end;
} cstrobe_cfa_rule;

/// The DWARF numbers of x86-64's frame pointer, stack pointer and return
/// address column.
#define CSTROBE_DWARF_FP 6
#define CSTROBE_DWARF_SP 7
#define CSTROBE_DWARF_RA 16

/// The rule at `address` of this process: finds the loaded module holding
/// it (`dl_iterate_phdr`, under the loader's lock, so the module cannot be
/// unloaded meanwhile), its `.eh_frame_hdr` table, the FDE covering the
/// address, and runs its CIE's and its own CFA program up to the address.
/// Returns 1 with `*rule` set, or 0 where no FDE covers the address or it
/// cannot be read.
int cstrobe_cfa_rule_at(uint64_t address, cstrobe_cfa_rule *rule);

/// The rule at `address` from the FDE at `fde` (an FDE of an `.eh_frame`
/// in memory, its CIE found through its CIE pointer as in `.eh_frame`),
/// for tests and for `cstrobe_cfa_rule_at`. Returns 1 with `*rule` set, or
/// 0 when the FDE is malformed or does not cover the address.
int cstrobe_cfa_rule_from_fde(const uint8_t *fde, uint64_t address, cstrobe_cfa_rule *rule);

#ifdef __cplusplus
}
#endif

#endif
