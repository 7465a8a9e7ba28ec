import Foundation

/// When the card store first and last saw a card live, and since when its source no
/// longer lists it: printed with the cards `--stored` answers (`first_seen`, `last_seen`,
/// `gone_since` in RFC 3339); and when the person read and starred it (`read_at`,
/// `starred_at`, absent while unread or not starred); and the card's number in the store.
public struct KeptDates: Sendable, Equatable {
    public var firstSeen: Date
    public var lastSeen: Date
    /// Nil while the source lists it.
    public var goneSince: Date?
    /// Nil while unread.
    public var readAt: Date?
    /// Nil while not starred.
    public var starredAt: Date?
    /// The card's number: 1, 2, 3… in the order the store first saw cards, never reused.
    /// The item id apps that sync know it by (the Google Reader and Fever APIs); Fever's
    /// apps fetch what is new as the numbers past the last they have. 0 outside a store.
    public var number: Int64

    public init(firstSeen: Date, lastSeen: Date, goneSince: Date? = nil, readAt: Date? = nil, starredAt: Date? = nil, number: Int64 = 0) {
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.goneSince = goneSince
        self.readAt = readAt
        self.starredAt = starredAt
        self.number = number
    }
}
