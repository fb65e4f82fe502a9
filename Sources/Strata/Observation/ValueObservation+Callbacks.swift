import Foundation

/// Stops an observation started with a callback; see
/// ``ValueObservation/start(in:onError:onChange:)``.
///
/// Keep it as long as the observation should run: it cancels the
/// observation when cancelled or deinitialized. After ``cancel()`` returns
/// on the callbacks' queue or actor, no callback is called again.
public final class DatabaseCancellable: Sendable {
    let flag = CancellationFlag()
    private let task = LockedTask()

    init() {}

    func attach(_ task: Task<Void, Never>) {
        self.task.set(task)
        if flag.isSet { task.cancel() }
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { flag.isSet }

    /// Stops the observation.
    public func cancel() {
        flag.set()
        task.cancel()
    }

    deinit {
        task.cancel()
    }
}

/// A flag set once, read from any thread.
final class CancellationFlag: Sendable {
    private let flag = Locked(false)
    var isSet: Bool { flag.value }
    func set() { flag.withLock { $0 = true } }
}

/// The observing task, cancelled by whoever comes first.
private final class LockedTask: Sendable {
    private let task = Locked<Task<Void, Never>?>(nil)
    func set(_ task: Task<Void, Never>) { self.task.withLock { $0 = task } }
    func cancel() { task.value?.cancel() }
}

extension ValueObservation {
    /// Observes a ``DatabaseQueue`` or a ``DatabasePool``, calling
    /// `onChange` on the main actor with the first value, then with each new
    /// one: for UIKit and AppKit code, beside the `AsyncSequence` of
    /// ``values(in:)``.
    ///
    /// ```swift
    /// let observation = ValueObservation { db in try Note.all().order(title).fetchAll(db) }
    /// cancellable = observation.start(in: queue, onError: { error in
    ///     show(error)
    /// }, onChange: { notes in
    ///     tableView.reload(notes)
    /// })
    /// ```
    ///
    /// - Parameters:
    ///   - writer: the database.
    ///   - onError: called once, on the main actor, when a fetch fails; the
    ///     observation then stops.
    ///   - onChange: called on the main actor with each value.
    /// - Returns: keep it: releasing or cancelling it stops the observation.
    public func start(
        in writer: some DatabaseWriter,
        onError: @escaping @MainActor (any Error) -> Void,
        onChange: @escaping @MainActor (Value) -> Void
    ) -> DatabaseCancellable {
        startOnMainActor(values(in: writer), onError: onError, onChange: onChange)
    }

    /// Observes a ``DatabaseQueue`` or a ``DatabasePool``, calling the
    /// callbacks on a serial dispatch queue of your choice, in order.
    ///
    /// - Parameters:
    ///   - writer: the database.
    ///   - dispatchQueue: a serial queue for the callbacks.
    ///   - onError: called once when a fetch fails; the observation stops.
    ///   - onChange: called with the first value, then with each new one.
    /// - Returns: keep it: releasing or cancelling it stops the observation.
    public func start(
        in writer: some DatabaseWriter, on dispatchQueue: DispatchQueue,
        onError: @escaping @Sendable (any Error) -> Void,
        onChange: @escaping @Sendable (Value) -> Void
    ) -> DatabaseCancellable {
        start(values(in: writer), on: dispatchQueue, onError: onError, onChange: onChange)
    }

    private func startOnMainActor(
        _ values: AsyncThrowingStream<Value, any Error>,
        onError: @escaping @MainActor (any Error) -> Void,
        onChange: @escaping @MainActor (Value) -> Void
    ) -> DatabaseCancellable {
        let cancellable = DatabaseCancellable()
        let flag = cancellable.flag
        cancellable.attach(deliver(
            values,
            onError: { error in await MainActor.run { if !flag.isSet { onError(error) } } },
            onChange: { value in await MainActor.run { if !flag.isSet { onChange(value) } } }))
        return cancellable
    }

    private func start(
        _ values: AsyncThrowingStream<Value, any Error>, on dispatchQueue: DispatchQueue,
        onError: @escaping @Sendable (any Error) -> Void,
        onChange: @escaping @Sendable (Value) -> Void
    ) -> DatabaseCancellable {
        let cancellable = DatabaseCancellable()
        let flag = cancellable.flag
        cancellable.attach(deliver(
            values,
            onError: { error in dispatchQueue.async { if !flag.isSet { onError(error) } } },
            onChange: { value in dispatchQueue.async { if !flag.isSet { onChange(value) } } }))
        return cancellable
    }

    /// The task that hands each value, then a failure, to the callbacks;
    /// each callback checks the cancellation flag where it runs, so none
    /// runs after `cancel()` returned there.
    private func deliver(
        _ values: AsyncThrowingStream<Value, any Error>,
        onError: @escaping @Sendable (any Error) async -> Void,
        onChange: @escaping @Sendable (Value) async -> Void
    ) -> Task<Void, Never> {
        Task {
            do {
                for try await value in values { await onChange(value) }
            } catch is CancellationError {
            } catch {
                await onError(error)
            }
        }
    }
}
