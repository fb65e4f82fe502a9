/// A revision id, `N-hash`: N the depth in the document's tree (1 for a new
/// document), hash opaque text (32 lowercase hex when Strata makes it).
public struct Revision: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// N: the revision's depth in the document's tree.
    public var depth: Int
    /// The text after the dash.
    public var hash: String

    /// The revision `depth-hash`.
    public init(depth: Int, hash: String) {
        self.depth = depth
        self.hash = hash
    }

    /// Parses `N-hash`; nil when it is not of that form.
    public init?(_ text: String) {
        let utf8 = text.utf8
        guard let dash = utf8.firstIndex(of: UInt8(ascii: "-")), dash != utf8.startIndex else { return nil }
        var depth = 0
        for byte in utf8[..<dash] {
            guard (0x30...0x39).contains(byte), depth < Int.max / 10 - 9 else { return nil }
            depth = depth * 10 + Int(byte - 0x30)
        }
        let start = utf8.index(after: dash)
        guard start < utf8.endIndex else { return nil }
        self.depth = depth
        self.hash = String(text[start...])
    }

    public var description: String { "\(depth)-\(hash)" }

    /// CouchDB's order between revisions of equal standing: the deeper one,
    /// then the greater hash.
    public static func < (a: Revision, b: Revision) -> Bool {
        a.depth != b.depth ? a.depth < b.depth : a.hash.utf8.lexicographicallyPrecedes(b.hash.utf8)
    }
}

/// One document's revision tree (a forest, once stemming or replication cut
/// it): which revision descends from which, which are deleted, which still
/// have a body. Pure data; `DocumentDatabase` loads and saves it.
struct RevisionTree {
    struct Node {
        var revision: Revision
        var parent: Revision?
        var deleted: Bool
        var hasBody: Bool
    }

    private(set) var nodes: [Revision: Node] = [:]

    init(_ nodes: [Node] = []) {
        for node in nodes { self.nodes[node.revision] = node }
    }

    var isEmpty: Bool { nodes.isEmpty }

    func contains(_ revision: Revision) -> Bool { nodes[revision] != nil }

    subscript(revision: Revision) -> Node? { nodes[revision] }

    /// Revisions no other revision descends from.
    var leaves: [Node] {
        let parents = Set(nodes.values.compactMap(\.parent))
        return nodes.values.filter { !parents.contains($0.revision) }
    }

    /// CouchDB's winner: a non-deleted leaf before a deleted one, then the
    /// deepest, then the greatest hash.
    var winner: Node? {
        leaves.max { a, b in
            if a.deleted != b.deleted { return a.deleted }
            return a.revision < b.revision
        }
    }

    /// Leaves other than the winner, not deleted (`_conflicts`), newest first.
    var conflicts: [Revision] {
        let w = winner?.revision
        return leaves.filter { !$0.deleted && $0.revision != w }.map(\.revision).sorted(by: >)
    }

    /// Deleted leaves other than the winner (`_deleted_conflicts`).
    var deletedConflicts: [Revision] {
        let w = winner?.revision
        return leaves.filter { $0.deleted && $0.revision != w }.map(\.revision).sorted(by: >)
    }

    func isLeaf(_ revision: Revision) -> Bool {
        contains(revision) && !nodes.values.contains { $0.parent == revision }
    }

    /// The revision and its known ancestors, newest first.
    func ancestry(of revision: Revision) -> [Revision] {
        var path: [Revision] = []
        var current: Revision? = revision
        while let r = current, let node = nodes[r] {
            path.append(r)
            current = node.parent
        }
        return path
    }

    /// Adds a new revision on top of `parent` (or as a root).
    mutating func add(_ revision: Revision, parent: Revision?, deleted: Bool) {
        nodes[revision] = Node(revision: revision, parent: parent, deleted: deleted, hasBody: true)
    }

    /// Merges a path given newest first (as `_revisions` lists it) whose
    /// newest revision carries a body; returns the revisions that were new.
    /// Where the path meets a known revision it joins the tree; a path that
    /// meets nothing starts a new root (and so a conflict).
    @discardableResult
    mutating func merge(path: [Revision], deleted: Bool) -> [Revision] {
        var added: [Revision] = []
        for (i, revision) in path.enumerated() {
            if nodes[revision] != nil { break }
            let parent = i + 1 < path.count ? path[i + 1] : nil
            nodes[revision] = Node(revision: revision, parent: parent, deleted: i == 0 ? deleted : false, hasBody: i == 0)
            added.append(revision)
        }
        return added
    }

    /// Keeps, for every leaf, `limit` revisions of its ancestry and forgets
    /// the rest; returns the revisions removed.
    mutating func stem(limit: Int) -> [Revision] {
        guard limit > 0 else { return [] }
        var keep = Set<Revision>()
        for leaf in leaves {
            var current: Revision? = leaf.revision
            var n = 0
            while let r = current, n < limit, let node = nodes[r] {
                keep.insert(r)
                current = node.parent
                n += 1
            }
        }
        let removed = nodes.keys.filter { !keep.contains($0) }
        for r in removed { nodes[r] = nil }
        for (r, node) in nodes where node.parent.map({ nodes[$0] == nil }) ?? false {
            nodes[r]?.parent = nil
        }
        return removed
    }

    /// Removes the leaves among `revisions` and what only they descended
    /// from, as CouchDB's purge does (`couch_key_tree:remove_leafs`: the
    /// tree is what the remaining leaves' paths hold); returns the leaves
    /// removed and every node removed.
    mutating func removeLeaves(_ revisions: Set<Revision>) -> (leaves: [Revision], nodes: [Revision]) {
        let removedLeaves = leaves.map(\.revision).filter(revisions.contains)
        guard !removedLeaves.isEmpty else { return ([], []) }
        var keep = Set<Revision>()
        for leaf in leaves where !revisions.contains(leaf.revision) {
            keep.formUnion(ancestry(of: leaf.revision))
        }
        let removed = nodes.keys.filter { !keep.contains($0) }
        for r in removed { nodes[r] = nil }
        return (removedLeaves, removed)
    }

    /// What `_revs_diff` answers for `revisions`: those unknown here, and the
    /// known leaves that could be their ancestors (shallower than one of them).
    func missing(_ revisions: [Revision]) -> (missing: [Revision], possibleAncestors: [Revision]) {
        let missing = revisions.filter { !contains($0) }
        guard let deepest = missing.map(\.depth).max() else { return ([], []) }
        let ancestors = leaves.map(\.revision).filter { $0.depth < deepest }.sorted(by: >)
        return (missing, ancestors)
    }
}
