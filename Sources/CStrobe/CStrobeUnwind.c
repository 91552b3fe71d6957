// Call-frame information (see CStrobeUnwind.h): the `.eh_frame_hdr` table
// of a loaded module, its CIEs and FDEs, and the CFA program that says, at
// each address of a function, where its caller's frame is.

#define _GNU_SOURCE
#include "CStrobeUnwind.h"

#include <stdbool.h>
#include <string.h>

#if defined(__linux__)
#include <elf.h>
#include <link.h>
#endif

// MARK: - Reading encoded values

typedef struct {
    const uint8_t *at;
    const uint8_t *end;
    bool failed;
} cursor;

static uint8_t read_u8(cursor *c) {
    if (c->at + 1 > c->end) {
        c->failed = true;
        return 0;
    }
    return *c->at++;
}

static uint64_t read_fixed(cursor *c, size_t size) {
    if (c->at + size > c->end) {
        c->failed = true;
        return 0;
    }
    uint64_t value = 0;
    memcpy(&value, c->at, size);  // little-endian, as x86-64 and AArch64
    c->at += size;
    return value;
}

static uint64_t read_uleb(cursor *c) {
    uint64_t value = 0;
    unsigned shift = 0;
    while (true) {
        uint8_t byte = read_u8(c);
        if (c->failed) return 0;
        if (shift < 64) value |= (uint64_t)(byte & 0x7f) << shift;
        shift += 7;
        if (!(byte & 0x80)) return value;
    }
}

static int64_t read_sleb(cursor *c) {
    uint64_t value = 0;
    unsigned shift = 0;
    uint8_t byte;
    do {
        byte = read_u8(c);
        if (c->failed) return 0;
        if (shift < 64) value |= (uint64_t)(byte & 0x7f) << shift;
        shift += 7;
    } while (byte & 0x80);
    if (shift < 64 && (byte & 0x40)) value |= ~(uint64_t)0 << shift;
    return (int64_t)value;
}

#define PE_OMIT 0xff

/// A pointer in the `DW_EH_PE_*` encoding `encoding`; `data_base` is what
/// `DW_EH_PE_datarel` is relative to.
static uint64_t read_encoded(cursor *c, uint8_t encoding, uint64_t data_base) {
    if (encoding == PE_OMIT) return 0;
    uint64_t place = (uint64_t)(uintptr_t)c->at;
    uint64_t value;
    switch (encoding & 0x0f) {
    case 0x00: value = read_fixed(c, 8); break;
    case 0x01: value = read_uleb(c); break;
    case 0x02: value = read_fixed(c, 2); break;
    case 0x03: value = read_fixed(c, 4); break;
    case 0x04: value = read_fixed(c, 8); break;
    case 0x09: value = (uint64_t)read_sleb(c); break;
    case 0x0a: value = (uint64_t)(int64_t)(int16_t)read_fixed(c, 2); break;
    case 0x0b: value = (uint64_t)(int64_t)(int32_t)read_fixed(c, 4); break;
    case 0x0c: value = read_fixed(c, 8); break;
    default: c->failed = true; return 0;
    }
    switch (encoding & 0x70) {
    case 0x00: break;
    case 0x10: value += place; break;
    case 0x30: value += data_base; break;
    default: c->failed = true; return 0;
    }
    return value;
}

// MARK: - CIEs and FDEs

typedef struct {
    uint64_t code_alignment;
    int64_t data_alignment;
    uint64_t return_column;
    uint8_t fde_encoding;
    bool has_augmentation_data;
    const uint8_t *instructions;
    const uint8_t *end;
} cie_info;

/// Where an entry's body starts and ends: the length is 4 bytes, or 12
/// for the 64-bit form.
static bool entry_bounds(const uint8_t *entry, const uint8_t **body, const uint8_t **end) {
    uint32_t length32;
    memcpy(&length32, entry, 4);
    if (length32 == 0) return false;
    if (length32 == 0xffffffffu) {
        uint64_t length64;
        memcpy(&length64, entry + 4, 8);
        *body = entry + 12;
        *end = *body + length64;
    } else {
        *body = entry + 4;
        *end = *body + length32;
    }
    return true;
}

static bool parse_cie(const uint8_t *entry, cie_info *cie) {
    const uint8_t *body, *end;
    if (!entry_bounds(entry, &body, &end)) return false;
    cursor c = {body, end, false};
    if (read_fixed(&c, 4) != 0) return false;  // a CIE's id in .eh_frame
    uint8_t version = read_u8(&c);
    const char *augmentation = (const char *)c.at;
    size_t length = strnlen(augmentation, (size_t)(end - c.at));
    c.at += length + 1;
    if (version != 1 && version != 3 && version != 4) return false;
    if (version == 4) c.at += 2;  // address and segment sizes
    if (strstr(augmentation, "eh")) c.at += 8;
    cie->code_alignment = read_uleb(&c);
    cie->data_alignment = read_sleb(&c);
    cie->return_column = version == 1 ? read_u8(&c) : read_uleb(&c);
    cie->fde_encoding = 0;
    cie->has_augmentation_data = augmentation[0] == 'z';
    if (cie->has_augmentation_data) {
        uint64_t size = read_uleb(&c);
        const uint8_t *data_end = c.at + size;
        for (const char *letter = augmentation + 1; *letter && !c.failed; letter++) {
            if (*letter == 'R') {
                cie->fde_encoding = read_u8(&c);
            } else if (*letter == 'L') {
                read_u8(&c);
            } else if (*letter == 'P') {
                uint8_t encoding = read_u8(&c);
                read_encoded(&c, encoding & 0x7f, 0);
            } else if (*letter != 'S' && *letter != 'B') {
                break;
            }
        }
        c.at = data_end;
    }
    if (c.failed || c.at > end) return false;
    cie->instructions = c.at;
    cie->end = end;
    return true;
}

// MARK: - The CFA program

#define TRACKED_REGISTERS 17
#define STATE_DEPTH 8

typedef struct {
    cstrobe_saved_rule rule;
    int64_t offset;
} register_rule;

typedef struct {
    int32_t cfa_register;
    int64_t cfa_offset;
    register_rule registers[TRACKED_REGISTERS];
} frame_state;

static void set_rule(frame_state *state, uint64_t reg, cstrobe_saved_rule rule, int64_t offset) {
    if (reg < TRACKED_REGISTERS) state->registers[reg] = (register_rule){rule, offset};
}

/// A CFA expression: the one the linker writes for a PLT, where the CFA is
/// rsp + 8, or rsp + 16 past the `push` at offset N of each 16-byte entry
/// (`breg7 8; breg16 0; lit15; and; litN; ge; lit3; shl; plus`), is
/// evaluated at `address`; any other makes the CFA unknown.
static void plt_cfa(const uint8_t *expression, uint64_t length, uint64_t address, frame_state *state) {
    static const uint8_t before[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a};
    static const uint8_t after[] = {0x2a, 0x33, 0x24, 0x22};
    state->cfa_register = -1;
    if (length != 11 || memcmp(expression, before, 6) != 0 || memcmp(expression + 7, after, 4) != 0) return;
    if (expression[6] < 0x30 || expression[6] > 0x4f) return;
    uint64_t push = expression[6] - 0x30u;
    state->cfa_register = CSTROBE_DWARF_SP;
    state->cfa_offset = (address & 15) >= push ? 16 : 8;
}

/// Runs `instructions` until the location passes `target`: returns false on
/// an instruction it does not know (the rule is then unknown).
static bool run_program(const uint8_t *instructions, const uint8_t *end, const cie_info *cie, uint64_t *location,
                        uint64_t target, frame_state *state, const frame_state *initial) {
    cursor c = {instructions, end, false};
    frame_state stack[STATE_DEPTH];
    size_t depth = 0;
    while (c.at < c.end && !c.failed) {
        uint8_t op = read_u8(&c);
        uint64_t advance = 0;
        switch (op >> 6) {
        case 1: advance = (op & 0x3f) * cie->code_alignment; break;
        case 2: set_rule(state, op & 0x3f, CSTROBE_SAVED_AT_CFA, (int64_t)read_uleb(&c) * cie->data_alignment); break;
        case 3:
            if ((op & 0x3f) < TRACKED_REGISTERS) state->registers[op & 0x3f] = initial->registers[op & 0x3f];
            break;
        default:
            switch (op) {
            case 0x00: break;  // nop
            case 0x01: *location = read_encoded(&c, cie->fde_encoding, 0); break;
            case 0x02: advance = read_fixed(&c, 1) * cie->code_alignment; break;
            case 0x03: advance = read_fixed(&c, 2) * cie->code_alignment; break;
            case 0x04: advance = read_fixed(&c, 4) * cie->code_alignment; break;
            case 0x05: {
                uint64_t reg = read_uleb(&c);
                set_rule(state, reg, CSTROBE_SAVED_AT_CFA, (int64_t)read_uleb(&c) * cie->data_alignment);
                break;
            }
            case 0x06: {
                uint64_t reg = read_uleb(&c);
                if (reg < TRACKED_REGISTERS) state->registers[reg] = initial->registers[reg];
                break;
            }
            case 0x07: set_rule(state, read_uleb(&c), CSTROBE_SAVED_UNDEFINED, 0); break;
            case 0x08: set_rule(state, read_uleb(&c), CSTROBE_SAVED_UNCHANGED, 0); break;
            case 0x09: {
                uint64_t reg = read_uleb(&c);
                read_uleb(&c);
                set_rule(state, reg, CSTROBE_SAVED_UNSUPPORTED, 0);
                break;
            }
            case 0x0a:
                if (depth == STATE_DEPTH) return false;
                stack[depth++] = *state;
                break;
            case 0x0b: {
                if (depth == 0) return false;
                // The whole row, the CFA with it, as libgcc's unwinder and
                // LLVM's restore it: an epilogue's remember/restore pair
                // brings back the body's CFA.
                *state = stack[--depth];
                break;
            }
            case 0x0c:
                state->cfa_register = (int32_t)read_uleb(&c);
                state->cfa_offset = (int64_t)read_uleb(&c);
                break;
            case 0x0d: state->cfa_register = (int32_t)read_uleb(&c); break;
            case 0x0e: state->cfa_offset = (int64_t)read_uleb(&c); break;
            case 0x0f: {
                uint64_t length = read_uleb(&c);
                plt_cfa(c.at, length, target, state);
                c.at += length;
                break;
            }
            case 0x10: case 0x16: {
                uint64_t reg = read_uleb(&c);
                uint64_t length = read_uleb(&c);
                c.at += length;
                set_rule(state, reg, CSTROBE_SAVED_UNSUPPORTED, 0);
                break;
            }
            case 0x11: {
                uint64_t reg = read_uleb(&c);
                set_rule(state, reg, CSTROBE_SAVED_AT_CFA, read_sleb(&c) * cie->data_alignment);
                break;
            }
            case 0x12:
                state->cfa_register = (int32_t)read_uleb(&c);
                state->cfa_offset = read_sleb(&c) * cie->data_alignment;
                break;
            case 0x13: state->cfa_offset = read_sleb(&c) * cie->data_alignment; break;
            case 0x14: case 0x15: {
                uint64_t reg = read_uleb(&c);
                if (op == 0x14) read_uleb(&c);
                else read_sleb(&c);
                set_rule(state, reg, CSTROBE_SAVED_UNSUPPORTED, 0);
                break;
            }
            case 0x2e: read_uleb(&c); break;  // GNU_args_size
            case 0x2f: {
                uint64_t reg = read_uleb(&c);
                set_rule(state, reg, CSTROBE_SAVED_AT_CFA, -(int64_t)read_uleb(&c) * cie->data_alignment);
                break;
            }
            default: return false;
            }
        }
        if (advance) {
            if (*location + advance > target) return !c.failed;
            *location += advance;
        }
    }
    return !c.failed;
}

int cstrobe_cfa_rule_from_fde(const uint8_t *fde, uint64_t address, cstrobe_cfa_rule *rule) {
    const uint8_t *body, *end;
    if (!entry_bounds(fde, &body, &end)) return 0;
    cursor c = {body, end, false};
    uint32_t cie_pointer = (uint32_t)read_fixed(&c, 4);
    if (cie_pointer == 0) return 0;  // a CIE, not an FDE
    cie_info cie;
    if (!parse_cie(body - cie_pointer, &cie)) return 0;
    uint64_t start = read_encoded(&c, cie.fde_encoding, 0);
    uint64_t range = read_encoded(&c, cie.fde_encoding & 0x0f, 0);
    if (cie.has_augmentation_data) {
        uint64_t length = read_uleb(&c);
        c.at += length;
    }
    if (c.failed || c.at > end || address < start || address >= start + range) return 0;
    frame_state initial;
    memset(&initial, 0, sizeof initial);
    uint64_t location = start;
    if (!run_program(cie.instructions, cie.end, &cie, &location, UINT64_MAX, &initial, &initial)) return 0;
    frame_state state = initial;
    location = start;
    if (!run_program(c.at, end, &cie, &location, address, &state, &initial)) return 0;
    rule->cfa_register = state.cfa_register;
    rule->cfa_offset = state.cfa_offset;
    register_rule saved_ra = cie.return_column < TRACKED_REGISTERS ? state.registers[cie.return_column]
                                                                   : (register_rule){CSTROBE_SAVED_UNSUPPORTED, 0};
    rule->return_address = saved_ra.rule;
    rule->return_address_offset = saved_ra.offset;
    rule->frame_pointer = state.registers[CSTROBE_DWARF_FP].rule;
    rule->frame_pointer_offset = state.registers[CSTROBE_DWARF_FP].offset;
    rule->function_start = start;
    rule->function_end = start + range;
    return 1;
}

// MARK: - Finding the FDE

#if defined(__linux__)

typedef struct {
    uint64_t address;
    cstrobe_cfa_rule *rule;
    int found;
} lookup;

/// Binary search of an `.eh_frame_hdr` table (pairs of 4-byte offsets from
/// the header, sorted by the first: `DW_EH_PE_datarel | DW_EH_PE_sdata4`).
static int search_header(const uint8_t *header, uint64_t address, cstrobe_cfa_rule *rule) {
    if (header[0] != 1 || header[3] != 0x3b) return 0;
    cursor c = {header + 4, header + 4 + 16, false};
    read_encoded(&c, header[1], (uint64_t)(uintptr_t)header);
    uint64_t count = read_encoded(&c, header[2], (uint64_t)(uintptr_t)header);
    if (c.failed || count == 0) return 0;
    const int32_t *table = (const int32_t *)c.at;
    uint64_t base = (uint64_t)(uintptr_t)header;
    size_t low = 0, high = (size_t)count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (base + (uint64_t)(int64_t)table[middle * 2] <= address) low = middle + 1;
        else high = middle;
    }
    if (low == 0) return 0;
    const uint8_t *fde = (const uint8_t *)(uintptr_t)(base + (uint64_t)(int64_t)table[(low - 1) * 2 + 1]);
    return cstrobe_cfa_rule_from_fde(fde, address, rule);
}

static int find_module(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    lookup *wanted = data;
    const ElfW(Phdr) *frame_header = NULL;
    bool inside = false;
    for (size_t i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *program = &info->dlpi_phdr[i];
        uint64_t start = info->dlpi_addr + program->p_vaddr;
        if (program->p_type == PT_LOAD && wanted->address >= start && wanted->address < start + program->p_memsz)
            inside = true;
        if (program->p_type == PT_GNU_EH_FRAME) frame_header = program;
    }
    if (!inside) return 0;
    if (frame_header)
        wanted->found = search_header((const uint8_t *)(uintptr_t)(info->dlpi_addr + frame_header->p_vaddr),
                                      wanted->address, wanted->rule);
    return 1;
}

int cstrobe_cfa_rule_at(uint64_t address, cstrobe_cfa_rule *rule) {
    lookup wanted = {address, rule, 0};
    dl_iterate_phdr(find_module, &wanted);
    return wanted.found;
}

#else

int cstrobe_cfa_rule_at(uint64_t address, cstrobe_cfa_rule *rule) {
    (void)address, (void)rule;
    return 0;
}

#endif
