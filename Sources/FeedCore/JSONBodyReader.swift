import Foundation

/// How a source reads its upstream's JSON. The engine hands one to every source in its
/// ``SourceSettings/json`` (the fast tape decoder, or Foundation's alone when a run asks
/// for it), so a source never chooses or configures a decoder itself.
public protocol JSONBodyReader: Sendable {
    /// Decodes `T`; a body that does not decode throws ``SourceError/undecodable(path:reason:)``
    /// naming the JSON path.
    func decode<T: Decodable>(_ type: T.Type, from body: Data) throws -> T

    /// The body as a ``JSONValue``, keeping at most `limit` records of the list at the object
    /// keys `path`: a source that will use only `limit` cards need not build the rest.
    func value(from body: Data, keepingAtMost limit: Int, ofListAt path: [String]) throws -> JSONValue
}
