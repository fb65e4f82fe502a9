/// The keyed container a record decoder or encoder made for one coding key
/// type, kept for the next record: making a container costs an allocation
/// and generic metadata lookups, and every record of a fetch or of a run of
/// inserts asks for the same one.
///
/// Not thread-safe: it belongs to one decoder or encoder, used by one thread
/// at a time.
struct KeyedContainerCache {
    /// The coding key type of `holder`'s container.
    private var keyType: Any.Type?
    /// A `Holder<Container>` for `keyType`.
    private var holder: AnyObject?

    /// The cached container for `Key`, or a new one made by `make` (and kept).
    @inline(__always)
    mutating func container<Key: CodingKey, Container>(for key: Key.Type, make: () -> Container) -> Container {
        if let keyType, keyType == Key.self, let holder {
            return unsafeDowncast(holder, to: Holder<Container>.self).container
        }
        let container = make()
        keyType = Key.self
        holder = Holder(container)
        return container
    }

    private final class Holder<Value> {
        let container: Value

        init(_ container: Value) {
            self.container = container
        }
    }
}
