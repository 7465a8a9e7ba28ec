import FeedConfig
import FeedFormats
import FeedState
import FeedSupport
import Foundation
import Synchronization

/// The reader's views when the card store keeps reading marks: Unread (the default),
/// Starred, All.
package enum ReaderView: String, Sendable, CaseIterable {
    case unread, starred, all

    package var label: String {
        switch self {
        case .unread: "Unread"
        case .starred: "Starred"
        case .all: "All"
        }
    }

    /// The marks this view keeps (nil: every card).
    package var filter: ReadingFilter? {
        switch self {
        case .unread: .unread
        case .starred: .starred
        case .all: nil
        }
    }
}

/// What a reader page shows of the reading marks: the views with their counts, each card's
/// controls, and the forms' token.
package struct ReadingContext {
    package var view: ReaderView
    /// Unread cards per source (``CardStore/unreadCounts()``).
    package var unread: [String: Int]
    package var token: String
    /// The page the forms come back to (path and query).
    package var returnTo: String
    /// The marks of the page's cards, by id.
    package var marks: [String: KeptDates]
    /// When the page was made: "mark everything as read up to now" means up to this.
    package var renderedAt: Date
    /// The search's words and phrases, highlighted in titles and summaries.
    package var highlight: [[String]] = []
    /// A search page (`/search`): its heading names the query.
    package var search: String?
    /// Where the side list of sources was last rendered.
    package var sourceList: SourceViews
    /// The account signed in, named beside a "Sign out" button (nil without accounts).
    package var signedIn: String?
    /// Each source's folder: the side list groups sources by them, the ungrouped last.
    package var folders: [String: String]
    /// Whether the view shows one card per item (its switch is shown); nil: no switch.
    package var mergesCopies: Bool?
    /// Whether the person may say which cards are one item (an admin): each copy named
    /// under a card then has a *Not the same* button.
    package var decidesItems = false

    package init(view: ReaderView, unread: [String: Int], token: String, returnTo: String, marks: [String: KeptDates], renderedAt: Date,
                 highlight: [[String]] = [], search: String? = nil, sourceList: SourceViews, signedIn: String? = nil,
                 folders: [String: String] = [:]) {
        self.folders = folders
        self.view = view
        self.unread = unread
        self.token = token
        self.returnTo = returnTo
        self.marks = marks
        self.renderedAt = renderedAt
        self.highlight = highlight
        self.search = search
        self.sourceList = sourceList
        self.signedIn = signedIn
    }

    /// The page's heading; `sources` are the names of the sources it is limited to.
    package func heading(sources: [String], text: String?) -> String {
        if let search { return "Search: \(search)" }
        let from = sources.count == 1 ? " from \(sources[0])" : ""
        let base = switch view {
        case .unread: "Unread\(from)"
        case .starred: "Starred\(from)"
        case .all: sources.count == 1 ? "Cards from \(sources[0])" : "All cards"
        }
        return text.map { "\(base) matching “\($0)”" } ?? base
    }

    package var emptyText: String {
        if search != nil { return "Nothing kept matches this search." }
        return switch view {
        case .unread: "Nothing unread."
        case .starred: "Nothing starred yet: star a card to keep it here."
        case .all: "No cards match."
        }
    }

    package func context(sources: [String], pageIDs: [String], config: FeedConfig) -> [String: Any] {
        let total = unread.values.reduce(0, +)
        let views: [[String: Any]] = ReaderView.allCases.map { view in
            var entry: [String: Any] = ["label": view.label, "href": "/?view=\(view.rawValue)",
                                        "current": search == nil && view == self.view && sources.isEmpty]
            if view == .unread { entry["count"] = total }
            return entry
        }
        // One entry per source with something unread, in Sources.yml's order, in groups by
        // folder (in the order each folder first appears), the ungrouped last.
        var groups: [SourceViews.Group] = []
        var ungrouped: [SourceViews.Entry] = []
        for source in config.sources where (unread[source.id] ?? 0) > 0 {
            let entry = SourceViews.Entry(id: source.id, name: source.displayName, unread: unread[source.id] ?? 0,
                                          current: search == nil && sources == [source.id] && view == .unread)
            guard let folder = folders[source.id] else { ungrouped.append(entry); continue }
            if let index = groups.firstIndex(where: { $0.name == folder }) {
                groups[index].entries.append(entry)
            } else {
                groups.append(SourceViews.Group(name: folder, entries: [entry]))
            }
        }
        return ["reading": [
            "view": view.rawValue, "views": views, "source_views": sourceList.html(groups: groups, ungrouped: ungrouped),
            "token": token, "return_to": returnTo, "rendered_at": RFC3339.string(from: renderedAt),
            "page_ids": pageIDs, "view_sources": sources,
        ] as [String: Any]]
    }
}

/// A text cut into runs, those that are words searched for marked (`<mark>`).
package enum Highlight {
    package static func parts(_ text: String, terms: [[String]]) -> [[String: Any]] {
        let wanted = Set(terms.flatMap { $0 })
        var parts: [[String: Any]] = []
        var run = ""
        var inWord = false
        func flush() {
            guard !run.isEmpty else { return }
            let hit = inWord && SearchText.tokens(run).contains { wanted.contains($0) }
            if let last = parts.last, last["hit"] as? Bool == hit, !hit, let previous = last["text"] as? String {
                parts[parts.count - 1]["text"] = previous + run
            } else {
                parts.append(["text": run, "hit": hit])
            }
            run = ""
        }
        for character in text {
            let isWordCharacter = character.isLetter || character.isNumber
            if isWordCharacter != inWord { flush(); inWord = isWordCharacter }
            run.append(character)
        }
        flush()
        return parts
    }
}

/// The side list of sources with unread cards, each source's line kept as last rendered:
/// with 500 sources the whole list was most of a reader page's time (the template engine
/// looks up every field of every entry by name, at run time), and rendering it again after
/// every mark (a count moved) made the page after a mark half as slow again. Now a mark
/// renders the one line whose count moved.
package final class SourceViews: Sendable {
    package struct Entry: Hashable, Sendable {
        package var id: String
        package var name: String
        package var unread: Int
        package var current: Bool
    }

    private let rendered = Mutex<[Entry: String]>([:])

    package init() {}
    /// Lines kept at most: old counts are dropped all at once past it.
    package static let keptLines = 8192

    /// Sources of one folder.
    package struct Group {
        package var name: String
        package var entries: [Entry]
    }

    /// The side list: each group a `<details>` with its unread count (open when it holds
    /// the source shown), then the ungrouped sources.
    package func html(groups: [Group], ungrouped: [Entry]) -> String {
        let rendered: [[String: Any]] = groups.map { group in
            ["name": group.name, "unread": group.entries.reduce(0) { $0 + $1.unread }, "open": group.entries.contains(where: \.current),
             "items": lines(group.entries), "href": "/?view=unread" + group.entries.map { "&source=\($0.id)" }.joined()]
        }
        let context: [String: Any] = ["has_source_views": !groups.isEmpty || !ungrouped.isEmpty, "groups": rendered,
                                      "has_ungrouped": !ungrouped.isEmpty, "items": lines(ungrouped)]
        return ReaderPage.library.render(context, withTemplate: "source-views") ?? ""
    }

    /// Each entry's `<li>`, kept by its name, count and state: a reader page renders only
    /// the lines whose count moved.
    private func lines(_ entries: [Entry]) -> String {
        var found = rendered.withLock { kept in entries.map { kept[$0] } }
        var made: [Entry: String] = [:]
        for (index, entry) in entries.enumerated() where found[index] == nil {
            let context: [String: Any] = ["name": entry.name, "unread": entry.unread, "href": "/?view=unread&source=\(entry.id)",
                                          "current": entry.current]
            let line = ReaderPage.library.render(context, withTemplate: "source-view") ?? ""
            found[index] = line
            made[entry] = line
        }
        if !made.isEmpty {
            rendered.withLock { kept in
                if kept.count + made.count > Self.keptLines { kept.removeAll(keepingCapacity: true) }
                kept.merge(made) { _, new in new }
            }
        }
        return found.compactMap { $0 }.joined()
    }
}
