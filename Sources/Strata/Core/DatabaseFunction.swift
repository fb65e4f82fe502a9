import Foundation
import StrataSQLite

/// A SQL function written in Swift: a scalar function, or an aggregate.
///
/// ```swift
/// let reverse = DatabaseFunction("reverse", argumentCount: 1, isDeterministic: true) { arguments in
///     guard case .text(let text) = arguments[0] else { return nil }
///     return String(text.reversed())
/// }
/// try db.add(function: reverse)
/// let word = try String.fetchOne(db, sql: "SELECT reverse('stressed')")   // "desserts"
/// ```
///
/// A Swift error thrown by the function becomes a SQL error whose message is
/// the error's description. Functions run on the connection's thread, inside
/// the statement that calls them: they must not use the database.
///
/// See <https://www.sqlite.org/c3ref/create_function.html>.
public final class DatabaseFunction {
    /// The SQL name.
    public let name: String
    /// The number of arguments, or nil for any number.
    public let argumentCount: Int?
    /// Whether the function always gives the same result for the same
    /// arguments, which lets SQLite use it in indexes and optimize calls.
    public let isDeterministic: Bool

    let kind: Kind

    enum Kind {
        case scalar(([DatabaseValue]) throws -> (any DatabaseValueConvertible)?)
        case aggregate(() -> any DatabaseAggregate)
    }

    /// A scalar function.
    ///
    /// - Parameters:
    ///   - name: the SQL name.
    ///   - argumentCount: the number of arguments; nil accepts any number.
    ///   - isDeterministic: whether the result depends on the arguments only.
    ///   - function: computes the result from the arguments; returning nil
    ///     gives NULL.
    public init(
        _ name: String, argumentCount: Int? = nil, isDeterministic: Bool = false,
        function: @escaping ([DatabaseValue]) throws -> (any DatabaseValueConvertible)?
    ) {
        self.name = name
        self.argumentCount = argumentCount
        self.isDeterministic = isDeterministic
        self.kind = .scalar(function)
    }

    /// An aggregate function: SQLite makes a new `Aggregate` for each group,
    /// calls `step` for each row and `finalize` for the result.
    ///
    /// ```swift
    /// struct Product: DatabaseAggregate {
    ///     var product: Int64 = 1
    ///     init() {}
    ///     mutating func step(_ arguments: [DatabaseValue]) throws {
    ///         if case .integer(let value) = arguments[0] { product *= value }
    ///     }
    ///     func finalize() throws -> (any DatabaseValueConvertible)? { product }
    /// }
    /// try db.add(function: DatabaseFunction("product", argumentCount: 1, aggregate: Product.self))
    /// ```
    public init<Aggregate: DatabaseAggregate>(
        _ name: String, argumentCount: Int? = nil, isDeterministic: Bool = false, aggregate: Aggregate.Type
    ) {
        self.name = name
        self.argumentCount = argumentCount
        self.isDeterministic = isDeterministic
        self.kind = .aggregate { Aggregate() }
    }

    var textRepresentationFlags: Int32 {
        SQLITE_UTF8 | (isDeterministic ? SQLITE_DETERMINISTIC : 0)
    }
}

/// The state of an aggregate SQL function over one group of rows. See
/// ``DatabaseFunction/init(_:argumentCount:isDeterministic:aggregate:)``.
public protocol DatabaseAggregate {
    /// A fresh state, before the first row of a group.
    init()

    /// Takes one row's arguments.
    mutating func step(_ arguments: [DatabaseValue]) throws

    /// The group's result; nil gives NULL.
    func finalize() throws -> (any DatabaseValueConvertible)?
}

/// A custom collation: how SQLite compares two strings, for `ORDER BY`,
/// indexes, `=` and `COLLATE name` clauses.
///
/// ```swift
/// try db.add(collation: DatabaseCollation("localized") { lhs, rhs in
///     lhs.localizedStandardCompare(rhs)
/// })
/// ```
///
/// See <https://www.sqlite.org/c3ref/create_collation.html>.
public final class DatabaseCollation: @unchecked Sendable {
    /// The name used in `COLLATE name`.
    public let name: String
    /// Compares the UTF-8 bytes of two strings: negative, zero or positive.
    let compareUTF8: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Int32

    /// A collation named `name` that orders strings with `compare`.
    public init(_ name: String, compare: @escaping (String, String) -> ComparisonResult) {
        self.name = name
        self.compareUTF8 = { lhs, rhs in
            switch compare(String(decoding: lhs, as: UTF8.self), String(decoding: rhs, as: UTF8.self)) {
            case .orderedAscending: return -1
            case .orderedSame: return 0
            case .orderedDescending: return 1
            }
        }
    }

    /// A collation named `name` that compares the strings' UTF-8 bytes
    /// directly (negative, zero or positive), with no `String` made per
    /// comparison: for collations used by indexes of many rows. `compare`
    /// must be a total order that never changes, and must not keep the
    /// buffers.
    public init(_ name: String, comparingUTF8 compare: @escaping @Sendable (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Int32) {
        self.name = name
        self.compareUTF8 = compare
    }

    /// Makes `collation` available on every connection of this process,
    /// those already open as well as those opened later: SQLite asks for it
    /// the first time a statement names it, and only then is it added to
    /// that connection. A schema whose indexes or columns use a collation
    /// needs it on every connection that reads or writes them; registered
    /// here, no ``Configuration/prepareDatabase`` has to remember it.
    ///
    /// A collation added to one connection with ``Database/add(collation:)``
    /// takes precedence there. Registering a name again replaces the
    /// collation for connections that have not needed it yet.
    public static func registerForEveryConnection(_ collation: DatabaseCollation) {
        EveryConnectionCollations.shared.register(collation)
    }
}

/// The collations of ``DatabaseCollation/registerForEveryConnection(_:)``,
/// given to a connection by SQLite's `sqlite3_collation_needed` callback,
/// which every connection installs when it opens.
final class EveryConnectionCollations: Sendable {
    static let shared = EveryConnectionCollations()
    private let collations = Locked<[String: DatabaseCollation]>([:])

    func register(_ collation: DatabaseCollation) {
        collations.withLock { $0[collation.name.lowercased()] = collation }
    }

    func collation(named name: String) -> DatabaseCollation? {
        collations.withLock { $0[name.lowercased()] }
    }

    /// Installs the callback on a connection that has just opened.
    static func install(on handle: OpaquePointer) {
        sqlite3_collation_needed(handle, nil) { _, handle, _, name in
            guard let handle, let name,
                  let collation = EveryConnectionCollations.shared.collation(named: String(cString: name)) else { return }
            _ = Database.createCollation(collation, on: handle)
        }
    }
}

// MARK: - Registration

extension Database {
    /// Registers a SQL function on this connection, replacing any with the
    /// same name and argument count. To have it on every connection of a
    /// queue, register it in ``Configuration/prepareDatabase``.
    ///
    /// - Throws: ``SQLiteError`` when SQLite refuses the function (a name too
    ///   long, too many arguments, or a function in use by a running
    ///   statement).
    public func add(function: DatabaseFunction) throws {
        let handle = try checkedConnection()
        let box = Unmanaged.passRetained(FunctionBox(function)).toOpaque()
        let destroy: @convention(c) (UnsafeMutableRawPointer?) -> Void = { pointer in
            guard let pointer else { return }
            Unmanaged<FunctionBox>.fromOpaque(pointer).release()
        }
        let code: Int32
        switch function.kind {
        case .scalar:
            code = sqlite3_create_function_v2(
                handle, function.name, Int32(function.argumentCount ?? -1), function.textRepresentationFlags,
                box, { context, argumentCount, arguments in
                    let box = Unmanaged<FunctionBox>.fromOpaque(sqlite3_user_data(context)).takeUnretainedValue()
                    guard case .scalar(let body) = box.function.kind else { return }
                    do {
                        let result = try body(functionArguments(argumentCount, arguments))
                        setResult(result?.databaseValue ?? .null, on: context)
                    } catch {
                        setError(error, on: context)
                    }
                }, nil, nil, destroy)
        case .aggregate:
            code = sqlite3_create_function_v2(
                handle, function.name, Int32(function.argumentCount ?? -1), function.textRepresentationFlags,
                box, nil, { context, argumentCount, arguments in
                    guard let state = aggregateState(context, create: true) else {
                        sqlite3_result_error_nomem(context)
                        return
                    }
                    do {
                        try state.aggregate.step(functionArguments(argumentCount, arguments))
                    } catch {
                        state.error = error
                    }
                }, { context in
                    let state = aggregateState(context, create: false)
                    defer { releaseAggregateState(context) }
                    if let error = state?.error {
                        setError(error, on: context)
                        return
                    }
                    do {
                        let aggregate: any DatabaseAggregate
                        if let state {
                            aggregate = state.aggregate
                        } else {
                            // No row in the group: finalize a fresh state.
                            let box = Unmanaged<FunctionBox>.fromOpaque(sqlite3_user_data(context)).takeUnretainedValue()
                            guard case .aggregate(let make) = box.function.kind else { return }
                            aggregate = make()
                        }
                        setResult(try aggregate.finalize()?.databaseValue ?? .null, on: context)
                    } catch {
                        setError(error, on: context)
                    }
                }, destroy)
        }
        guard code == SQLITE_OK else {
            throw SQLiteError.fromConnection(handle, code: code)
        }
    }

    /// Removes a SQL function registered with ``add(function:)``.
    public func remove(function: DatabaseFunction) throws {
        let handle = try checkedConnection()
        let code = sqlite3_create_function_v2(
            handle, function.name, Int32(function.argumentCount ?? -1), function.textRepresentationFlags,
            nil, nil, nil, nil, nil)
        guard code == SQLITE_OK else {
            throw SQLiteError.fromConnection(handle, code: code)
        }
    }

    /// Registers a collation on this connection, replacing any with the same
    /// name.
    public func add(collation: DatabaseCollation) throws {
        let handle = try checkedConnection()
        let code = Database.createCollation(collation, on: handle)
        guard code == SQLITE_OK else {
            throw SQLiteError.fromConnection(handle, code: code)
        }
    }

    /// Registers `collation` on a raw connection; SQLite's result code.
    static func createCollation(_ collation: DatabaseCollation, on handle: OpaquePointer) -> Int32 {
        let box = Unmanaged.passRetained(collation).toOpaque()
        let code = sqlite3_create_collation_v2(
            handle, collation.name, SQLITE_UTF8, box,
            { context, lhsCount, lhs, rhsCount, rhs in
                guard let context else { return 0 }
                let collation = Unmanaged<DatabaseCollation>.fromOpaque(context).takeUnretainedValue()
                return collation.compareUTF8(UnsafeRawBufferPointer(start: lhs, count: Int(lhsCount)),
                                             UnsafeRawBufferPointer(start: rhs, count: Int(rhsCount)))
            },
            { pointer in
                guard let pointer else { return }
                Unmanaged<DatabaseCollation>.fromOpaque(pointer).release()
            })
        if code != SQLITE_OK { Unmanaged<DatabaseCollation>.fromOpaque(box).release() }
        return code
    }
}

// MARK: - Trampolines

/// Keeps a function alive while SQLite holds it; released by SQLite's destroy
/// callback when the function is replaced or the connection closes.
private final class FunctionBox {
    let function: DatabaseFunction
    init(_ function: DatabaseFunction) { self.function = function }
}

/// One group's aggregate, referenced from SQLite's aggregate context.
private final class AggregateState {
    var aggregate: any DatabaseAggregate
    var error: (any Error)?
    init(_ aggregate: any DatabaseAggregate) { self.aggregate = aggregate }
}

private func functionArguments(_ count: Int32, _ arguments: UnsafeMutablePointer<OpaquePointer?>?) -> [DatabaseValue] {
    guard let arguments else { return [] }
    return (0..<Int(count)).map { index in
        arguments[index].map(DatabaseValue.read(from:)) ?? .null
    }
}

/// The group's state, created on the first row when `create` is true.
private func aggregateState(_ context: OpaquePointer?, create: Bool) -> AggregateState? {
    let size = create ? Int32(MemoryLayout<UnsafeMutableRawPointer?>.size) : 0
    guard let slot = sqlite3_aggregate_context(context, size)?.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
    else { return nil }
    if let existing = slot.pointee {
        return Unmanaged<AggregateState>.fromOpaque(existing).takeUnretainedValue()
    }
    guard create else { return nil }
    let box = Unmanaged<FunctionBox>.fromOpaque(sqlite3_user_data(context)).takeUnretainedValue()
    guard case .aggregate(let make) = box.function.kind else { return nil }
    let state = AggregateState(make())
    slot.pointee = Unmanaged.passRetained(state).toOpaque()
    return state
}

private func releaseAggregateState(_ context: OpaquePointer?) {
    guard let slot = sqlite3_aggregate_context(context, 0)?.assumingMemoryBound(to: UnsafeMutableRawPointer?.self),
        let existing = slot.pointee
    else { return }
    Unmanaged<AggregateState>.fromOpaque(existing).release()
    slot.pointee = nil
}

private func setResult(_ value: DatabaseValue, on context: OpaquePointer?) {
    switch value {
    case .null:
        sqlite3_result_null(context)
    case .integer(let int64):
        sqlite3_result_int64(context, int64)
    case .real(let double):
        sqlite3_result_double(context, double)
    case .text(var string):
        string.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                if let base = chars.baseAddress, chars.count > 0 {
                    sqlite3_result_text(context, base, Int32(chars.count), sqliteTransient)
                } else {
                    sqlite3_result_text(context, "", 0, sqliteTransient)
                }
            }
        }
    case .blob(let data):
        data.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress, bytes.count > 0 {
                sqlite3_result_blob(context, base, Int32(bytes.count), sqliteTransient)
            } else {
                sqlite3_result_zeroblob(context, 0)
            }
        }
    }
}

private func setError(_ error: any Error, on context: OpaquePointer?) {
    if let error = error as? SQLiteError {
        sqlite3_result_error(context, error.message ?? "\(error)", -1)
        sqlite3_result_error_code(context, error.code.rawValue)
    } else {
        sqlite3_result_error(context, "\(error)", -1)
    }
}
