// Checks, at compile time, the properties of the layouts that their readers
// rely on: every structure is whole little-endian words.

#include "CStrobeCrashFile.h"
#include "CStrobeResourceUsage.h"

_Static_assert(sizeof(cstrobe_crash_header) % 8 == 0, "the crash header is whole words");
_Static_assert(sizeof(cstrobe_crash_thread_record) == 7 * 8 + 64, "a thread section is 7 words and a name");
_Static_assert(sizeof(cstrobe_crash_chunk_record) == 3 * 8, "a chunk section starts with 3 words");
_Static_assert(sizeof(cstrobe_rusage) == 7 * 8, "rusage is 7 words");
