// Writes the crash file, inside the fatal-signal handler of CStrobeCrash.c:
// async-signal-safe code only (no lock, no allocation; open, write, close,
// clock_gettime, prctl), on the buffers installing allocated. Also the
// append-only tables of interned names' and categories' texts, which the
// file carries. See CStrobeCrash.h and CStrobeCrashFile.h.

#define _GNU_SOURCE
#include "CStrobeCrash.h"
#include "CStrobeCrashState.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

/// How much of the output buffer holds bytes not yet written.
static size_t output_used = 0;

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
    int result = write_all(fd, cstrobe_crash_output, output_used);
    output_used = 0;
    return result;
}

static int emit(int fd, const void *bytes, size_t length) {
    if (output_used + length > CSTROBE_CRASH_OUTPUT_CAPACITY) {
        if (flush_output(fd) != 0) return -1;
        if (length > CSTROBE_CRASH_OUTPUT_CAPACITY) return write_all(fd, bytes, length);
    }
    memcpy(cstrobe_crash_output + output_used, bytes, length);
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
    uint64_t slot = (word ^ (word >> 17) ^ (word >> 41)) & (CSTROBE_CRASH_SEEN_CAPACITY - 1);
    for (uint64_t probe = 0; probe < 64; probe++) {
        uint64_t index = (slot + probe) & (CSTROBE_CRASH_SEEN_CAPACITY - 1);
        if (cstrobe_crash_seen_names[index] == word) return 1;
        if (cstrobe_crash_seen_names[index] == 0) {
            cstrobe_crash_seen_names[index] = word;
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
    if (words > cstrobe_crash_scratch_words) words = cstrobe_crash_scratch_words;
    if (words > 0) memcpy(cstrobe_crash_scratch, base, words * 8);
    cstrobe_crash_chunk_record record = {first_event, end_event, words};
    if (emit_section(fd, CSTROBE_CRASH_SECTION_CHUNK, sizeof(record) + words * 8) != 0) return -1;
    if (emit(fd, &record, sizeof(record)) != 0) return -1;
    if (emit(fd, cstrobe_crash_scratch, words * 8) != 0) return -1;
    return emit_literals_of(fd, cstrobe_crash_scratch, words);
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
    uint64_t discarded = cursor != NULL ? cstrobe_events(cursor, CSTROBE_EVENT_DISCARDED) : thread->discarded;
    if (cursor != NULL && current != NULL) {
        uint64_t *published = cstrobe_read_published(cursor);
        recorded = cstrobe_events(cursor, CSTROBE_EVENT_RECORDED);
        if (published >= current && published <= current + thread->current_words) {
            current_words = (uint64_t)(published - current);
        }
    }
    cstrobe_crash_thread_record record;
    memset(&record, 0, sizeof(record));
    record.thread_id = thread->thread_id;
    record.serial = thread->serial;
    record.recorded = recorded;
    record.discarded = discarded;
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

int cstrobe_crash_write_file(int signal, int64_t code, uint64_t address, uint64_t thread_id) {
    int fd = open(cstrobe_crash_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    output_used = 0;
    memset(cstrobe_crash_seen_names, 0, CSTROBE_CRASH_SEEN_CAPACITY * 8);
    cstrobe_crash_header header = cstrobe_crash_header_template;
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
    cstrobe_crash_thread *first = __atomic_load_n(&cstrobe_crash_threads, __ATOMIC_ACQUIRE);
    for (cstrobe_crash_thread *thread = first; thread != NULL && !failed; thread = thread->next) {
        failed = emit_thread(fd, thread) != 0;
        thread_count++;
    }
    failed = failed || emit_texts(fd, &names_table, CSTROBE_CRASH_SECTION_NAME) != 0;
    failed = failed || emit_texts(fd, &categories_table, CSTROBE_CRASH_SECTION_CATEGORY) != 0;
    if (!failed && cstrobe_crash_metadata_length > 0) {
        uint64_t fields[2] = {0, cstrobe_crash_metadata_length};
        uint64_t length = cstrobe_crash_metadata_length;
        failed = emit_section(fd, CSTROBE_CRASH_SECTION_METADATA, sizeof(fields) + length + (8 - length % 8) % 8) != 0
            || emit(fd, fields, sizeof(fields)) != 0 || emit(fd, cstrobe_crash_metadata, length) != 0
            || emit_padding(fd, length) != 0;
    }
    if (!failed) {
        failed = emit_section(fd, CSTROBE_CRASH_SECTION_END, 8) != 0 || emit(fd, &thread_count, 8) != 0
            || flush_output(fd) != 0;
    }
    int error = failed ? errno : 0;
    close(fd);
    return failed ? (error == 0 ? EIO : error) : 0;
}
