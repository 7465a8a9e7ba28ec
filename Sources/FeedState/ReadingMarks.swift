import FeedFormats
import Foundation

/// What a person does to a card they read: `aggregate mark read|unread|star|unstar`, the
/// reader's controls. A mark is kept per person beside the card (``StoreUser``), never in
/// it: a refresh that changes the card leaves it read or starred.
public enum ReadingMark: String, Sendable, CaseIterable, Codable {
    case read, unread, star, unstar
}

/// The cards a view keeps by their marks: `--unread`, `--starred`, the reader's views, and
/// the Google Reader API's streams (its `read` state too).
public enum ReadingFilter: String, Sendable, CaseIterable, Codable {
    case unread, starred, read

    /// Whether a card with `dates` is in the view.
    public func includes(_ dates: KeptDates) -> Bool {
        switch self {
        case .unread: dates.readAt == nil
        case .starred: dates.starredAt != nil
        case .read: dates.readAt != nil
        }
    }
}
