import Foundation
import Strata

/// A JSON object: members in the order they were written.
///
/// Member names are compared by their bytes, as CouchDB compares them: a
/// name with a precomposed `é` and one with `e` and a combining accent are
/// two members (Swift's `==` on `String` would take them for one).
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// The members, in order.
    public private(set) var pairs: [(key: String, value: JSON)]

    /// An object without members.
    public init() { pairs = [] }

    /// An object of these members; a repeated name keeps its first place
    /// and its last value, as setting it again would.
    public init(_ pairs: [(key: String, value: JSON)]) {
        if pairs.count <= 16 {
            self.pairs = []
            self.pairs.reserveCapacity(pairs.count)
            for pair in pairs { self[pair.key] = pair.value }
            return
        }
        // Large objects (a `_revs_diff` of thousands of ids): names found by
        // hashing, not by a scan per member.
        var places: [ExactString: Int] = [:]
        places.reserveCapacity(pairs.count)
        var members: [(key: String, value: JSON)] = []
        members.reserveCapacity(pairs.count)
        for pair in pairs {
            if let place = places[ExactString(pair.key)] {
                members[place].value = pair.value
            } else {
                places[ExactString(pair.key)] = members.count
                members.append(pair)
            }
        }
        self.pairs = members
    }

    public init(dictionaryLiteral elements: (String, JSON)...) {
        self.init(elements.map { (key: $0.0, value: $0.1) })
    }

    /// The member named `key`; setting `nil` removes it, setting a new key
    /// appends it.
    public subscript(key: String) -> JSON? {
        get { pairs.first { ExactString.same($0.key, key) }?.value }
        set {
            if let i = pairs.firstIndex(where: { ExactString.same($0.key, key) }) {
                if let newValue { pairs[i].value = newValue } else { pairs.remove(at: i) }
            } else if let newValue {
                pairs.append((key, newValue))
            }
        }
    }

    /// The members' names, in order.
    public var keys: [String] { pairs.map(\.key) }
    /// Whether the object has no member.
    public var isEmpty: Bool { pairs.isEmpty }
    /// The number of members.
    public var count: Int { pairs.count }

    public func makeIterator() -> IndexingIterator<[(key: String, value: JSON)]> {
        pairs.makeIterator()
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.pairs.count == rhs.pairs.count
            && zip(lhs.pairs, rhs.pairs).allSatisfy { ExactString.same($0.key, $1.key) && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(pairs.count)
        for pair in pairs {
            hasher.combine(pair.key)
            hasher.combine(pair.value)
        }
    }
}
