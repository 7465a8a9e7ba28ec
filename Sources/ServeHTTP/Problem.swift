import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// An RFC 9457 problem: what a bad request or a missing card is answered with.
package struct Problem: Encodable {
    package struct InvalidParameter: Encodable {
        package var name: String
        package var reason: String

        package init(name: String, reason: String) {
            self.name = name
            self.reason = reason
        }
    }

    package var type = "about:blank"
    package var title: String
    package var status: Int
    package var detail: String
    package var invalidParams: [InvalidParameter]?

    package init(type: String = "about:blank", title: String, status: Int, detail: String, invalidParams: [InvalidParameter]? = nil) {
        self.type = type
        self.title = title
        self.status = status
        self.detail = detail
        self.invalidParams = invalidParams
    }

    package enum CodingKeys: String, CodingKey {
        case type, title, status, detail
        case invalidParams = "invalid-params"
    }

    package static func badParameter(_ name: String, _ reason: String) -> Problem {
        Problem(title: "Bad Request", status: 400, detail: "\(name): \(reason)",
                invalidParams: [InvalidParameter(name: name, reason: reason)])
    }

    package static func notFound(_ detail: String) -> Problem {
        Problem(title: "Not Found", status: 404, detail: detail)
    }

    /// The problem as JSON, sorted keys.
    package var encoded: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data()
    }

    package var response: Response {
        var headers: HTTPFields = [.contentType: "application/problem+json"]
        SecurityHeaders.add(to: &headers, contentType: "application/problem+json")
        return Response(status: .init(code: status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: encoded)))
    }
}

/// A request that cannot be answered as asked; carries its problem.
package struct ProblemError: Error {
    package var problem: Problem

    package init(problem: Problem) {
        self.problem = problem
    }
}
