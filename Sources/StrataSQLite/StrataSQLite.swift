// The one place that chooses which SQLite Strata links.
//
// On Apple platforms the SDK ships SQLite as the `SQLite3` module; elsewhere the
// `CSQLite` system-library target links the system's libsqlite3 (found through
// pkg-config, installed by `apt-get install libsqlite3-dev` on Debian).
//
// This small module re-exports that choice to Strata's own files, which
// `import StrataSQLite`. Strata does not re-export it: `import Strata` puts no
// `sqlite3_*` function in a user's namespace. A user who needs something
// Strata does not wrap imports the C module too (`SQLite3` on Apple
// platforms, `CSQLite` elsewhere) and uses `Database.sqliteConnection`.
#if canImport(SQLite3)
@_exported import SQLite3
#else
@_exported import CSQLite
#endif

/// SQLite's `SQLITE_TRANSIENT` destructor: SQLite copies the bound bytes before
/// the call returns. The C macro is not imported into Swift.
package nonisolated(unsafe) let sqliteTransient = unsafeBitCast(
    OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
