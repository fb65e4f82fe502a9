import StrataSQLite

/// Reads of `INTEGER` and `REAL` column values straight from SQLite's value
/// object, where the C API takes two calls (`sqlite3_value_type`, then
/// `sqlite3_value_int64` or `sqlite3_value_double`) after
/// `sqlite3_column_value`: the typed reads of a fetch's hot loop.
///
/// `sqlite3_value` is opaque in SQLite's API. Its layout (the value's union
/// first, then the text pointer, the length and the type flags) has not
/// changed since SQLite 3.8, but a library linked at run time may be any
/// version, so it is never assumed: ``isVerified`` checks it once a process
/// against the C API's own answers for one value of each type, and every
/// read falls back to the C API when it is false, on a 32-bit platform, or
/// for a value whose flags are not exactly one plain integer or real (a
/// value also holding its text, say). The type checks stay: a TEXT, a BLOB
/// or a NULL never reads as a number, and a REAL reads as an integer only
/// when it is a whole number that fits, as through the C API.
@usableFromInline
enum SQLiteValueLayout {
    /// Where the flags are: after the 8-byte union, the text pointer and
    /// the 4-byte length.
    @usableFromInline static let flagsOffset = 20
    /// `MEM_AffMask`: the bits that say which types the value holds.
    @usableFromInline static let typeMask: UInt16 = 0x3F
    /// `MEM_Int` and `MEM_Real`.
    @usableFromInline static let integerFlag: UInt16 = 0x04
    @usableFromInline static let realFlag: UInt16 = 0x08

    /// Whether this process's SQLite has the layout the reads assume:
    /// checked once, on a private in-memory connection.
    @usableFromInline
    static let isVerified: Bool = verify()

    /// The value's integer when it holds a plain integer; nil otherwise
    /// (then ask the C API).
    @inlinable @inline(__always)
    static func integer(_ value: OpaquePointer) -> Int64? {
        let raw = UnsafeRawPointer(value)
        guard raw.load(fromByteOffset: flagsOffset, as: UInt16.self) & typeMask == integerFlag else { return nil }
        return raw.load(as: Int64.self)
    }

    /// The value's real when it holds a plain real; nil otherwise.
    @inlinable @inline(__always)
    static func real(_ value: OpaquePointer) -> Double? {
        let raw = UnsafeRawPointer(value)
        guard raw.load(fromByteOffset: flagsOffset, as: UInt16.self) & typeMask == realFlag else { return nil }
        return raw.load(as: Double.self)
    }

    /// Reads one value of each type (integers at both ends of the range,
    /// reals, text, a BLOB, NULL) both ways and compares: the in-place read
    /// must find exactly the integers and the reals, with their values.
    static func verify() -> Bool {
        #if arch(x86_64) || arch(arm64)
        guard MemoryLayout<Int>.size == 8 else { return false }
        // Its own connection opens SQLite: Strata's settings come first.
        _ = Database.processSettings
        var connection: OpaquePointer?
        guard sqlite3_open_v2(":memory:", &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK,
            let connection
        else {
            sqlite3_close_v2(connection)
            return false
        }
        defer { sqlite3_close_v2(connection) }
        let sql = """
            SELECT 0, 1, -1, 9223372036854775807, -9223372036854775808, 1234567890123, 2.5, -0.0, 1e308, \
            'text', '42', x'00ff', x'', NULL, CAST(3 AS REAL)
            """
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(connection, sql, -1, &statement, nil) == SQLITE_OK, let statement else { return false }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { return false }
        let count = sqlite3_column_count(statement)
        guard count == 15 else { return false }
        for index in 0..<count {
            guard let value = sqlite3_column_value(statement, index) else { return false }
            switch sqlite3_value_type(value) {
            case SQLITE_INTEGER:
                guard integer(value) == sqlite3_value_int64(value), real(value) == nil else { return false }
            case SQLITE_FLOAT:
                guard let read = real(value), read.bitPattern == sqlite3_value_double(value).bitPattern, integer(value) == nil
                else { return false }
            default:
                guard integer(value) == nil, real(value) == nil else { return false }
            }
        }
        return true
        #else
        return false
        #endif
    }
}

/// Reads column `index` of the statement's current row as `T`, or nil when
/// it does not fit: the in-place reads of ``SQLiteValueLayout`` for `Int`,
/// `Int64`, `Double` and their optionals when `inPlace` (the statement's copy
/// of ``SQLiteValueLayout/isVerified``) is true, else `T`'s own
/// `decode(from:at:)`. The checks on `T.self` are resolved where the call is
/// specialized.
@inlinable @inline(__always)
func readColumn<T: DatabaseValueConvertible>(_ type: T.Type, from statement: OpaquePointer, at index: Int32, inPlace: Bool) -> T? {
    if inPlace {
        // Never nil: SQLite answers a NULL value for an index out of range,
        // and an unchecked unwrap spares a test and a branch a column.
        if T.self == Int.self || T.self == Int64.self {
            let value = sqlite3_column_value(statement, index).unsafelyUnwrapped
            if let integer = SQLiteValueLayout.integer(value) { return unsafeBitCast(integer, to: T.self) }
        } else if T.self == Double.self {
            let value = sqlite3_column_value(statement, index).unsafelyUnwrapped
            if let real = SQLiteValueLayout.real(value) { return unsafeBitCast(real, to: T.self) }
            if let integer = SQLiteValueLayout.integer(value) { return unsafeBitCast(Double(integer), to: T.self) }
        } else if T.self == Int?.self || T.self == Int64?.self {
            let value = sqlite3_column_value(statement, index).unsafelyUnwrapped
            if let integer = SQLiteValueLayout.integer(value) { return unsafeBitCast(Int64?.some(integer), to: T.self) }
        } else if T.self == Double?.self {
            let value = sqlite3_column_value(statement, index).unsafelyUnwrapped
            if let real = SQLiteValueLayout.real(value) { return unsafeBitCast(Double?.some(real), to: T.self) }
        }
    }
    return T.decode(from: statement, at: index)
}
