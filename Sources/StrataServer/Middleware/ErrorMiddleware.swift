import Foundation
import Hummingbird
import HTTPTypes
import StrataDocuments

/// The one place where errors become answers: a ``DocumentError`` is
/// CouchDB's `{"error", "reason"}` with its status, anything else a 500
/// `unknown_error`. A 5xx's reason is scrubbed of the server's own paths: a
/// client learns what failed, not where the server keeps its files.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = CouchContext
    /// The folder whose path is never shown.
    let dataDirectory: URL

    func handle(_ request: Request, context: CouchContext, next: (Request, CouchContext) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return answer(for: error).response(to: request.method)
        }
    }

    func answer(for error: any Error) -> HTTPAnswer {
        let failure = error as? DocumentError ?? DocumentError(status: 500, error: "unknown_error", reason: String(describing: error))
        return HTTPAnswer(status: .init(code: failure.status), json: failure.status >= 500 ? scrubbed(failure.json) : failure.json)
    }

    func scrubbed(_ json: JSON) -> JSON {
        guard var object = json.objectValue, let reason = object["reason"]?.stringValue else { return json }
        var text = reason
        for path in [dataDirectory.path, dataDirectory.standardizedFileURL.path] where path.count > 1 {
            text = text.replacingOccurrences(of: path, with: "<data>")
        }
        object["reason"] = .string(text)
        return .object(object)
    }
}
