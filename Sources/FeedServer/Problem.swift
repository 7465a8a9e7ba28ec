import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// An RFC 9457 problem: what a bad request or a missing card is answered with.
struct Problem: Encodable {
    struct InvalidParameter: Encodable {
        var name: String
        var reason: String
    }

    var type = "about:blank"
    var title: String
    var status: Int
    var detail: String
    var invalidParams: [InvalidParameter]?

    enum CodingKeys: String, CodingKey {
        case type, title, status, detail
        case invalidParams = "invalid-params"
    }

    static func badParameter(_ name: String, _ reason: String) -> Problem {
        Problem(title: "Bad Request", status: 400, detail: "\(name): \(reason)",
                invalidParams: [InvalidParameter(name: name, reason: reason)])
    }

    static func notFound(_ detail: String) -> Problem {
        Problem(title: "Not Found", status: 404, detail: detail)
    }

    /// The problem as JSON, sorted keys.
    var encoded: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data()
    }

    var response: Response {
        var headers: HTTPFields = [.contentType: "application/problem+json"]
        SecurityHeaders.add(to: &headers, contentType: "application/problem+json")
        return Response(status: .init(code: status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: encoded)))
    }
}

/// A request that cannot be answered as asked; carries its problem.
struct ProblemError: Error {
    var problem: Problem
}
