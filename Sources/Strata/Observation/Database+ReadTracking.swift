extension Database {
    /// Runs `body`, returning the tables it read (lowercased): the tables a
    /// value observation watches.
    func trackingReadTables<T>(_ body: () throws -> T) throws -> (T, Set<String>) {
        let tables = ReadTables()
        let result = try reportingTableReads(to: { tables.names.insert(String(cString: $0).lowercased()) }, body)
        return (result, tables.names)
    }
}

/// The tables a fetch read, noted while its statements were prepared.
private final class ReadTables {
    var names: Set<String> = []
}
