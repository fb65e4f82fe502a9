/// What changed between two lists of identifiable elements, as a table or
/// collection view needs it to animate: what Core Data's
/// `NSFetchedResultsController` reports to its delegate.
///
/// ```swift
/// let changes = ListChanges(from: shownNotes, to: newNotes)
/// tableView.performBatchUpdates {
///     tableView.deleteRows(at: changes.deleted.map { IndexPath(row: $0, section: 0) }, with: .automatic)
///     tableView.insertRows(at: changes.inserted.map { IndexPath(row: $0, section: 0) }, with: .automatic)
///     for move in changes.moved { tableView.moveRow(at: IndexPath(row: move.from, section: 0), to: IndexPath(row: move.to, section: 0)) }
///     tableView.reloadRows(at: changes.updated.map { IndexPath(row: $0, section: 0) }, with: .none)
/// }
/// ```
///
/// Elements are matched by `id`; an element whose id is in both lists but
/// whose value differs is updated (and may also have moved).
public struct ListChanges: Equatable, Sendable {
    /// An element that changed position.
    public struct Move: Equatable, Sendable {
        /// Its index in the old list.
        public var from: Int
        /// Its index in the new list.
        public var to: Int
        /// Whether its value changed too.
        public var isUpdated: Bool

        /// Makes a move.
        public init(from: Int, to: Int, isUpdated: Bool) {
            self.from = from
            self.to = to
            self.isUpdated = isUpdated
        }
    }

    /// Indexes, in the old list, of the elements that are gone.
    public var deleted: [Int]
    /// Indexes, in the new list, of the elements that are new.
    public var inserted: [Int]
    /// Elements that changed position.
    public var moved: [Move]
    /// Indexes, in the old list, of the elements that stayed in place and
    /// changed value (UIKit's `reloadRows` takes indexes before the update).
    public var updated: [Int]

    /// Whether the lists hold the same elements in the same order.
    public var isEmpty: Bool { deleted.isEmpty && inserted.isEmpty && moved.isEmpty && updated.isEmpty }

    /// The changes that turn `old` into `new`.
    public init<Element: Identifiable & Equatable>(from old: [Element], to new: [Element]) {
        let difference = new.map(\.id).difference(from: old.map(\.id)).inferringMoves()
        var deleted: [Int] = []
        var inserted: [Int] = []
        var moved: [Move] = []
        var movedFrom: Set<Int> = []
        for change in difference {
            switch change {
            case .remove(let offset, _, let associated):
                if associated == nil { deleted.append(offset) } else { movedFrom.insert(offset) }
            case .insert(let offset, _, let associated):
                if let from = associated {
                    moved.append(Move(from: from, to: offset, isUpdated: old[from] != new[offset]))
                } else {
                    inserted.append(offset)
                }
            }
        }
        // Elements neither removed nor inserted keep their relative order:
        // pair them up to find the updated ones.
        let removed = Set(deleted).union(movedFrom)
        let added = Set(inserted).union(moved.map(\.to))
        let keptOld = old.indices.filter { !removed.contains($0) }
        let keptNew = new.indices.filter { !added.contains($0) }
        var updated: [Int] = []
        for (oldIndex, newIndex) in zip(keptOld, keptNew) where old[oldIndex] != new[newIndex] {
            updated.append(oldIndex)
        }
        self.deleted = deleted.sorted()
        self.inserted = inserted.sorted()
        self.moved = moved.sorted { $0.to < $1.to }
        self.updated = updated
    }
}

/// A list split into sections by a key, in the list's order: what
/// `NSFetchedResultsController`'s `sectionNameKeyPath` gives. Sort the query
/// by the section key first, as Core Data requires.
///
/// ```swift
/// let sections = SectionedResults(products, by: \.category)
/// for section in sections.sections {
///     print(section.key, section.elements.count)
/// }
/// ```
public struct SectionedResults<Key: Hashable, Element> {
    /// One section: its key and its elements, in order.
    public struct Section {
        /// The key all the section's elements share.
        public var key: Key
        /// The elements, in the list's order.
        public var elements: [Element]
    }

    /// The sections, in the order their first element appears.
    public var sections: [Section]

    /// Groups consecutive elements with the same key into one section.
    public init(_ elements: [Element], by key: (Element) throws -> Key) rethrows {
        var sections: [Section] = []
        for element in elements {
            let elementKey = try key(element)
            if let last = sections.indices.last, sections[last].key == elementKey {
                sections[last].elements.append(element)
            } else {
                sections.append(Section(key: elementKey, elements: [element]))
            }
        }
        self.sections = sections
    }

    /// The element at a section and row, as an `IndexPath` names it.
    public subscript(section: Int, row: Int) -> Element {
        sections[section].elements[row]
    }
}

extension SectionedResults: Equatable where Element: Equatable {}
extension SectionedResults.Section: Equatable where Element: Equatable {}
extension SectionedResults: Sendable where Key: Sendable, Element: Sendable {}
extension SectionedResults.Section: Sendable where Key: Sendable, Element: Sendable {}
