// The fatal-signal handler of crash capture. Everything it touches is
// allocated when a session installs it; it takes no lock, allocates nothing
// and calls only async-signal-safe functions (open, write, close, sigaction,
// clock_gettime, syscall). See CStrobeCrash.h.

#define _GNU_SOURCE
#include "CStrobeCrash.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#define FATAL_SIGNAL_COUNT 6
static const int fatal_signals[FATAL_SIGNAL_COUNT] = {SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE, SIGTRAP};

/// The action each signal had before the handler was first installed; kept
/// for the life of the process, because a handler installed over ours may
/// still call ours after the session ends.
static struct sigaction previous_actions[NSIG];
/// Whether our handler is (or may still be reached as) the action of a signal.
static int handler_installed[NSIG];

/// 0: not armed, 1: armed, 2: a crash is being written.
static int armed = 0;
/// The thread writing the crash file, 0 before a crash.
static uint64_t writer_thread = 0;
static int writing_done = 0;

static char *crash_path = NULL;
static cstrobe_crash_header header_template;
/// The session's metadata section payload, copied at install.
static uint8_t *metadata_copy = NULL;
static uint64_t metadata_length = 0;
static uint64_t *scratch = NULL;
static uint64_t scratch_words = 0;
static uint8_t *output = NULL;
static const size_t output_capacity = 64 << 10;
static size_t output_used = 0;
static uint64_t *seen_names = NULL;
static const uint64_t seen_capacity = 16384;

/// Registered thread mirrors (a list only ever pushed to while armed).
static cstrobe_crash_thread *threads = NULL;
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;

/// Texts of interned names and categories, append-only. A table that grows
/// is copied and the old one kept, linked from the new one: the handler may
/// be reading it.
typedef struct crash_text {
    uint64_t key;
    const uint8_t *text;
    uint64_t length;
} crash_text;
typedef struct crash_text_block {
    struct crash_text_block *previous;
    crash_text entries[];
} crash_text_block;
typedef struct crash_text_table {
    crash_text_block *block;
    uint64_t count;
    uint64_t capacity;
} crash_text_table;
static crash_text_table names_table = {NULL, 0, 0};
static crash_text_table categories_table = {NULL, 0, 0};
static pthread_mutex_t texts_lock = PTHREAD_MUTEX_INITIALIZER;

static void note_text(crash_text_table *table, uint64_t key, const uint8_t *text, uint64_t length) {
    pthread_mutex_lock(&texts_lock);
    uint64_t count = __atomic_load_n(&table->count, __ATOMIC_RELAXED);
    if (count == table->capacity) {
        uint64_t capacity = table->capacity == 0 ? 256 : table->capacity * 2;
        crash_text_block *grown = malloc(sizeof(crash_text_block) + capacity * sizeof(crash_text));
        if (grown == NULL) {
            pthread_mutex_unlock(&texts_lock);
            return;
        }
        grown->previous = table->block;
        if (count > 0) memcpy(grown->entries, table->block->entries, count * sizeof(crash_text));
        __atomic_store_n(&table->block, grown, __ATOMIC_RELEASE);
        table->capacity = capacity;
    }
    table->block->entries[count] = (crash_text){key, text, length};
    __atomic_store_n(&table->count, count + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&texts_lock);
}

void cstrobe_crash_note_name(uint64_t word, const uint8_t *text, uint64_t length) {
    note_text(&names_table, word, text, length);
}

void cstrobe_crash_note_category(uint64_t index, const uint8_t *text, uint64_t length) {
    note_text(&categories_table, index, text, length);
}

// MARK: - Writing, async-signal-safe

static uint64_t current_thread_id(void) {
#if defined(__linux__)
    return (uint64_t)syscall(SYS_gettid);
#else
    return cstrobe_thread_id();
#endif
}

static int write_all(int fd, const void *bytes, size_t length) {
    const uint8_t *position = bytes;
    while (length > 0) {
        ssize_t written = write(fd, position, length);
        if (written < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (written == 0) return -1;
        position += written;
        length -= (size_t)written;
    }
    return 0;
}

static int flush_output(int fd) {
    int result = write_all(fd, output, output_used);
    output_used = 0;
    return result;
}

static int emit(int fd, const void *bytes, size_t length) {
    if (output_used + length > output_capacity) {
        if (flush_output(fd) != 0) return -1;
        if (length > output_capacity) return write_all(fd, bytes, length);
    }
    memcpy(output + output_used, bytes, length);
    output_used += length;
    return 0;
}

static int emit_section(int fd, uint32_t tag, uint64_t payload_bytes) {
    uint64_t words[2] = {tag, payload_bytes};
    return emit(fd, words, sizeof(words));
}

static const uint8_t zeros[64] = {0};

static int emit_padding(int fd, uint64_t length) {
    uint64_t padding = (8 - length % 8) % 8;
    return padding == 0 ? 0 : emit(fd, zeros, padding);
}

/// Writes `length` bytes from `address`, which may be invalid (a name word
/// read from a torn record): write(2) reports EFAULT rather than faulting,
/// and whatever could not be read is written as zeros.
static int emit_foreign_text(int fd, const uint8_t *address, uint64_t length) {
    if (flush_output(fd) != 0) return -1;
    uint64_t done = 0;
    while (done < length) {
        ssize_t written = write(fd, address + done, length - done);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) break;
        done += (uint64_t)written;
    }
    while (done < length) {
        uint64_t step = length - done < sizeof(zeros) ? length - done : sizeof(zeros);
        if (write_all(fd, zeros, step) != 0) return -1;
        done += step;
    }
    return emit_padding(fd, length);
}

/// Whether `word` was written already; remembers it if there is room.
static int seen_before(uint64_t word) {
    uint64_t slot = (word ^ (word >> 17) ^ (word >> 41)) & (seen_capacity - 1);
    for (uint64_t probe = 0; probe < 64; probe++) {
        uint64_t index = (slot + probe) & (seen_capacity - 1);
        if (seen_names[index] == word) return 1;
        if (seen_names[index] == 0) {
            seen_names[index] = word;
            return 0;
        }
    }
    return 0;
}

/// A literal name word: its length in the top 16 bits (below the tags that
/// mark interned names and argument keys), its address below.
static int is_literal(uint64_t word) {
    uint64_t top = word >> 48;
    return top > 0 && top < 0xFFF0;
}

static int emit_literal(int fd, uint64_t word) {
    if (!is_literal(word) || seen_before(word)) return 0;
    uint64_t length = word >> 48;
    uint64_t fields[2] = {word, length};
    if (emit_section(fd, CSTROBE_CRASH_SECTION_NAME, sizeof(fields) + length + (8 - length % 8) % 8) != 0) return -1;
    if (emit(fd, fields, sizeof(fields)) != 0) return -1;
    return emit_foreign_text(fd, (const uint8_t *)(uintptr_t)(word & 0xFFFFFFFFFFFFull), length);
}

// The record layout of RecordLayout.swift, as far as finding name words.
enum {
    kind_begin = 1, kind_end = 2, kind_instant = 3, kind_counter_int = 4, kind_counter_double = 5,
    kind_async_begin = 6, kind_async_end = 7, kind_drop_marker = 8, kind_async_begin_child = 9,
    kind_async_begin_renamable = 10, kind_async_end_explicit = 11, kind_category_prefix = 12,
};

static uint64_t fixed_words(uint64_t event) {
    switch (event) {
    case kind_begin: case kind_instant: case kind_async_end: case kind_drop_marker: return 2;
    case kind_end: case kind_category_prefix: return 1;
    case kind_counter_int: case kind_counter_double: case kind_async_begin: return 3;
    case kind_async_begin_child: case kind_async_end_explicit: return 4;
    case kind_async_begin_renamable: return 5;
    default: return 0;
    }
}

/// Writes the text of every literal name the records in `words` use; stops
/// at the first word that does not start a valid record.
static int emit_literals_of(int fd, const uint64_t *words, uint64_t count) {
    uint64_t index = 0;
    while (index < count) {
        const uint64_t *record = words + index;
        uint64_t available = count - index;
        uint64_t kind = record[0] >> 56;
        uint64_t event = kind & 0x0F;
        uint64_t fixed = fixed_words(event);
        if (fixed == 0 || fixed > available) return 0;
        if (event == kind_counter_int || event == kind_counter_double) {
            if (emit_literal(fd, record[1]) != 0) return -1;
        }
        if (event == kind_counter_int || event == kind_counter_double || event == kind_drop_marker
            || event == kind_category_prefix) {
            index += fixed;
            continue;
        }
        if (event == kind_begin || event == kind_instant || event == kind_async_begin
            || event == kind_async_begin_child || event == kind_async_begin_renamable) {
            if (emit_literal(fd, record[1]) != 0) return -1;
        }
        if (event == kind_async_end_explicit && emit_literal(fd, record[2]) != 0) return -1;
        uint64_t total = fixed;
        if (kind & 0x10) total += 6;
        if (kind & 0x20) total += 1;
        if (kind & 0x40) total += 1;
        if (kind & 0x80) {
            if (total >= available) return 0;
            uint64_t argument_words = record[total];
            if (argument_words > available - total - 1) return 0;
            uint64_t position = total + 1;
            uint64_t end = position + argument_words;
            while (position + 2 <= end) {
                uint64_t key = record[position];
                uint64_t tag = record[position + 1];
                uint64_t payload = (tag & 0xFF) == 4 ? ((tag >> 8) + 7) / 8 : (tag & 0xFF) == 5 ? (tag >> 8) : 1;
                uint64_t key_words = (key >> 48) == 0xFFFD ? ((key & 0xFFFF) + 7) / 8 : 0;
                if (position + 2 + payload + key_words > end) break;
                if (emit_literal(fd, key) != 0) return -1;
                position += 2 + payload + key_words;
            }
            total = end;
        }
        if (total > available) return 0;
        index += total;
    }
    return 0;
}

static int emit_chunk(int fd, const uint64_t *base, uint64_t words, uint64_t first_event, uint64_t end_event) {
    if (base == NULL) words = 0;
    if (words > scratch_words) words = scratch_words;
    if (words > 0) memcpy(scratch, base, words * 8);
    cstrobe_crash_chunk_record record = {first_event, end_event, words};
    if (emit_section(fd, CSTROBE_CRASH_SECTION_CHUNK, sizeof(record) + words * 8) != 0) return -1;
    if (emit(fd, &record, sizeof(record)) != 0) return -1;
    if (emit(fd, scratch, words * 8) != 0) return -1;
    return emit_literals_of(fd, scratch, words);
}

static int emit_thread(int fd, cstrobe_crash_thread *thread) {
    // A thread updating its mirror right now finishes soon; one that never
    // does (it crashed inside the update) is read as it is.
    for (int attempt = 0; attempt < 1000; attempt++) {
        if ((__atomic_load_n(&thread->version, __ATOMIC_ACQUIRE) & 1) == 0) break;
        sched_yield();
    }
    uint64_t sealed_count = thread->sealed_count < thread->capacity ? thread->sealed_count : thread->capacity;
    cstrobe_thread_cursor *cursor = thread->cursor;
    uint64_t *current = thread->current_base;
    uint64_t current_words = 0;
    uint64_t recorded = 0;
    if (cursor != NULL && current != NULL) {
        uint64_t *published = cstrobe_read_published(cursor);
        recorded = cstrobe_recorded(cursor);
        if (published >= current && published <= current + thread->current_words) {
            current_words = (uint64_t)(published - current);
        }
    }
    cstrobe_crash_thread_record record;
    memset(&record, 0, sizeof(record));
    record.thread_id = thread->thread_id;
    record.serial = thread->serial;
    record.recorded = recorded;
    record.discarded = thread->discarded;
    record.overwritten = thread->overwritten;
    record.lost = thread->lost;
    record.chunk_count = sealed_count + (current_words > 0 ? 1 : 0);
    memcpy(record.name, thread->name, sizeof(record.name));
    record.name[sizeof(record.name) - 1] = 0;
    if (emit_section(fd, CSTROBE_CRASH_SECTION_THREAD, sizeof(record)) != 0) return -1;
    if (emit(fd, &record, sizeof(record)) != 0) return -1;
    for (uint64_t index = 0; index < sealed_count; index++) {
        cstrobe_crash_chunk chunk = thread->sealed[index];
        if (emit_chunk(fd, chunk.base, chunk.used_words, chunk.first_event, chunk.end_event) != 0) return -1;
    }
    if (current_words > 0) {
        if (emit_chunk(fd, current, current_words, thread->current_first_event, recorded) != 0) return -1;
    }
    return 0;
}

static int emit_texts(int fd, crash_text_table *table, uint32_t tag) {
    uint64_t count = __atomic_load_n(&table->count, __ATOMIC_ACQUIRE);
    crash_text_block *block = __atomic_load_n(&table->block, __ATOMIC_ACQUIRE);
    for (uint64_t index = 0; index < count; index++) {
        crash_text entry = block->entries[index];
        uint64_t fields[2] = {entry.key, entry.length};
        if (emit_section(fd, tag, sizeof(fields) + entry.length + (8 - entry.length % 8) % 8) != 0) return -1;
        if (emit(fd, fields, sizeof(fields)) != 0) return -1;
        if (emit(fd, entry.text, entry.length) != 0) return -1;
        if (emit_padding(fd, entry.length) != 0) return -1;
    }
    return 0;
}

static int write_crash_file(int signal, int64_t code, uint64_t address, uint64_t thread_id) {
    int fd = open(crash_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    output_used = 0;
    memset(seen_names, 0, seen_capacity * 8);
    cstrobe_crash_header header = header_template;
    header.thread_id = thread_id;
    header.signal = (uint64_t)signal;
    header.signal_code = code;
    header.fault_address = address;
    header.crash_raw = cstrobe_raw_timestamp();
    struct timespec now;
    clock_gettime(CLOCK_BOOTTIME, &now);
    header.crash_boottime_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
#if defined(__linux__)
    prctl(PR_GET_NAME, header.thread_name, 0, 0, 0);
    header.thread_name[sizeof(header.thread_name) - 1] = 0;
#endif
    int failed = emit(fd, CSTROBE_CRASH_MAGIC, 8) != 0 || emit(fd, &header, sizeof(header)) != 0;
    uint64_t thread_count = 0;
    for (cstrobe_crash_thread *thread = __atomic_load_n(&threads, __ATOMIC_ACQUIRE); thread != NULL && !failed;
         thread = thread->next) {
        failed = emit_thread(fd, thread) != 0;
        thread_count++;
    }
    failed = failed || emit_texts(fd, &names_table, CSTROBE_CRASH_SECTION_NAME) != 0;
    failed = failed || emit_texts(fd, &categories_table, CSTROBE_CRASH_SECTION_CATEGORY) != 0;
    if (!failed && metadata_length > 0) {
        uint64_t fields[2] = {0, metadata_length};
        failed = emit_section(fd, CSTROBE_CRASH_SECTION_METADATA,
                              sizeof(fields) + metadata_length + (8 - metadata_length % 8) % 8) != 0
            || emit(fd, fields, sizeof(fields)) != 0 || emit(fd, metadata_copy, metadata_length) != 0
            || emit_padding(fd, metadata_length) != 0;
    }
    if (!failed) {
        failed = emit_section(fd, CSTROBE_CRASH_SECTION_END, 8) != 0 || emit(fd, &thread_count, 8) != 0
            || flush_output(fd) != 0;
    }
    int error = failed ? errno : 0;
    close(fd);
    return failed ? (error == 0 ? EIO : error) : 0;
}

// MARK: - The handler

static void crash_handler(int signal, siginfo_t *info, void *context);

/// Hands the signal to the action that was installed before ours: restores
/// it, then lets a fault happen again on return (the faulting instruction
/// runs again) or sends the same signal, with the same information, again.
static void chain(int signal, siginfo_t *info, void *context) {
    struct sigaction *previous = &previous_actions[signal];
    struct sigaction current;
    if (sigaction(signal, NULL, &current) == 0
        && !((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == crash_handler)) {
        // A handler installed over ours called us: call the one before us
        // in turn, and leave the rest to the caller.
        if (previous->sa_flags & SA_SIGINFO) {
            if (previous->sa_sigaction != NULL) previous->sa_sigaction(signal, info, context);
        } else if (previous->sa_handler != SIG_DFL && previous->sa_handler != SIG_IGN) {
            previous->sa_handler(signal);
        }
        return;
    }
    sigaction(signal, previous, NULL);
    handler_installed[signal] = 0;
    // A fault raised by the processor repeats when the handler returns; a
    // trap (int3 on x86) would not, and sent signals never do.
    if (info != NULL && info->si_code > 0 && signal != SIGTRAP && signal != SIGABRT) return;
#if defined(__linux__)
    if (info != NULL
        && syscall(SYS_rt_tgsigqueueinfo, getpid(), (pid_t)current_thread_id(), signal, info) == 0) {
        return;
    }
    syscall(SYS_tgkill, getpid(), (pid_t)current_thread_id(), signal);
#else
    raise(signal);
#endif
}

static void crash_handler(int signal, siginfo_t *info, void *context) {
    int saved_errno = errno;
    uint64_t self = current_thread_id();
    uint64_t none = 0;
    if (__atomic_compare_exchange_n(&writer_thread, &none, self, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        int expected = 1;
        if (__atomic_compare_exchange_n(&armed, &expected, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            // si_addr means something only for a fault the processor raised.
            uint64_t address = info != NULL && info->si_code > 0 ? (uint64_t)(uintptr_t)info->si_addr : 0;
            write_crash_file(signal, info != NULL ? info->si_code : 0, address, self);
        }
        __atomic_store_n(&writing_done, 1, __ATOMIC_RELEASE);
    } else if (none != self) {
        // Another thread is writing the file: let it finish before this
        // thread's signal ends the process.
        struct timespec pause = {0, 1000000};
        for (int waited = 0; waited < 5000 && !__atomic_load_n(&writing_done, __ATOMIC_ACQUIRE); waited++) {
            nanosleep(&pause, NULL);
        }
    }
    // Else: a fault inside the handler itself, which gives up the file.
    chain(signal, info, context);
    errno = saved_errno;
}

int cstrobe_crash_write_now(int signal, uint64_t address) {
    if (__atomic_load_n(&armed, __ATOMIC_ACQUIRE) != 1) return EINVAL;
    return write_crash_file(signal, 0, address, current_thread_id());
}

// MARK: - Installing

// Frees the buffers the handler writes with; only under install_lock, while
// no handler is armed.
static void free_handler_buffers(void) {
    free(crash_path);
    free(scratch);
    free(output);
    free(seen_names);
    free(metadata_copy);
    metadata_copy = NULL;
    metadata_length = 0;
    crash_path = NULL;
    scratch = NULL;
    output = NULL;
    seen_names = NULL;
    scratch_words = 0;
}

/// After a signal that the process survived (a handler installed over ours
/// called ours, then returned): the write it started has finished, so the
/// handler is free for the next session. Only under install_lock.
static void forget_survived_signal(void) {
    if (__atomic_load_n(&writer_thread, __ATOMIC_ACQUIRE) == 0) return;
    if (!__atomic_load_n(&writing_done, __ATOMIC_ACQUIRE)) return;
    int expected = 2;
    __atomic_compare_exchange_n(&armed, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    __atomic_store_n(&writing_done, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&writer_thread, 0, __ATOMIC_RELEASE);
}

int cstrobe_crash_install(const cstrobe_crash_config *config) {
    pthread_mutex_lock(&install_lock);
    forget_survived_signal();
    if (__atomic_load_n(&armed, __ATOMIC_ACQUIRE) != 0 || __atomic_load_n(&writer_thread, __ATOMIC_ACQUIRE) != 0) {
        pthread_mutex_unlock(&install_lock);
        return EBUSY;
    }
    crash_path = strdup(config->path);
    scratch_words = config->chunk_words;
    scratch = malloc(scratch_words * 8);
    output = malloc(output_capacity);
    seen_names = calloc(seen_capacity, 8);
    if (config->metadata != NULL && config->metadata_bytes > 0) {
        metadata_copy = malloc(config->metadata_bytes);
        if (metadata_copy != NULL) {
            memcpy(metadata_copy, config->metadata, config->metadata_bytes);
            metadata_length = config->metadata_bytes;
        }
    }
    if (crash_path == NULL || scratch == NULL || output == NULL || seen_names == NULL
        || (config->metadata_bytes > 0 && metadata_copy == NULL)) {
        free_handler_buffers();
        pthread_mutex_unlock(&install_lock);
        return ENOMEM;
    }
    // Touch the buffers now, so that the handler takes no page fault on them.
    memset(scratch, 0, scratch_words * 8);
    memset(output, 0, output_capacity);
    memset(&header_template, 0, sizeof(header_template));
    // Version 2 only when the file carries the METADATA section, so that a
    // reader of version 1 still reads a file without it.
    header_template.version = metadata_length > 0 ? CSTROBE_CRASH_VERSION : CSTROBE_CRASH_VERSION_FIRST;
    header_template.header_bytes = sizeof(header_template);
    header_template.process_id = (uint64_t)getpid();
    header_template.timestamp_is_tsc = (uint64_t)__atomic_load_n((int *)&cstrobe_timestamp_source_is_tsc, __ATOMIC_RELAXED);
    header_template.base_raw = config->base_raw;
    header_template.base_boottime_ns = config->base_boottime_ns;
    header_template.buffer_bytes = config->buffer_bytes;
    if (config->process_name != NULL) {
        strncpy(header_template.process_name, config->process_name, sizeof(header_template.process_name) - 1);
    }
    threads = NULL;
    cstrobe_crash_prepare_thread();
    __atomic_store_n(&armed, 1, __ATOMIC_RELEASE);
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = crash_handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (int index = 0; index < FATAL_SIGNAL_COUNT; index++) {
        int signal = fatal_signals[index];
        // Still reachable through a handler installed over ours: keep the
        // action saved then, or the two would call each other.
        if (handler_installed[signal]) continue;
        if (sigaction(signal, &action, &previous_actions[signal]) == 0) handler_installed[signal] = 1;
    }
    pthread_mutex_unlock(&install_lock);
    return 0;
}

void cstrobe_crash_uninstall(void) {
    pthread_mutex_lock(&install_lock);
    // A crash file written for a signal the process survived: its buffers
    // are no longer in use, and are freed as after any session.
    forget_survived_signal();
    int expected = 1;
    if (!__atomic_compare_exchange_n(&armed, &expected, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        // Not armed, or a crash is being written with these buffers: the
        // process is about to end, so nothing is freed.
        pthread_mutex_unlock(&install_lock);
        return;
    }
    for (int index = 0; index < FATAL_SIGNAL_COUNT; index++) {
        int signal = fatal_signals[index];
        if (!handler_installed[signal]) continue;
        struct sigaction current;
        if (sigaction(signal, NULL, &current) != 0) continue;
        if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == crash_handler) {
            sigaction(signal, &previous_actions[signal], NULL);
            handler_installed[signal] = 0;
        }
    }
    cstrobe_crash_thread *thread = __atomic_exchange_n(&threads, NULL, __ATOMIC_ACQ_REL);
    while (thread != NULL) {
        cstrobe_crash_thread *next = thread->next;
        free(thread->sealed);
        free(thread);
        thread = next;
    }
    free_handler_buffers();
    pthread_mutex_unlock(&install_lock);
}

cstrobe_crash_thread *cstrobe_crash_add_thread(uint64_t thread_id, uint64_t serial, uint64_t capacity) {
    if (__atomic_load_n(&armed, __ATOMIC_ACQUIRE) != 1) return NULL;
    cstrobe_crash_thread *thread = calloc(1, sizeof(cstrobe_crash_thread));
    cstrobe_crash_chunk *sealed = calloc(capacity == 0 ? 1 : capacity, sizeof(cstrobe_crash_chunk));
    if (thread == NULL || sealed == NULL) {
        free(thread);
        free(sealed);
        return NULL;
    }
    thread->thread_id = thread_id;
    thread->serial = serial;
    thread->capacity = capacity;
    thread->sealed = sealed;
    cstrobe_crash_prepare_thread();
    cstrobe_crash_thread *head = __atomic_load_n(&threads, __ATOMIC_ACQUIRE);
    do {
        thread->next = head;
    } while (!__atomic_compare_exchange_n(&threads, &head, thread, 1, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE));
    return thread;
}

// MARK: - Alternate stacks

static __thread void *alternate_stack = NULL;
static __thread size_t alternate_stack_bytes = 0;

void cstrobe_crash_prepare_thread(void) {
    if (alternate_stack != NULL) return;
    stack_t current;
    if (sigaltstack(NULL, &current) == 0 && !(current.ss_flags & SS_DISABLE)) return;
    size_t bytes = 64 << 10;
    void *memory = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return;
    stack_t stack = {.ss_sp = memory, .ss_flags = 0, .ss_size = bytes};
    if (sigaltstack(&stack, NULL) != 0) {
        munmap(memory, bytes);
        return;
    }
    alternate_stack = memory;
    alternate_stack_bytes = bytes;
}

void cstrobe_crash_release_thread(void) {
    if (alternate_stack == NULL) return;
    stack_t disable = {.ss_sp = NULL, .ss_flags = SS_DISABLE, .ss_size = 0};
    stack_t current;
    if (sigaltstack(NULL, &current) == 0 && current.ss_sp == alternate_stack) {
        if (sigaltstack(&disable, NULL) != 0) return;
    }
    munmap(alternate_stack, alternate_stack_bytes);
    alternate_stack = NULL;
    alternate_stack_bytes = 0;
}
