// What the CPU profiler needs to name the code it sampled, read off the hot
// path by the background writer: an ELF file's function symbols, its GNU
// build id, and the Swift runtime's demangler (see CStrobeProfiler.h).

#define _GNU_SOURCE
#include "CStrobeProfiler.h"
#include "CStrobeUnwind.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <link.h>
#include <sys/auxv.h>
#include <unistd.h>

typedef struct {
    uint64_t address;
    uint64_t size;
    uint32_t name;  // offset into names
    uint32_t indirect;  // an IFUNC: `address` is its resolver's
} function_symbol;

typedef struct {
    uint64_t offset;
    uint64_t address;
    uint64_t size;
} load_segment;

struct cstrobe_elf_symbols {
    function_symbol *symbols;
    size_t count;
    char *names;
    load_segment segments[16];
    size_t segment_count;
};

/// A read-only mapping of a whole file.
typedef struct {
    const uint8_t *bytes;
    size_t size;
} mapped_file;

static int map_file(const char *path, mapped_file *file) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat status;
    if (fstat(fd, &status) != 0 || status.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return -1;
    }
    void *bytes = mmap(NULL, (size_t)status.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (bytes == MAP_FAILED) return -1;
    file->bytes = bytes;
    file->size = (size_t)status.st_size;
    return 0;
}

static const Elf64_Ehdr *elf_header(const mapped_file *file) {
    const Elf64_Ehdr *header = (const Elf64_Ehdr *)file->bytes;
    if (memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 || header->e_ident[EI_CLASS] != ELFCLASS64) return NULL;
    if (header->e_shoff == 0 || header->e_shentsize != sizeof(Elf64_Shdr)) return NULL;
    if (header->e_shoff + (uint64_t)header->e_shnum * sizeof(Elf64_Shdr) > file->size) return NULL;
    return header;
}

/// Which of two names of one address a profile shows: one without a
/// leading underscore (`clock_gettime`, not `__vdso_clock_gettime`), then
/// the shorter (`sin`, not `sinf64`), then the first in byte order.
static int compare_names(const char *a, const char *b) {
    if ((a[0] == '_') != (b[0] == '_')) return a[0] == '_' ? 1 : -1;
    size_t left = strlen(a), right = strlen(b);
    if (left != right) return left < right ? -1 : 1;
    return strcmp(a, b);
}

static int compare_symbols(const void *left, const void *right, void *names) {
    const function_symbol *a = left, *b = right;
    if (a->address != b->address) return a->address < b->address ? -1 : 1;
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    return compare_names((const char *)names + a->name, (const char *)names + b->name);
}

/// Adds the function symbols of the symbol table `table` to `symbols`.
static void add_symbols(const mapped_file *file, const Elf64_Shdr *sections, size_t section_count,
                        const Elf64_Shdr *table, cstrobe_elf_symbols *symbols, size_t *name_bytes,
                        size_t *name_capacity) {
    if (table->sh_link >= section_count || table->sh_entsize != sizeof(Elf64_Sym)) return;
    const Elf64_Shdr *strings = &sections[table->sh_link];
    if (table->sh_offset + table->sh_size > file->size || strings->sh_offset + strings->sh_size > file->size) return;
    const Elf64_Sym *entries = (const Elf64_Sym *)(file->bytes + table->sh_offset);
    size_t count = table->sh_size / sizeof(Elf64_Sym);
    const char *text = (const char *)(file->bytes + strings->sh_offset);
    function_symbol *grown = realloc(symbols->symbols, (symbols->count + count) * sizeof(function_symbol));
    if (!grown) return;
    symbols->symbols = grown;
    for (size_t i = 0; i < count; i++) {
        const Elf64_Sym *entry = &entries[i];
        unsigned type = ELF64_ST_TYPE(entry->st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || entry->st_value == 0 || entry->st_shndx == SHN_UNDEF)
            continue;
        if (entry->st_name >= strings->sh_size) continue;
        const char *name = text + entry->st_name;
        size_t length = strnlen(name, strings->sh_size - entry->st_name);
        if (*name_bytes + length + 1 > *name_capacity) {
            size_t capacity = (*name_capacity ? *name_capacity * 2 : 1 << 16);
            while (capacity < *name_bytes + length + 1) capacity *= 2;
            char *names = realloc(symbols->names, capacity);
            if (!names) return;
            symbols->names = names;
            *name_capacity = capacity;
        }
        memcpy(symbols->names + *name_bytes, name, length);
        symbols->names[*name_bytes + length] = 0;
        symbols->symbols[symbols->count++] = (function_symbol){.address = entry->st_value,
                                                               .size = entry->st_size,
                                                               .name = (uint32_t)*name_bytes,
                                                               .indirect = type == STT_GNU_IFUNC};
        *name_bytes += length + 1;
    }
}

/// Names the implementations the IFUNCs of a loaded library chose: the
/// dynamic table of a stripped libm names `sin` by its resolver only, while
/// the code that runs is `__sin_fma`, a local symbol the strip removed.
/// `dlsym` gives the chosen address; its extent is its FDE's. Nothing when
/// the library at `path` is not loaded in this process.
static void add_implementations(const char *path, cstrobe_elf_symbols *symbols) {
    size_t indirect = 0;
    for (size_t i = 0; i < symbols->count; i++) indirect += symbols->symbols[i].indirect;
    if (indirect == 0 || !path) return;
    void *library = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    if (!library) return;
    struct link_map *map = NULL;
    function_symbol *grown = realloc(symbols->symbols, (symbols->count + indirect) * sizeof(function_symbol));
    if (grown && dlinfo(library, RTLD_DI_LINKMAP, &map) == 0 && map) {
        symbols->symbols = grown;
        size_t count = symbols->count;
        for (size_t i = 0; i < count; i++) {
            if (!symbols->symbols[i].indirect) continue;
            void *chosen = dlsym(library, symbols->names + symbols->symbols[i].name);
            Dl_info info;
            struct link_map *owner = NULL;
            if (!chosen || !dladdr1(chosen, &info, (void **)&owner, RTLD_DL_LINKMAP) || owner != map) continue;
            cstrobe_cfa_rule rule;
            uint64_t address = (uint64_t)(uintptr_t)chosen;
            if (!cstrobe_cfa_rule_at(address, &rule) || rule.function_start != address) continue;
            symbols->symbols[symbols->count++] = (function_symbol){.address = address - map->l_addr,
                                                                   .size = rule.function_end - rule.function_start,
                                                                   .name = symbols->symbols[i].name};
        }
    }
    dlclose(library);
}

/// Loads the function symbols of the ELF image in `file`; `path` is the
/// file a loaded library was mapped from (to name its IFUNCs' choices), or
/// NULL.
static cstrobe_elf_symbols *load_symbols(const mapped_file *file, const char *path) {
    const Elf64_Ehdr *header = elf_header(file);
    if (!header) return NULL;
    cstrobe_elf_symbols *symbols = calloc(1, sizeof *symbols);
    if (!symbols) return NULL;
    if (header->e_phoff + (uint64_t)header->e_phnum * sizeof(Elf64_Phdr) <= file->size) {
        const Elf64_Phdr *programs = (const Elf64_Phdr *)(file->bytes + header->e_phoff);
        for (size_t i = 0; i < header->e_phnum && symbols->segment_count < 16; i++) {
            if (programs[i].p_type != PT_LOAD) continue;
            symbols->segments[symbols->segment_count++] = (load_segment){
                .offset = programs[i].p_offset, .address = programs[i].p_vaddr, .size = programs[i].p_filesz};
        }
    }
    const Elf64_Shdr *sections = (const Elf64_Shdr *)(file->bytes + header->e_shoff);
    size_t name_bytes = 0, name_capacity = 0;
    // The full table when the file keeps it, else the dynamic one.
    for (int pass = 0; pass < 2 && symbols->count == 0; pass++) {
        uint32_t wanted = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
        for (size_t i = 0; i < header->e_shnum; i++)
            if (sections[i].sh_type == wanted)
                add_symbols(file, sections, header->e_shnum, &sections[i], symbols, &name_bytes, &name_capacity);
    }
    add_implementations(path, symbols);
    qsort_r(symbols->symbols, symbols->count, sizeof(function_symbol), compare_symbols, symbols->names);
    // One symbol per address: the largest, by its preferred name.
    size_t kept = 0;
    for (size_t i = 0; i < symbols->count; i++)
        if (kept == 0 || symbols->symbols[kept - 1].address != symbols->symbols[i].address)
            symbols->symbols[kept++] = symbols->symbols[i];
    symbols->count = kept;
    return symbols;
}

cstrobe_elf_symbols *cstrobe_elf_symbols_load(const char *path) {
    mapped_file file;
    if (map_file(path, &file) != 0) return NULL;
    cstrobe_elf_symbols *symbols = load_symbols(&file, path);
    munmap((void *)file.bytes, file.size);
    return symbols;
}

/// The vDSO's ELF image in this process's memory and its size (to the end
/// of its section headers or of its last segment), or NULL.
static const uint8_t *vdso_image(size_t *size) {
    const Elf64_Ehdr *header = (const Elf64_Ehdr *)(uintptr_t)getauxval(AT_SYSINFO_EHDR);
    if (!header || memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 || header->e_ident[EI_CLASS] != ELFCLASS64)
        return NULL;
    uint64_t end = header->e_shoff + (uint64_t)header->e_shnum * header->e_shentsize;
    const Elf64_Phdr *programs = (const Elf64_Phdr *)((const uint8_t *)header + header->e_phoff);
    for (size_t i = 0; i < header->e_phnum; i++)
        if (programs[i].p_type == PT_LOAD && programs[i].p_offset + programs[i].p_filesz > end)
            end = programs[i].p_offset + programs[i].p_filesz;
    *size = (size_t)end;
    return (const uint8_t *)header;
}

cstrobe_elf_symbols *cstrobe_vdso_symbols_load(void) {
    mapped_file image;
    image.bytes = vdso_image(&image.size);
    return image.bytes ? load_symbols(&image, NULL) : NULL;
}

const char *cstrobe_elf_symbols_lookup(const cstrobe_elf_symbols *symbols, uint64_t file_offset,
                                       uint64_t *symbol_offset) {
    uint64_t address = file_offset;
    for (size_t i = 0; i < symbols->segment_count; i++) {
        const load_segment *segment = &symbols->segments[i];
        if (file_offset >= segment->offset && file_offset < segment->offset + segment->size) {
            address = file_offset - segment->offset + segment->address;
            break;
        }
    }
    // The last symbol starting at or before the address.
    size_t low = 0, high = symbols->count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (symbols->symbols[middle].address <= address) low = middle + 1;
        else high = middle;
    }
    if (low == 0) return NULL;
    const function_symbol *symbol = &symbols->symbols[low - 1];
    // A symbol of size 0 (a label such as `_init`) names only its own
    // address: what follows it (PLT stubs) is no part of it.
    if (symbol->size == 0 ? address != symbol->address : address >= symbol->address + symbol->size) return NULL;
    *symbol_offset = address - symbol->address;
    return symbols->names + symbol->name;
}

int cstrobe_elf_symbols_find(const cstrobe_elf_symbols *symbols, const char *name, uint64_t *address,
                             uint64_t *size) {
    for (size_t i = 0; i < symbols->count; i++) {
        if (strcmp(symbols->names + symbols->symbols[i].name, name) != 0) continue;
        *address = symbols->symbols[i].address;
        *size = symbols->symbols[i].size;
        return 1;
    }
    return 0;
}

size_t cstrobe_elf_symbols_count(const cstrobe_elf_symbols *symbols) { return symbols->count; }

void cstrobe_elf_symbols_free(cstrobe_elf_symbols *symbols) {
    if (!symbols) return;
    free(symbols->symbols);
    free(symbols->names);
    free(symbols);
}

/// The GNU build id note of the ELF image in `file`.
static size_t build_id_in(const mapped_file *file, uint8_t *out, size_t capacity) {
    size_t length = 0;
    const Elf64_Ehdr *header = elf_header(file);
    if (!header) return 0;
    const Elf64_Shdr *sections = (const Elf64_Shdr *)(file->bytes + header->e_shoff);
    for (size_t i = 0; i < header->e_shnum && length == 0; i++) {
        const Elf64_Shdr *section = &sections[i];
        if (section->sh_type != SHT_NOTE || section->sh_offset + section->sh_size > file->size) continue;
        size_t at = 0;
        while (at + sizeof(Elf64_Nhdr) <= section->sh_size) {
            const Elf64_Nhdr *note = (const Elf64_Nhdr *)(file->bytes + section->sh_offset + at);
            size_t name_size = (note->n_namesz + 3) & ~(size_t)3;
            size_t description_size = (note->n_descsz + 3) & ~(size_t)3;
            size_t next = at + sizeof(Elf64_Nhdr) + name_size + description_size;
            if (next > section->sh_size) break;
            const char *name = (const char *)(note + 1);
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
                length = note->n_descsz < capacity ? note->n_descsz : capacity;
                memcpy(out, (const uint8_t *)name + name_size, length);
                break;
            }
            at = next;
        }
    }
    return length;
}

size_t cstrobe_elf_build_id(const char *path, uint8_t *out, size_t capacity) {
    mapped_file file;
    if (map_file(path, &file) != 0) return 0;
    size_t length = build_id_in(&file, out, capacity);
    munmap((void *)file.bytes, file.size);
    return length;
}

size_t cstrobe_vdso_build_id(uint8_t *out, size_t capacity) {
    mapped_file image;
    image.bytes = vdso_image(&image.size);
    return image.bytes ? build_id_in(&image, out, capacity) : 0;
}

/// A function of the process looked up by name on first use. Threads that
/// race on the first use each look it up and store the same address.
typedef struct {
    const char *name;
    _Atomic(void *) address;
    atomic_int looked;
} lazy_symbol;

static void *lazy_symbol_address(lazy_symbol *symbol) {
    if (!atomic_load_explicit(&symbol->looked, memory_order_acquire)) {
        atomic_store_explicit(&symbol->address, dlsym(RTLD_DEFAULT, symbol->name), memory_order_relaxed);
        atomic_store_explicit(&symbol->looked, 1, memory_order_release);
    }
    return atomic_load_explicit(&symbol->address, memory_order_relaxed);
}

typedef char *(*swift_demangle_function)(const char *, size_t, char *, size_t *, uint32_t);

static lazy_symbol swift_demangle_symbol = {"swift_demangle", NULL, 0};

size_t cstrobe_swift_demangle(const char *name, size_t length, char *out, size_t capacity) {
    swift_demangle_function demangle = (swift_demangle_function)lazy_symbol_address(&swift_demangle_symbol);
    if (!demangle || capacity == 0) return 0;
    size_t size = capacity;
    char *result = demangle(name, length, out, &size, 0);
    if (!result) return 0;
    out[capacity - 1] = 0;
    return strnlen(out, capacity);
}

typedef char *(*cxa_demangle_function)(const char *, char *, size_t *, int *);

static lazy_symbol cxa_demangle_symbol = {"__cxa_demangle", NULL, 0};

size_t cstrobe_cxx_demangle(const char *name, char *out, size_t capacity) {
    cxa_demangle_function demangle = (cxa_demangle_function)lazy_symbol_address(&cxa_demangle_symbol);
    if (!demangle || capacity == 0) return 0;
    int status = 0;
    char *result = demangle(name, NULL, NULL, &status);
    if (!result || status != 0) return 0;
    size_t length = strnlen(result, capacity - 1);
    memcpy(out, result, length);
    out[length] = 0;
    free(result);
    return length;
}


#else

size_t cstrobe_cxx_demangle(const char *name, char *out, size_t capacity) {
    (void)name, (void)out, (void)capacity;
    return 0;
}

cstrobe_elf_symbols *cstrobe_elf_symbols_load(const char *path) {
    (void)path;
    return NULL;
}
const char *cstrobe_elf_symbols_lookup(const cstrobe_elf_symbols *symbols, uint64_t file_offset,
                                       uint64_t *symbol_offset) {
    (void)symbols, (void)file_offset, (void)symbol_offset;
    return NULL;
}
int cstrobe_elf_symbols_find(const cstrobe_elf_symbols *symbols, const char *name, uint64_t *address,
                             uint64_t *size) {
    (void)symbols, (void)name, (void)address, (void)size;
    return 0;
}
size_t cstrobe_elf_symbols_count(const cstrobe_elf_symbols *symbols) {
    (void)symbols;
    return 0;
}
void cstrobe_elf_symbols_free(cstrobe_elf_symbols *symbols) { (void)symbols; }
size_t cstrobe_elf_build_id(const char *path, uint8_t *out, size_t capacity) {
    (void)path, (void)out, (void)capacity;
    return 0;
}
cstrobe_elf_symbols *cstrobe_vdso_symbols_load(void) { return NULL; }
size_t cstrobe_vdso_build_id(uint8_t *out, size_t capacity) {
    (void)out, (void)capacity;
    return 0;
}
size_t cstrobe_swift_demangle(const char *name, size_t length, char *out, size_t capacity) {
    (void)name, (void)length, (void)out, (void)capacity;
    return 0;
}

#endif
