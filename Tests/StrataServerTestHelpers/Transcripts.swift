import Foundation

/// The request/response logs recorded against a real CouchDB 3.4.3 and
/// PouchDB (`Resources/transcripts`, described in its README), shared by the
/// server's and the replicator's tests.
public enum Transcripts {
    /// The file of the transcript named `name` (`"couchdb-replicator.log"`).
    public static func url(_ name: String) throws -> URL {
        guard let url = Bundle.module.url(forResource: "Resources/transcripts/" + name, withExtension: nil) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "Resources/transcripts/" + name])
        }
        return url
    }

    /// The text of the transcript named `name`.
    public static func text(_ name: String) throws -> String {
        try String(contentsOf: url(name), encoding: .utf8)
    }
}
