extension String {
    /// Whether the string's bytes (UTF-8) start with `prefix`'s. CouchDB
    /// compares ids, member names and attachment names as bytes: `_`
    /// followed by a combining mark starts with `_` there, while `hasPrefix`,
    /// which compares Characters, sees one Character that is not `_`.
    package func hasBytePrefix(_ prefix: String) -> Bool {
        utf8.starts(with: prefix.utf8)
    }
}
