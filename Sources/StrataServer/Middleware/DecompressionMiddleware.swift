import CompressNIO
import Hummingbird
import HTTPTypes
import NIOCore
import StrataDocuments

/// Inflates a `gzip` or `deflate` request body (ibmcloudant gzips its
/// requests), held to the server's size limit once inflated; the handlers
/// then see the plain body.
struct DecompressionMiddleware: RouterMiddleware {
    typealias Context = CouchContext
    let maximumBodySize: Int

    func handle(_ request: Request, context: CouchContext, next: (Request, CouchContext) async throws -> Response) async throws -> Response {
        guard let encoding = request.headers[.contentEncoding]?.lowercased(), encoding != "identity" else {
            return try await next(request, context)
        }
        let algorithm: CompressionAlgorithm
        switch encoding {
        case "gzip", "x-gzip": algorithm = .gzip()
        case "deflate": algorithm = .zlib()
        default: throw DocumentError(.unsupportedMediaType, "Content-Encoding \(encoding) is not supported; send gzip, deflate or identity")
        }
        var request = request
        var buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: maximumBodySize)
        } catch {
            throw DocumentError(.tooLarge, "the request entity is too large (over \(maximumBodySize) bytes)")
        }
        let inflated: ByteBuffer
        do {
            inflated = try buffer.decompress(with: algorithm, maxSize: maximumBodySize)
        } catch let error as CompressNIOError where error == .bufferOverflow {
            throw DocumentError(.tooLarge, "the request body is larger than \(maximumBodySize) bytes once inflated")
        } catch {
            throw DocumentError(.badRequest, "the \(encoding) request body is corrupt")
        }
        var head = request.head
        head.headerFields[.contentEncoding] = nil
        head.headerFields[.contentLength] = String(inflated.readableBytes)
        return try await next(Request(head: head, body: RequestBody(buffer: inflated)), context)
    }
}
