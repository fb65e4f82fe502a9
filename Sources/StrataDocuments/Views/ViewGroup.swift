import Foundation
import Strata

/// The views of one design document, as the index needs them: how to map a
/// batch of documents and how each view reduces. Built from a design
/// document's JavaScript by the server, or from Swift closures
/// (``DesignFunctions``).
public struct ViewGroup: Sendable {
    /// The design document's id (`_design/voting`).
    public var design: String
    /// Changes whenever the functions change; the index is rebuilt then.
    public var signature: String
    /// The views' names, in the order `map` answers them.
    public var views: [String]
    /// The reduce of each view that has one.
    public var reduces: [String: ViewReduce]
    /// For each document, for each view (in `views` order), what it emits.
    public var map: @Sendable ([JSONObject]) throws -> [[[EmittedRow]]]
    /// For a view whose reduce is a function that runs elsewhere (the
    /// JavaScript query servers), the same function run on many batches in
    /// one call: the stored reductions are made with it.
    public var reduceBatches: [String: ViewReduceBatches] = [:]

    /// A view group from its functions.
    public init(design: String, signature: String, views: [String], reduces: [String: ViewReduce],
                map: @escaping @Sendable ([JSONObject]) throws -> [[[EmittedRow]]]) {
        self.design = design
        self.signature = signature
        self.views = views
        self.reduces = reduces
        self.map = map
    }
}

/// What `_design/{ddoc}/_info` tells of a view group's index.
public struct ViewGroupInfo: Sendable, Equatable {
    /// The signature the index was built for.
    public var signature: String
    /// The database sequence the index is up to date with.
    public var updateSequence: Int
    /// The rows the index holds, all views together.
    public var rowCount: Int
}
