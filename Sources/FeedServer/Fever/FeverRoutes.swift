import FeedFormats
import FeedState
import FeverModel
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServeAccess
import ServeHTTP

/// The Fever API at `/api/fever/` (docs/clients/fever.md), for the apps that sync over it
/// (Reeder Classic, Unread, FeedMe, FocusReader, Fluent Reader): groups and feeds, items
/// paged by their numbers, unread and saved item ids, and marks. The same marks as the
/// reader's, the command line's and the Google Reader API's. Signed in by
/// ``FeverAuthenticate`` (the form's `api_key`) before a route sees the request.
extension FeedRoutes {
    func registerFever(on router: RouterGroup<ServeRequestContext>) {
        for path in Fever.paths {
            for method in [HTTPRequest.Method.get, .post] {
                router.on(RouterPath(path), method: method) { request, context in await self.fever(request, context) }
            }
        }
    }

    /// One Fever request: its mark first (`mark`, `as`, `id`, `before`), then the members
    /// its arguments ask for, each answered from the store's indexes.
    private func fever(_ request: Request, _ context: ServeRequestContext) async -> Response {
        // A key in the form is no cookie another site's page could borrow; the open owner
        // of a server without accounts is, as everywhere.
        if request.method == .post, context.identity?.credential == .owner, let refusal = CrossSiteGuard.refusal(request) {
            return Problem(title: "Forbidden", status: 403, detail: refusal).response
        }
        var request = request
        guard let form = try? await FeverAuthenticate.form(of: &request) else {
            return Problem(title: "Content Too Large", status: 413, detail: "a Fever request's form is at most 64 KiB").response
        }
        guard let store, let marks else {
            return Problem(title: "Not Found", status: 404,
                           detail: "the Fever API needs the card store (serve with a state and the background refresh)").response
        }
        let person = context.person
        let (cards, personal) = (store.reading(as: person), marks.marks(of: person))
        let base = pageBase(request)
        let catalog = Fever.Catalog(self.catalog, base: base)
        let ages = await health.ages
        let now = Date()
        do {
            try await feverMark(form, catalog: catalog, cards: cards, marks: personal, now: now)
            var answer = Fever.Answer(lastRefreshedOnTime: Int64(now.timeIntervalSince1970 - (ages.values.min() ?? 0)))
            let asked = Set(form.pairs.map(\.0))
            if asked.contains("groups") || asked.contains("feeds") { answer.feedsGroups = catalog.feedsGroups }
            if asked.contains("groups") { answer.groups = catalog.groupList }
            if asked.contains("feeds") {
                answer.feeds = catalog.feeds.map { feed in
                    Fever.Feed(id: feed.id, title: feed.subscription.title, url: feed.subscription.url, siteUrl: feed.subscription.htmlUrl,
                               lastUpdatedOnTime: ages[feed.source].map { Int64(now.timeIntervalSince1970 - $0) } ?? 0)
                }
            }
            if asked.contains("favicons") { answer.favicons = [Fever.favicon] }
            if asked.contains("links") { answer.links = [] }
            if asked.contains("unread_item_ids") { answer.unreadItemIds = Fever.list(try await personal.numbers(.unread, of: catalog.sources)) }
            if asked.contains("saved_item_ids") { answer.savedItemIds = Fever.list(try await personal.numbers(.starred, of: catalog.sources)) }
            if asked.contains("items") {
                let span: CardNumbers
                if let since = form.get("since_id").flatMap({ Int64($0) }) {
                    span = .after(max(since, 0))
                } else if let maxID = form.get("max_id").flatMap({ Int64($0) }) {
                    span = .before(maxID > 0 ? maxID : .max)
                } else if let ids = form.get("with_ids") {
                    span = .among(Array(Fever.numbers(ids).prefix(Fever.itemsPerAnswer)))
                } else {
                    span = .after(0)
                }
                let kept = try await cards.cards(numbered: span, of: catalog.sources, limit: Fever.itemsPerAnswer)
                answer.items = kept.compactMap { card in
                    catalog.feedID(of: card.card.source).map { Fever.Item(card, feedID: $0, pageBase: base) }
                }
                let all = StoredPageQuery(sources: catalog.sources, order: .feed, descending: false, offset: 0, limit: 1)
                answer.totalItems = catalog.sources.isEmpty ? 0 : try await cards.page(all).total
            }
            return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                            body: ResponseBody(byteBuffer: ByteBuffer(data: answer.json)))
        } catch {
            return Problem(title: "Service Unavailable", status: 503, detail: "the card store cannot be used now").response
        }
    }

    /// `mark=item` (`as=read|unread|saved|unsaved`, `id` an item), `mark=feed` and
    /// `mark=group` (`as=read`, `id`, `before`: the cards first seen by then, so what a
    /// refresh added since the app last looked stays unread; the group 0 is every feed).
    private func feverMark(_ form: FormFields, catalog: Fever.Catalog, cards: any CardStore, marks: any ReadingMarkStore, now: Date) async throws {
        guard let kind = form.get("mark"), let action = form.get("as"), let id = form.get("id").flatMap({ Int64($0) }) else { return }
        let before = form.get("before").flatMap(Double.init).map(Date.init(timeIntervalSince1970:)) ?? now
        switch kind {
        case "item":
            let mark: ReadingMark? = switch action {
            case "read": .read
            case "unread": .unread
            case "saved": .star
            case "unsaved": .unstar
            default: nil
            }
            guard let mark, let card = try await cards.ids(ofNumbers: [id])[id] else { return }
            _ = try await marks.mark([card], mark, at: now)
        case "feed", "group":
            guard action == "read", let number = Int(exactly: id) else { return }
            let sources = kind == "feed" ? catalog.sources(ofFeed: number) : catalog.sources(ofGroup: number)
            if !sources.isEmpty { _ = try await marks.markRead(seenBy: before, sources: sources, at: now) }
        default:
            return
        }
    }
}
