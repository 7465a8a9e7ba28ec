import FeedCore
import FixtureKit
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Turns an upstream's normal answer into the answer a ``Fault`` asks for.
struct FaultInjector {
    let fault: Fault
    /// The request's headers, lower-cased names.
    let request: [String: String]
    let requestURI: String

    /// `finished` is called with the status once the response is complete (for streamed
    /// bodies, after the last byte).
    func apply(to answer: FixtureResponse, finished: @escaping @Sendable (Int) -> Void) async -> Response {
        if let latency = fault.latencyMs {
            try? await Task.sleep(for: .milliseconds(latency))
        }
        var answer = answer
        var headers = answer.headers
        if let retryAfter = fault.retryAfter { headers["Retry-After"] = retryAfter }
        if let maxAge = fault.maxAge { headers["Cache-Control"] = "max-age=\(maxAge)" }
        if fault.redirectLoop == true || fault.redirectTo != nil {
            headers["Location"] = fault.redirectTo ?? requestURI
            finished(302)
            return FixtureServer.response(FixtureResponse(status: 302, body: Data()), headers: headers)
        }
        if let status = fault.status {
            answer = FixtureResponse(status: status, body: Data(#"{"error":"injected status \#(status)"}"#.utf8))
        }
        if let etag = fault.etag {
            headers["ETag"] = etag
            if request["if-none-match"] == etag { return notModified(headers, finished) }
        }
        if let lastModified = fault.lastModified {
            headers["Last-Modified"] = lastModified
            if request["if-modified-since"] == lastModified { return notModified(headers, finished) }
        }
        if let body = fault.body { answer.body = Data(body.utf8) }
        if fault.malformedJSON == true { answer.body = answer.body.prefix(answer.body.count / 2) }
        if fault.invalidUTF8 == true, let quote = answer.body.firstIndex(of: UInt8(ascii: "\"")) {
            answer.body.insert(0xFF, at: answer.body.index(after: quote))
        }
        if let size = fault.oversizeBytes {
            return stream(FixtureResponse(status: answer.status, body: Data()), headers: headers, length: size,
                          chunk: 64 * 1024, interval: nil, finished: finished)
        }
        if fault.truncate == true {
            return stream(answer, headers: headers, length: answer.body.count, sendOnly: answer.body.count / 2,
                          chunk: 64 * 1024, interval: nil, finished: finished)
        }
        if let rate = fault.dripBytesPerSecond, rate > 0 {
            let chunk = max(1, rate / 10)
            return stream(answer, headers: headers, length: answer.body.count, chunk: chunk,
                          interval: .milliseconds(100), finished: finished)
        }
        if fault.gzip == true {
            answer.body = Gzip.wrap(answer.body)
            headers["Content-Encoding"] = "gzip"
        }
        finished(answer.status)
        return FixtureServer.response(answer, headers: headers)
    }

    private func notModified(_ headers: [String: String], _ finished: @Sendable (Int) -> Void) -> Response {
        finished(304)
        return FixtureServer.response(FixtureResponse(status: 304, body: Data()), headers: headers)
    }

    /// A streamed body: `length` announced, `sendOnly` bytes sent (all by default) in
    /// `chunk`s, `interval` apart. Bytes past the data are filler spaces.
    private func stream(_ answer: FixtureResponse, headers: [String: String], length: Int, sendOnly: Int? = nil,
                        chunk: Int, interval: Duration?, finished: @escaping @Sendable (Int) -> Void) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = answer.contentType
        for (name, value) in headers {
            if let name = HTTPField.Name(name) { fields[name] = value }
        }
        let body = answer.body
        let total = sendOnly ?? length
        let status = answer.status
        return Response(status: .init(code: status), headers: fields, body: ResponseBody(contentLength: length) { writer in
            var sent = 0
            defer { finished(status) }
            while sent < total {
                let count = min(chunk, total - sent)
                var buffer = ByteBuffer()
                if sent < body.count {
                    buffer.writeBytes(body[body.index(body.startIndex, offsetBy: sent)..<body.index(body.startIndex, offsetBy: min(body.count, sent + count))])
                }
                if buffer.readableBytes < count { buffer.writeRepeatingByte(UInt8(ascii: " "), count: count - buffer.readableBytes) }
                try await writer.write(buffer)
                sent += count
                if let interval { try await Task.sleep(for: interval) }
            }
            if total < length { throw FixtureServerError.truncated }
            try await writer.finish(nil)
        })
    }
}
