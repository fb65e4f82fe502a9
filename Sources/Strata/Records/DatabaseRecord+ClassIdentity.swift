@_spi(Reflection) import Swift

extension DatabaseRecord {
    /// Writes a new rowid into the stored property of a class instance that
    /// holds the primary key, so the object the app holds gets its id.
    ///
    /// The property is the one named like the column (in any case), or else
    /// the one that decoding a copy with the rowid fills with it. It is
    /// written through the standard library's field reflection
    /// (`_forEachField`, which gives each stored property's offset and type)
    /// with an ordinary assignment of its own type.
    func writeIntoInstance(rowID: Int64, primaryKeyColumn: String) throws {
        let object = self as AnyObject
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        var fields: [(name: String, offset: Int, type: Any.Type)] = []
        let classType = _EachFieldOptions(rawValue: 1 << 0)
        _ = _forEachField(of: Self.self, options: classType) { name, offset, type, _ in
            fields.append((String(cString: name), offset, type))
            return true
        }
        var candidates = fields.filter { $0.name.caseInsensitiveEquals(primaryKeyColumn) }
        if candidates.isEmpty {
            // A coding key renamed from the property: find the property that
            // a decoded copy holding the rowid has and this object lacks.
            let encoded = try EncodedRecord(self)
            if let index = encoded.index(of: primaryKeyColumn) {
                var values = encoded.values.map { $0?.databaseValue ?? .null }
                values[index] = .integer(rowID)
                let copy = try Self.decode(from: Row(columnNames: encoded.columns, values: values)) as AnyObject
                let copyBase = UnsafeRawPointer(Unmanaged.passUnretained(copy).toOpaque())
                candidates = fields.filter { field in
                    integerValue(field.type, at: copyBase + field.offset) == rowID
                        && integerValue(field.type, at: UnsafeRawPointer(base) + field.offset) != rowID
                }
            }
        }
        guard candidates.count == 1, let field = candidates.first,
            write(rowID, as: field.type, at: base + field.offset)
        else {
            throw RecordError(
                kind: .missingPrimaryKey, tableName: Self.databaseTableName,
                message: "the row was inserted with rowid \(rowID), but no stored integer property of \(Self.self) holds \"\(primaryKeyColumn)\"; implement didInsert(rowID:primaryKeyColumn:)")
        }
    }
}

/// Assigns the rowid to a property of a database-convertible type; false
/// when the type cannot hold it.
private func write(_ rowID: Int64, as type: Any.Type, at pointer: UnsafeMutableRawPointer) -> Bool {
    guard let convertible = type as? any DatabaseValueConvertible.Type else { return false }
    return assign(convertible, rowID, at: pointer)
}

private func assign<T: DatabaseValueConvertible>(_ type: T.Type, _ rowID: Int64, at pointer: UnsafeMutableRawPointer) -> Bool {
    guard let value = T.fromDatabaseValue(.integer(rowID)) else { return false }
    pointer.assumingMemoryBound(to: T.self).pointee = value
    return true
}

/// The integer a property of a database-convertible type holds, if any.
private func integerValue(_ type: Any.Type, at pointer: UnsafeRawPointer) -> Int64? {
    guard let convertible = type as? any DatabaseValueConvertible.Type else { return nil }
    return read(convertible, at: pointer)
}

private func read<T: DatabaseValueConvertible>(_ type: T.Type, at pointer: UnsafeRawPointer) -> Int64? {
    if case .integer(let value) = pointer.assumingMemoryBound(to: T.self).pointee.databaseValue { return value }
    return nil
}
