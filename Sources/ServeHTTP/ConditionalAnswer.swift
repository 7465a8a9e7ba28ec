import CompressNIO
import FeedCore
import FeedEngine
import FeedSupport
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// A 200 answer with its validators: answered with 304 when the reader already has it,
/// gzip-compressed when the reader accepts it.
package struct HTTPAnswer {
    package var body: [UInt8]
    package var contentType: String
    package var lastModified: Date?
    package var maxAge: Int?

    package func response(to request: Request) -> Response {
        RenderedResponse(body: body, contentType: contentType, lastModified: lastModified, maxAge: maxAge, degraded: nil, versions: [:])
            .answer(to: request)
    }

    package static func acceptsGzip(_ headers: HTTPFields) -> Bool {
        guard let accepted = headers[.acceptEncoding] else { return false }
        // Nearly every reader sends `gzip` without weights: answered without splitting.
        guard contains(accepted, "gzip") else { return false }
        guard contains(accepted, "q=") else { return true }
        return accepted.lowercased().split(separator: ",").contains { part in
            let fields = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            return fields.first == "gzip" && !fields.dropFirst().contains { $0.replacingOccurrences(of: " ", with: "") == "q=0" }
        }
    }

    /// Whether `text` holds `word` (lower-case ASCII) in any case, without making strings.
    private static func contains(_ text: String, _ word: StaticString) -> Bool {
        let needle = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        var text = text
        return text.withUTF8 { bytes in
            guard bytes.count >= needle.count else { return false }
            for start in 0...(bytes.count - needle.count) where (0..<needle.count).allSatisfy({ bytes[start + $0] | 0x20 == needle[$0] }) {
                return true
            }
            return false
        }
    }

    package init(body: [UInt8], contentType: String, lastModified: Date? = nil, maxAge: Int? = nil) {
        self.body = body
        self.contentType = contentType
        self.lastModified = lastModified
        self.maxAge = maxAge
    }
}

extension RenderedResponse {
    /// A 200 response of `body`: hashed and compressed once, here.
    package init(body: [UInt8], contentType: String, lastModified: Date?, maxAge: Int?, degraded: String?, versions: [String: Int]) {
        // Strong validators of the exact bytes (FNV-1a 64 of the body): the gzip
        // representation is other bytes, so it has a tag of its own (RFC 9110 §8.8.3).
        let hash = String(FNV1a.hash(body), radix: 16)
        var plain = ByteBuffer(bytes: body)
        let gzip = body.count > 256 ? try? plain.compress(with: .gzip()) : nil
        // Both encodings in one allocation, served as slices of it: NIO rounds each
        // buffer's storage up to a power of two, so two buffers held up to four times the
        // bytes (8.5 KB and 361 bytes of gzip were 16 KiB each).
        var storage = ByteBufferAllocator().buffer(capacity: body.count + (gzip?.readableBytes ?? 0))
        storage.writeBytes(body)
        if let gzip { storage.writeImmutableBuffer(gzip) }
        let held = storage.capacity
        self.init(body: storage.getSlice(at: 0, length: body.count) ?? ByteBuffer(bytes: body),
                  gzip: gzip.flatMap { storage.getSlice(at: body.count, length: $0.readableBytes) }, etag: "\"\(hash)\"",
                  gzipETag: "\"\(hash)-gzip\"", contentType: contentType, lastModified: lastModified, maxAge: maxAge,
                  degraded: degraded, versions: versions)
        heldBytes = held
        var common: HTTPFields = [.contentType: contentType, .vary: "Accept-Encoding"]
        if let lastModified { common[.lastModified] = HTTPDate.string(from: lastModified) }
        if let maxAge { common[.cacheControl] = "max-age=\(maxAge)" }
        if let degraded { common[.aggregateDegraded] = degraded }
        SecurityHeaders.add(to: &common, contentType: contentType)
        headers = common
        headers[.eTag] = etag
        gzipHeaders = common
        gzipHeaders[.eTag] = gzipETag
        gzipHeaders[.contentEncoding] = "gzip"
    }

    /// The response with `pending` sources named in `X-Aggregate-Degraded` (`ID=pending`),
    /// built from their `versions` too: their first refresh retires it.
    package func withPending(_ pending: [String], versions: [String: Int]) -> RenderedResponse {
        var response = self
        let said = ([degraded].compactMap { $0 } + pending.sorted().map { "\($0)=pending" }).joined(separator: ", ")
        response.degraded = said
        if status == 200 {
            response.headers[.aggregateDegraded] = said
            response.gzipHeaders[.aggregateDegraded] = said
        }
        response.versions.merge(versions) { kept, _ in kept }
        return response
    }

    /// A problem, not kept (see ``InMemoryRenderedResponses``).
    package init(problem: Problem, versions: [String: Int]) {
        self.init(body: ByteBuffer(bytes: problem.encoded), gzip: nil, etag: "", gzipETag: "",
                  contentType: "application/problem+json", lastModified: nil, maxAge: nil, degraded: nil,
                  status: problem.status, versions: versions)
    }

    /// The answer to a reader who sent `request`.
    package func answer(to request: Request) -> Response {
        let answer = answer(to: request.headers)
        return Response(status: answer.status, headers: answer.headers, body: ResponseBody(byteBuffer: answer.body))
    }

    /// The status, headers and body for a reader who sent `requestHeaders`: 304 when it
    /// holds this representation, gzip when it accepts it. (Also the kept-answer handler's,
    /// which answers on the event loop.)
    package func answer(to requestHeaders: HTTPFields) -> (status: HTTPResponse.Status, headers: HTTPFields, body: ByteBuffer) {
        guard status == 200 else {
            var headers: HTTPFields = [.contentType: contentType]
            SecurityHeaders.add(to: &headers, contentType: contentType)
            return (.init(code: status), headers, body)
        }
        let gzipped = gzip != nil && HTTPAnswer.acceptsGzip(requestHeaders)
        if notModified(requestHeaders, etag: gzipped ? gzipETag : etag) {
            var headers = gzipped ? gzipHeaders : self.headers
            headers[.contentEncoding] = nil
            return (.notModified, headers, ByteBuffer())
        }
        if gzipped, let gzip {
            return (.ok, gzipHeaders, gzip)
        }
        return (.ok, headers, body)
    }

    /// RFC 9110 §13.1: `If-None-Match` decides when present; else `If-Modified-Since`.
    private func notModified(_ requestHeaders: HTTPFields, etag: String) -> Bool {
        if let tags = requestHeaders[.ifNoneMatch] {
            return tags == "*" || tags.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces)
                .replacingOccurrences(of: "W/", with: "") == etag }
        }
        if let since = requestHeaders[.ifModifiedSince].flatMap(HTTPDate.date(from:)), let lastModified {
            return lastModified.timeIntervalSince1970.rounded(.down) <= since.timeIntervalSince1970
        }
        return false
    }
}

extension HTTPField.Name {
    /// Names the sources a response was not served live: `ltk=cache, users=failed`.
    package static let aggregateDegraded = HTTPField.Name("X-Aggregate-Degraded")!
}
