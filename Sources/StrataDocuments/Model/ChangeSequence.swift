/// A place in a changes feed: what a change's `seq` and a page's `lastSeq`
/// give, and what `since` takes back.
///
/// It is opaque, as CouchDB's is: a store in this process counts
/// (`"12"`), CouchDB 3 answers strings such as `"12-g1AAAA…"`, and only
/// the store that gave a sequence can say what comes after it. Keep it
/// (in a checkpoint, say) and hand it back; compare it only for equality.
///
/// ```swift
/// let page = try await store.changes(ChangesOptions(since: .start))
/// let next = try await store.changes(ChangesOptions(since: page.lastSeq))
/// ```
public struct ChangeSequence: Sendable, Hashable, CustomStringConvertible {
    /// The sequence as the store gave it: a JSON string (a number given
    /// by an older server is kept as its text), or another JSON value
    /// some servers use.
    public let json: JSON

    /// A sequence as a store gave it in JSON (a changes row's `seq`, a
    /// checkpoint's `source_last_seq`).
    public init(_ json: JSON) {
        if let number = json.intValue {
            self.json = .string(String(number))
        } else {
            self.json = json
        }
    }

    /// The sequence a store in this process gives after `count` updates.
    public init(_ count: Int) {
        json = .string(String(count))
    }

    /// Before every change: a feed read `since: .start` gives all of them.
    public static let start = ChangeSequence(0)

    /// The current end of the feed, when it is read: a feed read
    /// `since: .now` gives only changes made after that.
    public static let now = ChangeSequence(.string("now"))

    /// The sequence as a `since` parameter takes it.
    public var description: String { json.stringValue ?? json.text }

    /// The count a sequence starts with (`"12-g1AAAA…"` and `"12"` are
    /// 12), nil for ``now`` and for sequences that start with none. A
    /// hint for progress displays: two servers' counts do not compare.
    public var number: Int? {
        if let number = json.intValue { return number }
        let text = json.stringValue ?? json.arrayValue?.first?.intValue.map(String.init) ?? ""
        return Int(text.prefix { $0.isNumber })
    }
}

extension ChangeSequence {
    /// The count a sequence of a store in this process is (0 for one
    /// that is not a count).
    package var count: Int { number ?? 0 }
}

extension ChangeSequence: ExpressibleByIntegerLiteral {
    /// A count, as a store in this process gives it: `since: 12`.
    public init(integerLiteral value: Int) {
        self.init(value)
    }
}

extension ChangeSequence: ExpressibleByStringLiteral {
    /// A sequence as text: `since: "12-g1AAAA…"`, `since: "now"`.
    public init(stringLiteral value: String) {
        self.init(.string(value))
    }
}
