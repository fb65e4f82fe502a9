#ifndef STRATA_CSQLITE_SHIM_H
#define STRATA_CSQLITE_SHIM_H
#include <sqlite3.h>

/// sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, bytes): sqlite3_config is
/// variadic, which Swift cannot call. Effective only before SQLite is
/// initialized (SQLITE_MISUSE after).
static inline int strata_sqlite3_config_statement_journal_spill(int bytes) {
    return sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, bytes);
}

/// sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on): whether SQLite counts the
/// memory it allocates, under a mutex taken on every allocation and free.
/// Effective only before SQLite is initialized (SQLITE_MISUSE after).
static inline int strata_sqlite3_config_memory_statistics(int on) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on);
}
#endif
