import FeedConfig
import FeedCore
import FeedSupport
import FeedEngine
import FeedFormats
import FeedState
import Foundation
import HTMLTemplates
import Mustache

/// The reader: the merged feed as cards for a person in a browser (`GET /`), and one card's
/// page (`GET /cards/{id}` asked for as HTML). Rendered on the server from the templates in
/// `Templates/` (compiled in) by swift-mustache, which escapes every `{{value}}`: the one
/// escaper. Every control is a form; `/reader.js` only adds keys to them.
package enum ReaderPage {
    package static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        let templates: [(String, [UInt8])] = [
            ("page-head", PackageResources.page_head_mustache), ("page-foot", PackageResources.page_foot_mustache),
            ("reader", PackageResources.reader_html_mustache), ("card", PackageResources.card_html_mustache),
            ("source-options", PackageResources.source_options_mustache), ("price-chart", PackageResources.price_chart_mustache),
            ("source-views", PackageResources.source_views_mustache), ("source-view", PackageResources.source_view_mustache),
        ]
        for (name, bytes) in templates {
            if let template = try? HTMLTemplate.parse(String(decoding: bytes, as: UTF8.self)) { library.register(template, named: name) }
        }
        return library
    }()

    /// `/reader.css`: the one stylesheet, served by `serve` itself (no CDN).
    package static let stylesheet = PackageResources.reader_css

    /// `/reader.js`: the keyboard shortcuts, on pages with marks (everything works without it).
    package static let script = PackageResources.reader_js

    /// `/placeholder.svg`: what a card without an image shows.
    package static let placeholder = Array("""
        <svg xmlns="http://www.w3.org/2000/svg" width="640" height="480" viewBox="0 0 640 480"><rect width="640" height="480" fill="#8a8a8a" fill-opacity="0.18"/></svg>
        """.utf8)

    package static let sortLabels: [(SortKey, String)] = [(.feed, "Feed order"), (.date, "Newest first"), (.price, "Price"), (.title, "Title"), (.source, "Source")]

    /// The source filter's `<option>`s (rendered by their own template, escaped as ever).
    /// With 500 sources they were a third of rendering a reader page: `serve` renders the
    /// list with nothing selected once (`FeedRoutes.unselectedSources`).
    package static func sourceOptions(_ config: FeedConfig, selected: Set<String>) -> String {
        let options = config.sources.filter { $0.enabled || selected.contains($0.id) }
            .map { ["id": $0.id, "name": $0.displayName, "selected": selected.contains($0.id)] as [String: Any] }
        return library.render(["source_options": options], withTemplate: "source-options") ?? ""
    }

    /// The list page of `result`, for the request's `parameters` (as given, empty ones left
    /// out); `unselectedSources` is ``sourceOptions(_:selected:)`` with nothing selected.
    package static func list(_ result: FeedResult, parameters: [(String, String)], config: FeedConfig, degraded: [String: SourceStatus],
                     unselectedSources: String, now: Date, reading: ReadingContext? = nil, path: String = "/") -> String {
        let query = result.query
        let cards = Array(result.cards)
        let first = (query.page - 1) * query.perPage + 1
        var context = common(config: config, parameters: parameters.filter { $0.0 != "page" }, degraded: degraded)
        let selected = Set(query.sourceIDs)
        var heading = query.text.map { "Cards matching “\($0)”" }
            ?? (query.sourceIDs.count == 1 ? "Cards from \(config.sourceName(query.sourceIDs[0]))" : "All cards")
        context["form_action"] = path
        context["empty_text"] = "No cards match."
        context["everything_href"] = "/"
        if let reading {
            heading = reading.heading(sources: query.sourceIDs.map(config.sourceName), text: query.text)
            context.merge(reading.context(sources: query.sourceIDs, pageIDs: cards.map(\.id), config: config)) { _, new in new }
            context["token"] = reading.token
            context["return_to"] = reading.returnTo
            context["empty_text"] = reading.emptyText
            context["everything_href"] = "/?view=all"
            context["searchable"] = true
            context["search_text"] = reading.search ?? ""
            if let name = reading.signedIn { context["signed_in"] = name }
            if let merges = reading.mergesCopies {
                // The same-item switch, kept by the filters' form and every page link.
                let others = parameters.filter { $0.0 != "merge" && $0.0 != "page" }
                context["copies"] = ["merge_off": !merges, "href": path + queryString(others + (merges ? [("merge", "off")] : [])),
                                     "text": merges ? "Each item once, with where else it is." : "Every copy apart.",
                                     "label": merges ? "Show every copy" : "Show each item once"] as [String: Any]
            }
        }
        if config.sources.isEmpty {
            // A reader started from nothing: say how to fill it.
            context["empty_text"] = "No sources yet: add a feed with aggregate add URL, aggregate import FILE.opml, or an app's subscribe."
        }
        context["heading"] = heading
        context["page_title"] = "\(heading)\(query.page > 1 ? ", page \(query.page)" : "") — \(config.feed.title)"
        context["source_options"] = selected.isEmpty ? unselectedSources : sourceOptions(config, selected: selected)
        context["kind_options"] = Card.Kind.allCases.map { ["value": $0.rawValue, "selected": $0 == query.kind] as [String: Any] }
        let oldest = query.sort == .date && query.order == .ascending
        context["sort_options"] = sortLabels.map { ["value": $0.0.rawValue, "label": $0.1, "selected": $0.0 == query.sort && !oldest] as [String: Any] }
            + (reading != nil ? [["value": "oldest", "label": "Oldest first", "selected": oldest]] : [])
        // One search field: where the header's searches every kept card, the form keeps a
        // query it came with but offers no second box.
        context["filter_search"] = reading == nil
        context["q"] = query.text ?? ""
        context["has_cards"] = !cards.isEmpty
        // In a view of the store, a card's link carries the view and its place in it, so its
        // page can offer the previous and next card.
        let viewParameters = reading != nil && path == "/" ? parameters.filter { $0.0 != "page" && $0.0 != "per_page" } : nil
        context["cards"] = cards.enumerated().map { offset, card in
            var fields = self.card(context: card, sourceName: config.sourceName(card.source), now: now,
                                   firstSeen: reading?.marks[card.id]?.firstSeen, sourceNames: config.sourceName,
                                   decidesItems: reading?.decidesItems == true)
            if let viewParameters {
                fields["href"] = cardPath(card.id) + queryString(viewParameters + [("at", String(first + offset))])
            }
            if let reading {
                let dates = reading.marks[card.id]
                if dates != nil { fields["marks"] = ["read": dates?.readAt != nil, "starred": dates?.starredAt != nil] }
                if !reading.highlight.isEmpty {
                    fields["title_parts"] = Highlight.parts(card.title, terms: reading.highlight)
                    if let line = fields["summary_line"] as? String { fields["summary_parts"] = Highlight.parts(line, terms: reading.highlight) }
                }
            }
            if fields["summary_parts"] == nil, let line = fields["summary_line"] as? String { fields["summary_parts"] = [["text": line, "hit": false]] }
            return fields
        }
        let total = result.isComplete ? " of \(result.matched)" : ""
        context["count_text"] = cards.isEmpty ? "No cards." : "Cards \(first)–\(first + cards.count - 1)\(total)"
        // Pages: every number up to the last when the total is known, else up to the next.
        func href(_ page: Int) -> String {
            let kept = parameters.filter { $0.0 != "page" } + (page > 1 ? [("page", String(page))] : [])
            return path + queryString(kept)
        }
        let last = result.pageCount ?? (cards.count == query.perPage ? query.page + 1 : query.page)
        if query.page > 1 { context["previous"] = ["href": href(query.page - 1)] }
        if query.page < last { context["next"] = ["href": href(query.page + 1)] }
        if last > 1 {
            let shown = (1...last).filter { $0 == 1 || $0 == last || abs($0 - query.page) <= 2 }
            context["pages"] = shown.map { ["number": $0, "href": href($0), "current": $0 == query.page] as [String: Any] }
        }
        context["has_pages"] = last > 1 || query.page > 1
        return library.render(context, withTemplate: "reader") ?? heading
    }

    /// One card's page: everything its source's detail gives, or what the list knows.
    /// A kept card's controls on its page (opening it marked it read).
    package struct CardMarks {
        package var starred: Bool
        package var token: String
        package var returnTo: String
        /// The list the card was opened from: where "Mark unread" goes back to.
        package var back = "/"
        /// The account signed in (nil without accounts).
        package var signedIn: String?

        package init(starred: Bool, token: String, returnTo: String, back: String = "/", signedIn: String? = nil) {
            self.starred = starred
            self.token = token
            self.returnTo = returnTo
            self.back = back
            self.signedIn = signedIn
        }
    }

    /// A card's previous and next in the view it was opened from, and that view.
    package struct Neighbours {
        package struct Link {
            package var href: String
            package var title: String

            package init(href: String, title: String) {
                self.href = href
                self.title = title
            }
        }
        package var back: String
        package var previous: Link?
        package var next: Link?

        package init(back: String, previous: Link? = nil, next: Link? = nil) {
            self.back = back
            self.previous = previous
            self.next = next
        }
    }

    /// `/cards/ID`, the id escaped as a path segment.
    package static func cardPath(_ id: String) -> String {
        "/cards/" + (id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#"))) ?? id)
    }

    /// A card's link for an app that syncs: its own (`url`), else its page on this server,
    /// `pageBase` being where this server's pages are (apps index an item's link unguarded).
    package static func appLink(_ url: URL?, card id: String, pageBase: String) -> String {
        url?.absoluteString ?? pageBase + cardPath(id)
    }

    /// What the card store keeps of a card, on its page.
    package struct KeptFacts {
        package var dates: KeptDates
        package var history: [CardChange]
        package var chart: PriceChart?

        package init(dates: KeptDates, history: [CardChange], chart: PriceChart?) {
            self.dates = dates
            self.history = history
            self.chart = chart
        }
    }

    package static func detail(_ card: Card, hasDetail: Bool, config: FeedConfig, degraded: [String: SourceStatus], now: Date,
                       marks: CardMarks? = nil, kept: KeptFacts? = nil, neighbours: Neighbours? = nil) -> String {
        var context = common(config: config, parameters: [("source", card.source)], degraded: degraded)
        context.merge(self.card(context: card, sourceName: config.sourceName(card.source), now: now,
                                firstSeen: kept?.dates.firstSeen)) { _, new in new }
        if let kept {
            var seen = "First seen \(exact(kept.dates.firstSeen)), last seen \(exact(kept.dates.lastSeen))"
            if let gone = kept.dates.goneSince { seen += "; gone from \(config.sourceName(card.source)) since \(exact(gone))" }
            context["seen"] = seen
            context["gone"] = kept.dates.goneSince != nil
            context["history"] = kept.history.reversed().map { change in
                ["at": exact(change.at), "iso": RFC3339.string(from: change.at), "field": historyName(change.field),
                 "before": change.field.words(for: change.before), "after": change.field.words(for: change.after),
                 "price": change.field == .price ? PriceChart.amount(change.after).map { "\($0)" } ?? "" : ""] as [String: Any]
            }
            context["has_history"] = !kept.history.isEmpty
            if let chart = kept.chart, chart.points.count > 1 || card.kind == .product || card.kind == .deal {
                context["chart"] = library.render(chart.context, withTemplate: "price-chart") ?? ""
            }
        }
        if let marks {
            context["marks"] = ["starred": marks.starred, "token": marks.token, "return_to": marks.returnTo, "back": marks.back] as [String: Any]
            context["searchable"] = true
            if let name = marks.signedIn { context["signed_in"] = name }
        }
        context["back_href"] = neighbours?.back ?? "/"
        if let neighbours {
            if let previous = neighbours.previous { context["previous_card"] = ["href": previous.href, "title": previous.title] }
            if let next = neighbours.next { context["next_card"] = ["href": next.href, "title": next.title] }
            context["has_neighbours"] = neighbours.previous != nil || neighbours.next != nil
        }
        context["page_title"] = "\(card.title) — \(config.feed.title)"
        context["has_detail"] = hasDetail
        // Every address from an upstream becomes an `href` or `src` only as a web address.
        if let url = WebLink.web(card.url) {
            context["url"] = url.absoluteString
            context["host"] = url.host ?? url.absoluteString
        }
        if let author = card.author {
            var fields: [String: Any] = ["name": author.name]
            if let image = WebLink.web(author.image) { fields["avatar"] = image.absoluteString }
            if let url = WebLink.web(author.url) { fields["url"] = url.absoluteString }
            context["author"] = fields
        }
        // The summary is a cut of the content: shown only when there is no content.
        if card.details["content"] == nil { context["summary"] = card.summary }
        // The source's details, each shown by its shape, under its own name: the reader
        // knows no source's field names.
        var sections: [[String: Any]] = []
        var facts: [[String: String]] = []
        for (key, value) in card.details.sorted(by: { $0.key < $1.key }) {
            // The body of a post, as HTML the allow-list keeps (again: any source may send one).
            if key == "content", case .string(let html) = value {
                let clean = HTMLSanitizer.clean(html)
                if !clean.isEmpty { context["content_html"] = clean }
                // The picture is the body's own: shown there, where the post puts it.
                if let image = WebLink.web(card.image), HTMLSanitizer.shows(image: image, in: clean) { context["has_image"] = false }
                continue
            }
            if key == "enclosures", let files = enclosures(value), !files.isEmpty {
                context["enclosures"] = files
                continue
            }
            let heading = Self.heading(key)
            if let section = Self.section(value, heading: heading, title: card.title) {
                sections.append(section.merging(["heading": heading, "anchor": "detail-\(sections.count + 1)"]) { $1 })
            } else if let text = fact(value) {
                facts.append(["name": heading, "value": text])
            }
        }
        context["sections"] = sections
        context["facts"] = facts
        context["has_facts"] = !facts.isEmpty
        return library.render(context, withTemplate: "card") ?? card.title
    }

    /// How many sources that are not live the banner names; the rest it counts.
    package static let bannerNames = 10

    /// What every page has: the title, the feed links with the page's filters, the banner.
    private static func common(config: FeedConfig, parameters: [(String, String)], degraded: [String: SourceStatus]) -> [String: Any] {
        let feedParameters = parameters.filter { ["source", "kind", "q", "sort", "order"].contains($0.0) }
        var context: [String: Any] = ["site_title": config.feed.title, "feed_query": queryString(feedParameters), "has_opml": true]
        if !degraded.isEmpty {
            // The first few by name, then a count: 500 sources down are a line, not a screen.
            let ids = degraded.keys.sorted()
            let named = ids.prefix(bannerNames)
            var banner: [String: Any] = ["sources": named.enumerated().map {
                ["id": $0.element, "state": degraded[$0.element]?.rawValue ?? "", "last": $0.offset == named.count - 1] as [String: Any]
            }]
            if ids.count > named.count { banner["more"] = ids.count - named.count }
            context["degraded"] = banner
        }
        return context
    }

    /// A card's fields as the templates use them.
    /// A card without a published date shows when it was `firstSeen` (where the store
    /// knows it), the date the views sort it by.
    package static func card(context card: Card, sourceName: String, now: Date, firstSeen: Date? = nil,
                             sourceNames: (String) -> String = { $0 }, decidesItems: Bool = false) -> [String: Any] {
        var fields: [String: Any] = [
            "title": card.title, "source": sourceName, "kind": card.kind.rawValue,
            "href": cardPath(card.id), "path": cardPath(card.id),
            "image": WebLink.web(card.image)?.absoluteString ?? "/placeholder.svg",
            // A picture only where the card has one: a text post gets no grey box.
            "has_image": WebLink.web(card.image) != nil,
            "id": card.id,
            "tags": card.tags, "has_tags": !card.tags.isEmpty,
        ]
        if let summary = card.summary.map(summaryLine), !summary.isEmpty { fields["summary_line"] = summary }
        if let price = card.price {
            var text: [String: Any] = ["now": price.label]
            if let regular = price.regular, regular > price.amount {
                text["sale"] = true
                text["was"] = Money.format(regular, currency: price.currency)
            }
            fields["price"] = text
        }
        if let published = card.published {
            fields["published"] = ["iso": RFC3339.string(from: published), "exact": exact(published), "relative": relative(published, now: now)]
        } else if let firstSeen {
            fields["published"] = ["iso": RFC3339.string(from: firstSeen), "exact": "First seen \(exact(firstSeen))",
                                   "relative": "first seen \(relative(firstSeen, now: now))"]
        }
        if let origin = card.origin { fields["origin"] = origin.rawValue }
        if let also = card.also, !also.isEmpty {
            // Where else the item is (merge: same-item): the shops and their prices, or the sources.
            let priced = also.contains { $0.price != nil }
            let otherCurrencies = also.contains { $0.price != nil && $0.price?.currency != card.price?.currency }
            var line: [String: Any] = [
                "label": priced ? "Also at" : "Also in",
                "copies": also.enumerated().map { offset, copy in
                    var fields: [String: Any] = ["name": sourceNames(copy.source), "href": cardPath(copy.id), "id": copy.id,
                                                 "separator": offset == 0 ? "" : ", "]
                    if let price = copy.price { fields["price"] = price.label }
                    // An admin's *Not the same* after the copy: its id and the card's.
                    if decidesItems { fields["apart"] = ["shown": card.id] }
                    return fields
                },
            ]
            if otherCurrencies { line["note"] = "other currencies listed, not compared" }
            fields["also"] = line
        }
        // A list says which cards hold an episode or a video, before they are opened.
        if let files = card.details["enclosures"].flatMap(enclosures) {
            if files.contains(where: { $0["is_video"] as? Bool == true }) { fields["media"] = "video" }
            else if files.contains(where: { $0["is_audio"] as? Bool == true }) { fields["media"] = "audio" }
        }
        return fields
    }

    /// A card's files (`details.enclosures`: `{url, type, length}`), web addresses only: a
    /// player for audio and video, a link for the rest.
    package static func enclosures(_ value: JSONValue) -> [[String: Any]]? {
        guard case .array(let items) = value else { return nil }
        return items.compactMap { item -> [String: Any]? in
            guard case .object(let file) = item, let url = file["url"]?.stringValue.flatMap(WebLink.web) else { return nil }
            let type = file["type"]?.stringValue?.lowercased() ?? ""
            var label = URL(string: url)?.lastPathComponent ?? url
            if case .number(let length)? = file["length"], length > 0 {
                label += " (\(ByteCountFormatter.string(fromByteCount: NSDecimalNumber(decimal: length).int64Value, countStyle: .file)))"
            }
            return ["url": url, "type": type, "label": label, "is_audio": type.hasPrefix("audio/"), "is_video": type.hasPrefix("video/")]
        }
    }

    package static func historyName(_ field: TrackedField) -> String {
        switch field {
        case .price: "Price"
        case .regularPrice: "Regular price"
        case .title: "Title"
        case .inStock: "Stock"
        }
    }

    /// A summary's first line, cut at a word to about 160 characters.
    package static func summaryLine(_ summary: String) -> String {
        let line = summary.split(whereSeparator: \.isNewline).first.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? ""
        guard line.count > 160 else { return line }
        let cut = line.prefix(160)
        return (cut.lastIndex(of: " ").map { String(cut[..<$0]) } ?? String(cut)) + "…"
    }

    /// `2026-11-22 08:00 UTC`.
    package static func exact(_ date: Date) -> String {
        let text = RFC3339.string(from: date)
        return String(text.prefix(10)) + " " + String(text.dropFirst(11).prefix(5)) + " UTC"
    }

    /// `3 hours ago`, `in 2 days`.
    package static func relative(_ date: Date, now: Date) -> String {
        let seconds = Int(now.timeIntervalSince(date))
        let magnitude = abs(seconds)
        let (value, unit): (Int, String) = switch magnitude {
        case ..<60: (0, "")
        case ..<3600: (magnitude / 60, "minute")
        case ..<86_400: (magnitude / 3600, "hour")
        case ..<(86_400 * 30): (magnitude / 86_400, "day")
        case ..<(86_400 * 365): (magnitude / (86_400 * 30), "month")
        default: (magnitude / (86_400 * 365), "year")
        }
        guard value > 0 else { return "just now" }
        let amount = "\(value) \(unit)\(value == 1 ? "" : "s")"
        return seconds >= 0 ? "\(amount) ago" : "in \(amount)"
    }

    package static func queryString(_ parameters: [(String, String)]) -> String {
        guard !parameters.isEmpty else { return "" }
        let allowed = CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+?#"))
        return "?" + parameters.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0.1)" }.joined(separator: "&")
    }

}
