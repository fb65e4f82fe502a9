// The one place that chooses which SQLite the library links.
//
// On Apple platforms the SDK ships SQLite as the `SQLite3` module; elsewhere the
// `CSQLite` system-library target links the system's libsqlite3 (found through
// pkg-config, installed by `apt-get install libsqlite3-dev` on Debian).
// The C API is re-exported so that `import Strata` is enough to reach
// `sqlite3_*` functions through `Database.sqliteConnection` when a user needs
// something Strata does not wrap.
#if canImport(SQLite3)
@_exported import SQLite3
#else
@_exported import CSQLite
#endif

/// SQLite's `SQLITE_TRANSIENT` destructor: SQLite copies the bound bytes before
/// the call returns. The C macro is not imported into Swift.
nonisolated(unsafe) let sqliteTransient = unsafeBitCast(
    OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
