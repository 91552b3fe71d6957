#ifndef STROBE_CSQLITE_SHIM_H
#define STROBE_CSQLITE_SHIM_H
#include <sqlite3.h>

/* Binds a copy of `length` bytes of UTF-8 text (SQLITE_TRANSIENT, a cast of
   -1 to a function pointer, is a macro Swift does not import); empty text
   when `text` is NULL, which sqlite3_bind_text would bind as NULL. */
static inline int strobe_sqlite3_bind_text_copy(sqlite3_stmt *statement, int index, const char *text, int length) {
    if (text == 0) text = "";
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}

/* Binds a copy of `length` bytes (SQLITE_TRANSIENT); an empty blob when
   `length` is 0, never NULL. */
static inline int strobe_sqlite3_bind_blob_copy(sqlite3_stmt *statement, int index, const void *bytes, int length) {
    if (length == 0) return sqlite3_bind_zeroblob(statement, index, 0);
    return sqlite3_bind_blob(statement, index, bytes, length, SQLITE_TRANSIENT);
}

/* Refuses string literals in double quotes, in both statements and schema
   definitions, so that a misspelt column name is an error rather than a
   string: sqlite3_db_config is variadic, which Swift cannot call. */
static inline int strobe_sqlite3_refuse_double_quoted_strings(sqlite3 *connection) {
    int result = sqlite3_db_config(connection, SQLITE_DBCONFIG_DQS_DML, 0, (int *)0);
    if (result != SQLITE_OK) return result;
    return sqlite3_db_config(connection, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)0);
}
#endif
