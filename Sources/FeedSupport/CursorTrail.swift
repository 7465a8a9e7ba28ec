import FeedCore

/// The cursors a walk through one source's pages has followed, so a cursor that comes
/// back ends the walk with an error instead of an endless loop. Used by the engine's
/// paging and by the conformance suite, so both judge a source the same way.
public struct CursorTrail: Sendable {
    public private(set) var current: String?
    private var seen: Set<String> = []

    public init() {}

    /// Moves to `next`; `false` when there is no next page. Throws
    /// ``SourceError/repeatedCursor(_:)`` when `next` was followed before.
    public mutating func advance(to next: String?) throws -> Bool {
        guard let next else { return false }
        guard next != current, seen.insert(next).inserted else { throw SourceError.repeatedCursor(next) }
        current = next
        return true
    }
}
