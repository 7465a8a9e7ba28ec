import FeedCore
import Foundation
import JSONTape

extension HTTPTransport {
    /// GET `url` and decode a 2xx body as `T`. Other statuses throw
    /// ``SourceError/badStatus(_:)``; a body that does not decode throws
    /// ``SourceError/undecodable(path:reason:)`` naming the JSON path.
    public func getJSON<T: Decodable>(_ type: T.Type, from url: URL) async throws -> T {
        let response = try await get(url)
        guard response.isSuccess else { throw SourceError.badStatus(response.status) }
        return try JSONBody.decode(type, from: response.body)
    }
}

/// Decoding of upstream bodies with errors in plain words.
public enum JSONBody {
    /// Whether the tape decoder (the `JSONTape` target) reads bodies first. Set
    /// `AGGREGATE_JSON_DECODER=foundation` to use Foundation's `JSONDecoder` alone: to
    /// rule the tape out when a body decodes strangely (CI runs the source tests both ways).
    public static let usesTape = ProcessInfo.processInfo.environment["AGGREGATE_JSON_DECODER"] != "foundation"

    /// The body as a ``JSONValue``, keeping at most `limit` records of the list at the
    /// object keys `path`: a source that will use only `limit` cards does not build the
    /// rest. (With `AGGREGATE_JSON_DECODER=foundation`, or a body the tape leaves to
    /// Foundation, the whole body is decoded and the list cut after.)
    public static func value(from body: Data, keepingAtMost limit: Int, ofListAt path: [String]) throws -> JSONValue {
        if usesTape, let tree = TapeDecoding.tree(JSONValue.self, from: body, keepingAtMost: limit, ofArrayAt: path) {
            return tree
        }
        return try decode(JSONValue.self, from: body).keepingAtMost(limit, ofListAt: path[...])
    }

    /// Decodes `T`, turning `DecodingError` into ``SourceError/undecodable(path:reason:)``.
    public static func decode<T: Decodable>(_ type: T.Type, from body: Data) throws -> T {
        // The tape decodes what it is sure to read as Foundation would; errors and
        // anything unusual go to Foundation, whose verdict and words stand.
        if usesTape, case .decoded(let value) = TapeDecoding.decode(type, from: body) { return value }
        do {
            return try JSONDecoder().decode(type, from: body)
        } catch let error as DecodingError {
            let raw = try? JSONDecoder().decode(JSONValue.self, from: body)
            guard let raw else {
                // JSON but for bytes that are not UTF-8 is a different fault from an HTML page.
                let repaired = Data(String(decoding: body, as: UTF8.self).utf8)
                let onlyEncoding = String(data: body, encoding: .utf8) == nil
                    && (try? JSONDecoder().decode(JSONValue.self, from: repaired)) != nil
                let reason = onlyEncoding
                    ? "the body is not UTF-8 text (\(body.count) bytes)" : "the body is not JSON (\(body.count) bytes)"
                throw SourceError.undecodable(path: "", reason: reason)
            }
            let problem = DecodingProblem(error, in: raw)
            throw SourceError.undecodable(path: problem.path, reason: problem.reason)
        }
    }
}

/// The tape decoder builds a whole `JSONValue` node by node.
extension JSONValue: TapeTree {
    public init(node: TapeNode<JSONValue>) {
        switch node {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .number(let value): self = .number(value)
        case .string(let value): self = .string(value)
        case .array(let items): self = .array(items)
        case .object(let members): self = .object(members)
        }
    }
}

extension JSONValue {
    /// This value with the list at the object keys `path` cut to its first `limit` items.
    package func keepingAtMost(_ limit: Int, ofListAt path: ArraySlice<String>) -> JSONValue {
        switch self {
        case .array(let items) where path.isEmpty:
            return .array(Array(items.prefix(limit)))
        case .object(var members):
            guard let name = path.first, let member = members[name] else { return self }
            members[name] = member.keepingAtMost(limit, ofListAt: path.dropFirst())
            return .object(members)
        default:
            return self
        }
    }
}
