import Foundation
import Strata

/// What `GET /{db}` answers.
public struct DocumentDatabaseInfo: Sendable, Equatable {
    /// The database's name (`db_name`).
    public var name: String
    /// Documents whose winner is not deleted (`doc_count`).
    public var documentCount: Int
    /// Deleted documents (`doc_del_count`).
    public var deletedDocumentCount: Int
    /// The current end of the changes feed (`update_seq`).
    public var updateSequence: ChangeSequence
    /// Bytes on disk (`sizes.file`).
    public var fileSize: Int
    /// Bytes of live data (`sizes.active`).
    public var activeSize: Int
    /// How many purges the database has had (`purge_seq`).
    public var purgeSequence = 0

    /// Information with the given values.
    public init(name: String, documentCount: Int, deletedDocumentCount: Int, updateSequence: ChangeSequence, fileSize: Int, activeSize: Int) {
        self.name = name
        self.documentCount = documentCount
        self.deletedDocumentCount = deletedDocumentCount
        self.updateSequence = updateSequence
        self.fileSize = fileSize
        self.activeSize = activeSize
    }

    /// CouchDB's answer to `GET /{db}` (a server adds
    /// `instance_start_time`).
    public var json: JSONObject {
        [
            "db_name": .string(name),
            "purge_seq": .string(String(purgeSequence)),
            "update_seq": updateSequence.json,
            "sizes": .object(["file": .int(fileSize), "external": .int(activeSize), "active": .int(activeSize)]),
            "props": .object([:]),
            "doc_del_count": .int(deletedDocumentCount),
            "doc_count": .int(documentCount),
            "disk_format_version": .int(8),
            "compact_running": .bool(false),
            "cluster": .object(["q": .int(1), "n": .int(1), "w": .int(1), "r": .int(1)]),
        ]
    }

    /// From CouchDB's answer to `GET /{db}`.
    public init(json object: JSONObject) {
        let sizes = object["sizes"]
        self.init(name: object["db_name"]?.stringValue ?? "",
                  documentCount: object["doc_count"]?.intValue ?? 0,
                  deletedDocumentCount: object["doc_del_count"]?.intValue ?? 0,
                  updateSequence: object["update_seq"].map(ChangeSequence.init) ?? .start,
                  fileSize: sizes?["file"]?.intValue ?? 0,
                  activeSize: sizes?["active"]?.intValue ?? 0)
        if let purge = object["purge_seq"] { purgeSequence = ChangeSequence(purge).number ?? 0 }
    }
}
