import Foundation
import StrataSQLite

/// The state a connection shares with its statements: whether it is still
/// open. Statements hold it strongly so that a statement outliving its
/// `Database` fails with a clear error instead of touching a closed handle.
final class ConnectionState {
    var sqliteConnection: OpaquePointer?
    /// Follows the transactions for the connection's transaction
    /// observers, when it has some.
    var transactionTracker: TransactionTracker?
    /// The connection, for telling transaction observers.
    weak var database: Database?

    init(_ sqliteConnection: OpaquePointer) {
        self.sqliteConnection = sqliteConnection
    }
}

/// A prepared statement: SQL compiled once, run many times with new arguments.
///
/// ```swift
/// let insert = try db.makeStatement(sql: "INSERT INTO ips(start, end, country) VALUES (?, ?, ?)")
/// for range in ranges {
///     try insert.execute(arguments: [range.start, range.end, range.country])
/// }
/// ```
///
/// A statement belongs to the connection that prepared it and, like
/// ``Database``, never crosses threads. It is finalized when released. Using it
/// after its database was closed throws ``SQLiteError`` with code `.misuse`.
///
/// See <https://www.sqlite.org/c3ref/stmt.html>.
public final class Statement {
    /// The raw `sqlite3_stmt` handle, for calls Strata does not wrap.
    public let sqliteStatement: OpaquePointer
    /// The tables the statement writes, when it was prepared while the
    /// connection had transaction observers.
    let writtenTables: Set<String>

    /// The statement's SQL.
    public let sql: String

    /// The number of columns in the statement's rows (0 for most statements
    /// that are not queries).
    public let columnCount: Int

    /// The number of parameters (`?`, `?NNN`, `:name`, …) to bind.
    public let parameterCount: Int

    /// The arguments given to ``setArguments(_:)``, which a failed step of
    /// the run that follows names. Not kept by `execute(arguments:)` or
    /// `execute(binding:)`: they bind the caller's values in place and
    /// attach them to an error only when one is thrown.
    var arguments: StatementArguments = []

    let connectionState: ConnectionState

    /// What a row needs to read the statement's current row, behind a
    /// pointer so a read touches no class property: reading a class's `var`
    /// on every column read would cost a dynamic exclusivity check, and a
    /// class reference a retain and a release.
    @usableFromInline
    let liveState: UnsafeMutablePointer<LiveStatementState>

    /// Changes whenever the statement steps or resets, so a row read from a
    /// cursor can tell it is no longer the current row.
    @inlinable
    var generation: UInt { liveState.pointee.generation }

    init(sqliteStatement: OpaquePointer, sql: String?, connectionState: ConnectionState) {
        self.sqliteStatement = sqliteStatement
        self.connectionState = connectionState
        if let tracker = connectionState.transactionTracker, !tracker.preparedWrites.isEmpty {
            writtenTables = tracker.preparedWrites
            tracker.preparedWrites = []
        } else {
            writtenTables = []
        }
        self.sql = sql ?? sqlText(of: sqliteStatement)?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        self.columnCount = Int(sqlite3_column_count(sqliteStatement))
        self.parameterCount = Int(sqlite3_bind_parameter_count(sqliteStatement))
        let prefixedNames = (0..<parameterCount).map { index in
            sqlite3_bind_parameter_name(sqliteStatement, Int32(index + 1)).map { String(cString: $0) }
        }
        self.parameterPrefixedNames = prefixedNames
        self.parameterNames = prefixedNames.map { name in
            // `:`, `@` or `$` then the name; bytes, as a combining mark
            // after the prefix would make the two one Character.
            guard let name, let first = name.utf8.first, first != UInt8(ascii: "?") else { return nil }
            return String(decoding: name.utf8.dropFirst(), as: UTF8.self)
        }
        self.columnNames = (0..<columnCount).map { index in
            sqlite3_column_name(sqliteStatement, Int32(index)).map { String(cString: $0) } ?? ""
        }
        liveState = .allocate(capacity: 1)
        liveState.initialize(to: LiveStatementState(
            sqliteStatement: sqliteStatement, columnNames: columnNames, generation: 0))
    }

    deinit {
        liveState.pointee.freeNames()
        liveState.deinitialize(count: 1)
        liveState.deallocate()
        // Valid even after the connection was closed with sqlite3_close_v2:
        // the connection lingers until its last statement is finalized.
        sqlite3_finalize(sqliteStatement)
    }

    /// The names of the result columns, as SQLite reports them.
    public let columnNames: [String]

    /// Whether the statement leaves the database unchanged
    /// (`sqlite3_stmt_readonly`).
    public var isReadOnly: Bool {
        sqlite3_stmt_readonly(sqliteStatement) != 0
    }

    /// Parameter names with their prefix (`:id`), nil for `?` parameters.
    let parameterPrefixedNames: [String?]

    /// Parameter names without their prefix, nil for `?` and `?NNN`.
    @usableFromInline
    let parameterNames: [String?]

    /// The 0-based index of the column named `name`, compared without regard to
    /// ASCII case as SQLite does; nil when there is none. The first match wins.
    public func index(ofColumn name: String) -> Int? {
        liveState.pointee.index(ofColumn: name)
    }

    // MARK: - Running

    /// Binds new arguments, validating their number and names.
    ///
    /// - Throws: ``SQLiteError`` (`.misuse`) for a wrong argument count, a
    ///   missing or unknown name, or a closed database.
    public func setArguments(_ arguments: StatementArguments) throws {
        try checkConnection()
        resetForBinding()
        self.arguments = arguments
        if parameterCount == 0 && arguments.isEmpty { return }
        var consumer = ArgumentConsumer(arguments)
        try consumer.bind(to: self)
        try consumer.checkAllUsed(sql: sql)
    }

    /// Binds each value to the parameter at the same position, then runs
    /// the statement to completion:
    ///
    /// ```swift
    /// let insert = try db.makeStatement(sql: "INSERT INTO movies (title, year) VALUES (?, ?)")
    /// try insert.execute(binding: "Heat", 1995)
    /// ```
    ///
    /// The values keep their static types, so each is bound with one call
    /// into SQLite and no ``StatementArguments`` array is built: the fastest
    /// way to run a statement many times. Up to twelve values, each value's
    /// own type is bound directly; more go through a parameter pack, whose
    /// values Swift binds through their protocol.
    ///
    /// - Throws: ``SQLiteError`` (`.misuse`) when the number of values is not
    ///   the statement's number of parameters (nothing is run); otherwise as
    ///   ``execute(arguments:)``.
    @inlinable @inline(__always)
    public func execute<each Value: DatabaseValueConvertible>(binding values: repeat each Value) throws {
        try prepareForBinding()
        let sqliteStatement = self.sqliteStatement
        let parameterCount = self.parameterCount
        var position: Int32 = 0
        // A pack expansion, not a `for` loop over the pack: each value is
        // bound by its own type's `bind`, with no copy through the value
        // witness table.
        repeat try bindNext(each values, sqliteStatement, parameterCount, &position)
        if Int(position) != parameterCount {
            throw wrongValueCount(Int(position))
        }
        try runBound {
            var arguments: [(any DatabaseValueConvertible)?] = []
            for value in repeat each values { arguments.append(value) }
            return StatementArguments(arguments)
        }
    }

    /// Binds each value to the parameter of its name, then runs the
    /// statement to completion:
    ///
    /// ```swift
    /// let update = try db.makeStatement(sql: "UPDATE movies SET likes = :likes WHERE id = :id")
    /// try update.execute(named: ("likes", 3), ("id", 7))
    /// ```
    ///
    /// A name is written without its `:`, `@` or `$` prefix, or with it. As
    /// with ``execute(binding:)``, the values keep their static types and no
    /// ``StatementArguments`` is built; names given in the statement's own
    /// order are matched with one comparison each, others are looked up.
    ///
    /// - Throws: ``SQLiteError`` (`.misuse`) for a name the statement does
    ///   not have, a name given twice or a parameter left without a value
    ///   (nothing is run); otherwise as ``execute(arguments:)``.
    @inlinable @inline(__always)
    public func execute<each Value: DatabaseValueConvertible>(named pairs: repeat (String, each Value)) throws {
        try prepareForBinding()
        var binder = NamedBinder(self)
        repeat try binder.bind((each pairs).0, (each pairs).1)
        try binder.finish()
        try runBound {
            var named: [(String, (any DatabaseValueConvertible)?)] = []
            for pair in repeat each pairs { named.append((pair.0, pair.1)) }
            return StatementArguments(namedPairs: named)
        }
    }

    @inlinable @inline(__always)
    func bindNext<Value: DatabaseValueConvertible>(
        _ value: Value, _ sqliteStatement: OpaquePointer, _ parameterCount: Int, _ position: inout Int32
    ) throws {
        position += 1
        if position <= parameterCount {
            try value.bind(to: sqliteStatement, at: position)
        }
    }

    /// The rowid of the connection's latest INSERT (the statement ran, so
    /// its connection is open).
    @usableFromInline
    var lastInsertedRowID: Int64 {
        sqlite3_db_handle(sqliteStatement).map { sqlite3_last_insert_rowid($0) } ?? 0
    }

    /// Checks the connection and resets the statement for new bindings.
    @usableFromInline
    func prepareForBinding() throws {
        try checkConnection()
        resetForBinding()
    }

    /// As ``prepareForBinding()``, then checks that `valueCount` values fill
    /// the statement's parameters (nothing is bound otherwise).
    @usableFromInline
    func prepareForBinding(valueCount: Int) throws {
        try prepareForBinding()
        if valueCount != parameterCount { throw wrongValueCount(valueCount) }
    }

    @usableFromInline
    func wrongValueCount(_ count: Int) -> SQLiteError {
        resetQuietly()
        return SQLiteError.misuse(
            "wrong number of arguments: the statement expects \(parameterCount), got \(count)", sql: sql)
    }

    /// Runs a statement whose parameters were bound directly; a failure
    /// names the values.
    @usableFromInline
    func runBound(arguments: () -> StatementArguments?) throws {
        do {
            try run()
        } catch var error as SQLiteError {
            error.arguments = arguments()
            throw error
        }
    }

    /// Binds the arguments, then runs the statement to completion.
    ///
    /// - Parameter arguments: values for the statement's parameters.
    /// - Throws: ``SQLiteError`` when the arguments do not fit or SQLite
    ///   reports an error.
    @inlinable
    public func execute(arguments: StatementArguments = []) throws {
        if arguments.namedPairs.isEmpty {
            // Inlined, and reaching the caller's values only through a
            // buffer pointer: an array literal's storage does not escape,
            // so the compiler can keep it on the caller's stack (no
            // allocation or free a call; its values are still destroyed
            // one by one through their value witnesses).
            try arguments.positional.withUnsafeBufferPointer { try executePositional($0) }
        } else {
            try executeGeneral(arguments)
        }
    }

    /// ``execute(arguments:)`` with positional values, bound where they
    /// are; copied only to name them in an error.
    @usableFromInline
    func executePositional(_ values: UnsafeBufferPointer<(any DatabaseValueConvertible)?>) throws {
        try prepareForBinding()
        guard values.count == parameterCount else {
            try setArguments(StatementArguments(Array(values)))
            try run()
            return
        }
        if parameterCount != 0 { try ArgumentConsumer.bindPositional(values, to: sqliteStatement) }
        try runBound { values.isEmpty ? nil : StatementArguments(Array(values)) }
    }

    /// ``execute(arguments:)`` with named values.
    @usableFromInline
    func executeGeneral(_ arguments: StatementArguments) throws {
        try prepareForBinding()
        try setArguments(arguments)
        try run()
    }

    /// Steps to the end, then resets so the statement holds no lock.
    func run() throws {
        while try step() {}
        resetQuietly()
        if let tracker = connectionState.transactionTracker, let savepoint = savepointStatement {
            tracker.didRun(savepoint)
        }
    }

    /// Steps once: true when a row is available.
    @inlinable
    func step() throws -> Bool {
        liveState.pointee.generation &+= 1
        liveState.pointee.isReset = false
        let code = sqlite3_step(sqliteStatement)
        if code == SQLITE_ROW { return true }
        // Out of line: the inlined loop stays small enough for callers'
        // column reads to be inlined too.
        return try stepEnded(code)
    }

    /// The end of a run: false when done (after telling transaction
    /// observers), the error otherwise.
    @usableFromInline
    func stepEnded(_ code: Int32) throws -> Bool {
        liveState.pointee.runEnded = true
        guard code == SQLITE_DONE else { throw stepFailure(code) }
        if connectionState.transactionTracker != nil { didFinish() }
        return false
    }

    /// Notes the tables the statement wrote, and tells the transaction
    /// observers of a commit or rollback it made.
    func didFinish() {
        guard let tracker = connectionState.transactionTracker else { return }
        if !writtenTables.isEmpty {
            // A statement outside a transaction committed as it ran: its
            // tables belong to that commit.
            if tracker.hasUntold, let handle = connectionState.sqliteConnection, sqlite3_get_autocommit(handle) != 0 {
                tracker.addWritesToLastCommit(writtenTables)
            } else {
                tracker.recordWrites(writtenTables)
            }
        }
        if tracker.hasUntold, let database = connectionState.database { tracker.tell(database) }
    }

    /// The error of a failed step; the statement is reset.
    @usableFromInline
    func stepFailure(_ code: Int32) -> SQLiteError {
        let error = makeError(code)
        resetQuietly()
        // A failed statement may have rolled its transaction back.
        if let tracker = connectionState.transactionTracker, tracker.hasUntold, let database = connectionState.database {
            tracker.tell(database)
        }
        return error
    }

    /// The statement as a SAVEPOINT, RELEASE or ROLLBACK TO, read from its
    /// SQL once (transaction observers follow them); nil for any other.
    private lazy var savepointStatement: SavepointStatement? =
        sqlite3_stmt_readonly(sqliteStatement) != 0 ? SavepointStatement(sql: sql) : nil

    /// Whether the statement is being stepped (a cursor has not finished
    /// it): it cannot serve another run meanwhile.
    var isBusy: Bool { sqlite3_stmt_busy(sqliteStatement) != 0 }

    /// Resets the statement so it can run again (its bindings stay).
    public func reset() throws {
        try checkConnection()
        // sqlite3_reset repeats the error of the last step, which was already
        // thrown by that step.
        resetQuietly()
    }

    /// Resets without reporting the last step's error again.
    @usableFromInline
    func resetQuietly() {
        liveState.pointee.generation &+= 1
        // Stopped after a row: the writes it made are done (SQLite makes all
        // of a RETURNING statement's changes on its first step).
        if !liveState.pointee.isReset, !liveState.pointee.runEnded, !writtenTables.isEmpty,
           connectionState.transactionTracker != nil {
            sqlite3_reset(sqliteStatement)
            liveState.pointee.isReset = true
            didFinish()
            return
        }
        liveState.pointee.isReset = true
        liveState.pointee.runEnded = false
        sqlite3_reset(sqliteStatement)
    }

    /// Resets unless the statement was reset since its last step (the end
    /// of every run resets it): a statement run many times is reset once
    /// per run, not twice.
    @usableFromInline
    func resetForBinding() {
        if !liveState.pointee.isReset { resetQuietly() }
    }

    func makeError(_ code: Int32) -> SQLiteError {
        SQLiteError.fromConnection(
            connectionState.sqliteConnection, code: code, sql: sql,
            arguments: arguments.isEmpty ? nil : arguments)
    }

    func checkConnection() throws {
        guard connectionState.sqliteConnection != nil else {
            throw SQLiteError.misuse("the database connection is closed", sql: sql)
        }
    }

    // MARK: - Reading the current row

    /// Reads column `index` of the current row as `T`, or throws a decoding
    /// error naming the column, the type and the SQL.
    @inlinable
    func decodeColumn<T: DatabaseValueConvertible>(_ type: T.Type, at index: Int) throws -> T {
        if index >= 0 && index < columnCount,
            let value = readColumn(T.self, from: sqliteStatement, at: Int32(index), inPlace: liveState.pointee.readsInPlace) {
            return value
        }
        throw decodingFailure(T.self, at: index)
    }

    /// Why column `index` could not be read as `type`.
    @usableFromInline
    func decodingFailure(_ type: Any.Type, at index: Int) -> DatabaseDecodingError {
        guard index >= 0 && index < columnCount else {
            return DatabaseDecodingError(
                reason: .indexOutOfRange, column: nil, columnIndex: index, type: type, sql: sql)
        }
        return DatabaseDecodingError.mismatch(
            DatabaseValue.read(from: sqliteStatement, at: Int32(index)), type: type,
            column: columnNames[index], columnIndex: index, sql: sql)
    }

    /// Copies the current row's values.
    func copyValues() -> [DatabaseValue] {
        var values: [DatabaseValue] = []
        values.reserveCapacity(columnCount)
        for index in 0..<columnCount {
            values.append(DatabaseValue.read(from: sqliteStatement, at: Int32(index)))
        }
        return values
    }
}

@available(*, unavailable)
extension Statement: Sendable {}

/// The part of a statement a live row reads on every column access.
@usableFromInline
struct LiveStatementState {
    @usableFromInline
    let sqliteStatement: OpaquePointer
    @usableFromInline
    let columnCount: Int
    @usableFromInline
    let columnNames: [String]
    /// The column names again, in memory the state owns (freed by
    /// ``freeNames()``): read by a name lookup on every column read by
    /// name, where an array's bounds checks and its buffer's load cost a
    /// quarter of the lookup.
    @usableFromInline
    let names: UnsafeMutablePointer<String>
    /// Bumped by every step and reset.
    @usableFromInline
    var generation: UInt
    /// Whether the statement was reset since its last step: binding for a
    /// new run then needs no second `sqlite3_reset`.
    @usableFromInline
    var isReset = true
    /// Whether the current run ended (done, or failed) before a reset: a
    /// reset of a run that did not tells observers of its writes (an
    /// `INSERT … RETURNING` read for its first row made all its changes).
    @usableFromInline
    var runEnded = false
    /// Where the next name lookup is expected to land: rows are usually read
    /// column after column, so the name at this index is tried first.
    @usableFromInline
    var lookupHint = 0
    /// ``SQLiteValueLayout/isVerified``, kept here so that a read checks a
    /// field of the state instead of a global.
    @usableFromInline
    let readsInPlace: Bool

    init(sqliteStatement: OpaquePointer, columnNames: [String], generation: UInt) {
        self.sqliteStatement = sqliteStatement
        self.columnCount = columnNames.count
        self.columnNames = columnNames
        readsInPlace = SQLiteValueLayout.isVerified
        names = .allocate(capacity: columnNames.count)
        names.initialize(from: columnNames, count: columnNames.count)
        self.generation = generation
    }

    /// Frees ``names``; the statement's deinit calls it once.
    func freeNames() {
        names.deinitialize(count: columnCount)
        names.deallocate()
    }

    /// The value at `index` of the current row as `T`, when the row is still
    /// the one of `generation`, the index is in range and the value fits;
    /// nil otherwise (the caller then makes the error).
    ///
    /// Static, reading each field through the pointer: a method on
    /// `pointee` copied the whole state (its names array retained) per read.
    @inlinable @inline(__always)
    static func value<T: DatabaseValueConvertible>(
        in state: UnsafeMutablePointer<LiveStatementState>, _ type: T.Type, at index: Int, generation: UInt
    ) -> T? {
        guard state.pointee.generation == generation, index >= 0, index < state.pointee.columnCount else { return nil }
        return readColumn(T.self, from: state.pointee.sqliteStatement, at: Int32(truncatingIfNeeded: index), inPlace: state.pointee.readsInPlace)
    }

    /// The index of the column named `name`: exact match first, then ASCII
    /// case-insensitive; nil when there is none. Always inlined: called,
    /// its prologue and the call cost more than the expected name's
    /// comparison (37 instructions a column read by name, 14 inlined).
    @inlinable @inline(__always)
    mutating func index(ofColumn name: String) -> Int? {
        // `lookupHint` is never negative: one comparison bounds it.
        let hint = lookupHint
        if hint < columnCount && names[hint] == name {
            lookupHint = hint + 1 == columnCount ? 0 : hint + 1
            return hint
        }
        return searchIndex(ofColumn: name)
    }

    @usableFromInline
    mutating func searchIndex(ofColumn name: String) -> Int? {
        guard let found = columnIndex(named: name, in: columnNames) else { return nil }
        lookupHint = found + 1 == columnCount ? 0 : found + 1
        return found
    }
}

/// Finds a column by name: an exact match first (cheap for the short strings
/// column names are), then an ASCII case-insensitive one, as SQLite compares
/// identifiers.
func columnIndex(named name: String, in names: [String]) -> Int? {
    if let index = names.firstIndex(of: name) {
        return index
    }
    return names.firstIndex { identifiersMatch($0, name) }
}

/// Whether two identifiers name the same thing to SQLite: ASCII letters
/// compared without case, other characters exactly.
/// Compared in bytes: two spellings that Swift's `==` takes as equal (a
/// precomposed letter and the letter with a combining mark) are two names
/// to SQLite.
package func identifiersMatch(_ first: String, _ second: String) -> Bool {
    first.utf8.count == second.utf8.count
        && zip(first.utf8, second.utf8).allSatisfy { $0 == $1 || lowercasedASCII($0) == lowercasedASCII($1) }
}

private func lowercasedASCII(_ byte: UInt8) -> UInt8 {
    byte >= 65 && byte <= 90 ? byte + 32 : byte
}

/// An identifier with its ASCII letters in lower case, the form in which
/// two names that ``identifiersMatch(_:_:)`` are equal (a key for a set).
package func lowercasedASCII(_ name: String) -> String {
    String(decoding: identifierKey(name), as: UTF8.self)
}

/// An identifier's bytes with its ASCII letters in lower case: a key for a
/// set or a dictionary of names that are equal when they
/// ``identifiersMatch(_:_:)``. (A `String` key is not: Swift hashes a
/// precomposed `é` and `e` with a combining accent alike, and SQLite takes
/// them for two names.)
package func identifierKey(_ name: String) -> [UInt8] {
    name.utf8.map(lowercasedASCII)
}
