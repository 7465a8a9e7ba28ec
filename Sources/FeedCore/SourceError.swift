import Foundation

/// Why a source could not produce a page or a card. Every case reads as plain words
/// through ``description``; the engine prefixes the source id.
public enum SourceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The upstream has no such item; `message` is the whole sentence (`no deal with id 99`).
    case notFound(String)
    /// The upstream answered with an HTTP status the source cannot use.
    case badStatus(Int)
    /// The body is not JSON, or not the JSON the source expects. `path` is the JSON path
    /// that failed (`products[0].name`), empty for the whole body.
    case undecodable(path: String, reason: String)
    /// No complete response within the allowed time.
    case timeout(seconds: Double)
    /// No HTTP response at all: connection refused, DNS failure, TLS failure.
    case transport(TransportFailure)
    /// The upstream has no detail for this id although the item exists (its detail
    /// endpoint answers for another item, say): the engine shows the card from the list
    /// and prints `reason`.
    case noDetail(String)
    /// The source has no detail endpoint at all (the default of ``FeedSource/detail(id:)``):
    /// the engine finds the card in its pages instead.
    case noDetailEndpoint
    /// The live upstream used up the source's whole-run `deadline`.
    case deadline(seconds: Double)
    /// The upstream handed out a cursor it had handed out before in this walk.
    case repeatedCursor(String)
    /// Anything else, already in plain words (a repeated cursor, a body over the size cap).
    case failed(String)

    public var description: String {
        switch self {
        case .notFound(let message):
            message
        case .badStatus(let status):
            "HTTP \(status)"
        case .undecodable(let path, let reason):
            path.isEmpty ? "unreadable response: \(reason)" : "unreadable response at \(path): \(reason)"
        case .timeout(let seconds):
            "timed out after \(SecondsFormat.text(seconds))"
        case .transport(let failure):
            failure.description
        case .noDetail(let reason):
            reason
        case .noDetailEndpoint:
            "no detail endpoint"
        case .deadline(let seconds):
            "stopped at the source's deadline of \(SecondsFormat.text(seconds)) (raise `deadline` in Sources.yml to wait longer)"
        case .repeatedCursor(let cursor):
            "the upstream returned cursor \"\(cursor)\" twice; stopped to avoid an endless loop"
        case .failed(let message):
            message
        }
    }
}

/// `10 s`, `0.5 s`: durations in the messages people read.
public enum SecondsFormat {
    public static func text(_ seconds: Double) -> String {
        seconds.rounded() == seconds ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}
