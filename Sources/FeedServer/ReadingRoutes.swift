import ServeAccess
import ServeHTTP
import FeedConfig
import FeedCore
import FeedEngine
import FeedFormats
import FeedState
import FeedSupport
import Foundation
import ReaderPages
import SameItem
import HTTPTypes
import Hummingbird
import NIOCore

/// The reader's reading marks and search, with a card store: the views (`/?view=`), the
/// marks' forms (`POST /cards/{id}/read|unread|star|unstar`, `POST /read`) and `/search`.
/// Pages with marks are a person's own: kept for them alone (``PersonalPages``), `no-store`.
extension FeedRoutes {
    /// Whether the reader shows marks: `serve` keeps a card store its refresh records in.
    var readsMarks: Bool { store != nil && refreshed != nil && access.writes }

    /// The marks' forms, behind ``FormGuard`` (another site's requests and forms without
    /// this session's token never reach them).
    func registerMarks(on group: RouterGroup<ServeRequestContext>) {
        for mark in ReadingMark.allCases {
            group.post("/cards/:id/\(mark.rawValue)") { request, context in
                let raw = context.parameters.get("id") ?? ""
                return await self.markOne(request, id: raw.removingPercentEncoding ?? raw, mark: mark, person: context.person)
            }
        }
        group.post("/read") { request, context in await self.markMany(request, person: context.person) }
    }

    /// The view and query of a reader list's parameters (`view=`, and the feed's filters);
    /// a view of marks is newest first unless asked otherwise.
    func readingQuery(_ pairs: [(String, String)]) throws(ProblemError) -> (view: ReaderView, query: FeedQuery) {
        let view: ReaderView
        switch pairs.first(where: { $0.0 == "view" })?.1 {
        case nil: view = .unread
        case let text?:
            guard let chosen = ReaderView(rawValue: text) else {
                throw ProblemError(problem: .badParameter("view", "\"\(text)\" is not one of unread, starred, all"))
            }
            view = chosen
        }
        // The sort menu's "Oldest first" is the date, ascending (one menu, not two).
        let named = pairs.filter { $0.0 != "view" && $0.0 != "merge" }.flatMap { pair -> [(String, String)] in
            pair == ("sort", "oldest") ? [("sort", "date"), ("order", "asc")] : [pair]
        }
        var query = try FeedRequest.query(pairs: named, config: config)
        if view != .all, !pairs.contains(where: { $0.0 == "sort" }) { query.sort = .date }
        return (view, query)
    }

    /// Whether a view shows one card per item (issue 64): `merge=on` or `off`, else
    /// `byDefault` (on in the reader's pages; a script's JSON stays one line per card).
    static func mergesCopies(_ pairs: [(String, String)], byDefault: Bool = true) throws(ProblemError) -> Bool {
        switch pairs.last(where: { $0.0 == "merge" })?.1 {
        case nil: return byDefault
        case "on"?: return true
        case "off"?: return false
        case let other?: throw ProblemError(problem: .badParameter("merge", "\"\(other)\" is not on or off"))
        }
    }

    /// The same-item view of the store for `person` (nil without a store).
    func itemsOnPage(person: Int) async throws -> ItemsOnPage? {
        guard let index = searchIndex?.searching(as: person), let store = store?.reading(as: person) else { return nil }
        // Moves read before the decisions: a move after this reading makes the next one anew.
        let decisions = try await recentDecisions.current(moves: versions.moves)
        let order = Dictionary(config.sources.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        return ItemsOnPage(index: index, store: store, decisions: decisions, sourceOrder: order)
    }

    /// `cards` (with their kept dates) one per item, as ``ItemsOnPage/merged(_:)`` shows them.
    func mergedCopies(_ cards: [KeptCard], person: Int) async throws(AnswerFailure) -> [KeptCard] {
        do {
            guard let items = try await itemsOnPage(person: person) else { return cards }
            return try await items.merged(cards)
        } catch {
            throw .storeUnreadable(PlainWords.describe(error))
        }
    }

    /// `ids` and every other copy of their items, each once: a mark in the reader reaches
    /// every copy of what it marks.
    func withCopies(_ ids: [String], person: Int) async throws -> [String] {
        // A page's worth at most: a mark of more (an app's batch) reaches what it names.
        guard ids.count <= FeedQuery.maxPerPage, let store = store?.reading(as: person),
              let items = try await itemsOnPage(person: person) else { return ids }
        var seen = Set<String>()
        let copies = try await items.everyCopy(of: try await store.cards(ids: ids))
        return (ids + copies).filter { seen.insert($0).inserted }
    }

    /// `GET /`: a view of the kept cards with their marks, kept as rendered while nothing
    /// it shows has moved (``PersonalPages``).
    func readingList(_ request: Request, person: Int, signedIn: String? = nil, decidesItems: Bool = false) async -> Response {
        let session = sessions.session(of: request)
        let token = sessions.token(for: session.id)
        guard let marksVersion = try? await marks?.marks(of: person).marksVersion() else {
            return await readingListPage(request, person: person, signedIn: signedIn, decidesItems: decidesItems, token: token)
                .answer(to: request, session: session)
        }
        let key = PersonalPages.key(person: person, signedIn: signedIn, marksVersion: marksVersion, now: Date(), target: request.uri.description)
        let (page, hit) = await personalPages.page(key, versions: versions, token: token) { standIn in
            await self.readingListPage(request, person: person, signedIn: signedIn, decidesItems: decidesItems, token: standIn)
        }
        metrics.responseCache(hit: hit)
        return page.answer(to: request, session: session)
    }

    /// A view of the kept cards, rendered with `token` in its forms: the page, or the
    /// problem to answer. Built from every source (the side list counts each one's unread).
    private func readingListPage(_ request: Request, person: Int, signedIn: String?, decidesItems: Bool, token: String) async -> RenderedResponse {
        let built = versions.snapshot(config.sources.map(\.id))
        let pairs = Form.pairs(request.uri.query ?? "").filter { !$0.1.isEmpty && $0.0 != "token" }
        let view: ReaderView
        let query: FeedQuery
        let merges: Bool
        do {
            (view, query) = try readingQuery(pairs)
            merges = try Self.mergesCopies(pairs)
        } catch {
            return RenderedResponse(problem: error.problem, versions: built)
        }
        let sources = (try? runner.select(query.sourceIDs).map(\.id)) ?? query.sourceIDs
        var answered: (result: FeedResult, firstSeen: [String: Date], kept: [String: KeptDates])
        do {
            answered = try await answer(query, sources: sources, reading: view.filter, person: person)
            // One card per item: the page's cards, their copies looked up by key.
            let page = answered.result.cards.compactMap { card in answered.kept[card.id].map { KeptCard(card: card, dates: $0, position: 0) } }
            if merges, page.count == answered.result.cards.count {
                answered.result.cards = FeedCards(try await mergedCopies(page, person: person).map(\.card))
            }
        } catch {
            return RenderedResponse(problem: error.problem, versions: built)
        }
        // The store keeps whole seconds: a card first seen in this very second may have come
        // after the page was made, so "everything up to now" means up to the second before
        // (the page's own cards of this second go by their ids).
        let upTo = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down) - 1)
        var reading = ReadingContext(view: view, unread: (try? await marks?.marks(of: person).unreadCounts()) ?? [:], token: token,
                                     returnTo: request.uri.description, marks: answered.kept, renderedAt: upTo, sourceList: sourceViews,
                                     signedIn: signedIn, folders: sourceFolders)
        reading.mergesCopies = merges
        reading.decidesItems = decidesItems
        let degraded = await degraded(answered.result.outcomes, sources: sources)
        let html = ReaderPage.list(answered.result, parameters: pairs, config: config, degraded: degraded, unselectedSources: unselectedSources,
                                   now: Date(), reading: reading)
        return RenderedResponse(personalPage: html, versions: built)
    }

    /// `GET /search?q=`: the kept cards a search finds, as a page or JSON Lines.
    func search(_ request: Request, person: Int, signedIn: String? = nil, decidesItems: Bool = false) async -> Response {
        guard let index = searchIndex?.searching(as: person), let marks = marks?.marks(of: person) else {
            return Problem.notFound("search needs the card store").response
        }
        let pairs = Form.pairs(request.uri.query ?? "").filter { !$0.1.isEmpty }
        let parameters = FormFields(pairs: pairs)
        for (name, _) in pairs where !["q", "source", "page", "per_page", "merge"].contains(name) {
            return Problem.badParameter(name, "unknown parameter (known: q, source, page, per_page, merge)").response
        }
        let merges: Bool
        do {
            merges = try Self.mergesCopies(pairs, byDefault: Form.wantsHTML(request))
        } catch {
            return error.problem.response
        }
        var search: CardSearch
        do {
            search = try CardSearch(parsing: parameters.get("q") ?? "")
        } catch {
            return Problem.badParameter("q", error.description).response
        }
        search.sources += parameters.getAll("source")
        let page = Int(parameters.get("page") ?? "1") ?? 0
        let perPage = Int(parameters.get("per_page") ?? "20") ?? 0
        guard (1...FeedQuery.maxPage).contains(page) else { return Problem.badParameter("page", "must be a whole number from 1 to \(FeedQuery.maxPage)").response }
        guard (1...FeedQuery.maxPerPage).contains(perPage) else {
            return Problem.badParameter("per_page", "must be a whole number from 1 to \(FeedQuery.maxPerPage)").response
        }
        var found: StoredPage
        do {
            found = try await index.search(search, offset: (page - 1) * perPage, limit: perPage)
            // Each item found once.
            if merges { found.cards = try await mergedCopies(found.cards, person: person) }
        } catch {
            return Problem(title: "Service Unavailable", status: 503, detail: "the card store cannot be read now").response
        }
        let kept = Dictionary(found.cards.map { ($0.card.id, $0.dates) }, uniquingKeysWith: { first, _ in first })
        guard Form.wantsHTML(request) else {
            var bytes: [UInt8] = []
            for card in found.cards {
                JSONLines.append(card.card, kept: card.dates, to: &bytes)
                bytes.append(UInt8(ascii: "\n"))
            }
            return Response(status: .ok, headers: [.contentType: "application/jsonl; charset=utf-8", .cacheControl: "no-store"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        let query = FeedQuery(sourceIDs: [], page: page, perPage: perPage)
        let result = FeedRunner.stored(found, query: query, sources: [])
        let session = sessions.session(of: request)
        var reading = ReadingContext(view: .all, unread: (try? await marks.unreadCounts()) ?? [:], token: sessions.token(for: session.id),
                                     returnTo: request.uri.description, marks: kept, renderedAt: Date(), sourceList: sourceViews,
                                     signedIn: signedIn, folders: sourceFolders)
        reading.highlight = search.required
        reading.search = parameters.get("q")
        reading.mergesCopies = merges
        reading.decidesItems = decidesItems
        let html = ReaderPage.list(result, parameters: pairs, config: config, degraded: [:], unselectedSources: unselectedSources,
                                   now: Date(), reading: reading, path: "/search")
        return Self.personal(html, session: session)
    }

    /// A card's page with what the store keeps of it (its dates, history, price chart and
    /// marks); opening it reads it. Nil when the store keeps no such card.
    func keptPage(_ request: Request, card: Card, hasDetail: Bool, degraded: [String: SourceHealth.Status], person: Int,
                  signedIn: String? = nil) async -> Response? {
        guard let store = store?.reading(as: person), let personal = marks?.marks(of: person),
              let kept = try? await store.card(id: card.id) else { return nil }
        let session = sessions.session(of: request)
        let now = Date()
        let neighbours = await neighbours(of: card.id, request: request, wasUnread: kept.dates.readAt == nil, person: person)
        _ = try? await personal.mark(await (try? withCopies([card.id], person: person)) ?? [card.id], .read, at: now)
        let history = (try? await store.history(of: card.id)) ?? []
        let marks = ReaderPage.CardMarks(starred: kept.dates.starredAt != nil, token: sessions.token(for: session.id),
                                         returnTo: request.uri.description, back: neighbours.back, signedIn: signedIn)
        let html = ReaderPage.detail(card, hasDetail: hasDetail, config: config, degraded: degraded, now: now, marks: marks,
                                     kept: ReaderPage.KeptFacts(dates: kept.dates, history: history,
                                                                chart: PriceChart(kept: kept, history: history, now: now)),
                                     neighbours: neighbours)
        return Self.personal(html, session: session)
    }

    /// The cards before and after a card in the view its link came from (`/cards/ID?view=…&at=N`,
    /// N its place in the view from 1), and the way back to that view. Looked up before
    /// opening the card reads it: in Unread it then leaves the view, and the next card
    /// takes its place.
    func neighbours(of id: String, request: Request, wasUnread: Bool, person: Int) async -> ReaderPage.Neighbours {
        let pairs = Form.pairs(request.uri.query ?? "").filter { !$0.1.isEmpty && $0.0 != "page" && $0.0 != "per_page" }
        let viewPairs = pairs.filter { $0.0 != "at" }
        var found = ReaderPage.Neighbours(back: "/" + ReaderPage.queryString(viewPairs))
        guard let at = pairs.first(where: { $0.0 == "at" }).flatMap({ Int($0.1) }), (1...FeedQuery.maxPage).contains(at),
              let (view, query) = try? readingQuery(viewPairs) else { return found }
        let sources = (try? runner.select(query.sourceIDs).map(\.id)) ?? query.sourceIDs
        func card(at place: Int) async -> Card? {
            guard place >= 1, place <= FeedQuery.maxPage else { return nil }
            var one = query
            one.page = place
            one.perPage = 1
            return try? await answer(one, sources: sources, reading: view.filter, person: person).result.cards.first
        }
        func link(_ card: Card, at place: Int) -> ReaderPage.Neighbours.Link {
            ReaderPage.Neighbours.Link(href: ReaderPage.cardPath(card.id) + ReaderPage.queryString(viewPairs + [("at", String(place))]),
                                       title: card.title)
        }
        if let previous = await card(at: at - 1), previous.id != id { found.previous = link(previous, at: at - 1) }
        if let next = await card(at: at + 1), next.id != id {
            let leaves = view == .unread && wasUnread
            found.next = link(next, at: leaves ? at : at + 1)
        }
        return found
    }

    /// A page of one person's: not stored by any cache, with their session cookie.
    static func personal(_ html: String, session: ReaderSession) -> Response {
        personal(ByteBuffer(string: html), session: session)
    }

    static func personal(_ page: ByteBuffer, session: ReaderSession) -> Response {
        var headers: HTTPFields = [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"]
        SecurityHeaders.add(to: &headers, contentType: "text/html")
        var response = Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: page))
        ReaderSessions.set(session, on: &response)
        return response
    }

    /// `POST /cards/{id}/read` (and `unread`, `star`, `unstar`).
    func markOne(_ request: Request, id: String, mark: ReadingMark, person: Int) async -> Response {
        let form = await FormGuard.form(of: request)
        guard let marks = marks?.marks(of: person) else { return Problem.notFound("no card store").response }
        let marked: Int
        do {
            let reached = try await marks.mark(try await withCopies([id], person: person), mark, at: Date())
            guard reached.contains(id) else { return Problem.notFound("no card \(id) in the card store").response }
            marked = reached.count
        } catch {
            return Problem(title: "Service Unavailable", status: 503, detail: "the card store cannot be written now").response
        }
        return await back(request, form: form, marked: marked, marks: marks)
    }

    /// `POST /read` with `ids=` (repeated) or `before=` (RFC 3339, with `source=` to narrow).
    func markMany(_ request: Request, person: Int) async -> Response {
        let form = await FormGuard.form(of: request)
        guard let marks = marks?.marks(of: person) else { return Problem.notFound("no card store").response }
        let ids = form.getAll("ids")
        let marked: Int
        do {
            if let before = form.get("before") {
                guard let seenBy = RFC3339.date(from: before) else {
                    return Problem.badParameter("before", "must be an RFC 3339 time such as 2026-11-27T08:00:00Z, got \"\(before)\"").response
                }
                let sources = form.getAll("source")
                marked = try await marks.markRead(seenBy: seenBy, sources: sources.isEmpty ? nil : sources, at: Date())
                    + (ids.isEmpty ? 0 : try await marks.mark(try await withCopies(ids, person: person), .read, at: Date()).count)
            } else if !ids.isEmpty {
                guard ids.count <= 100_000 else { return Problem.badParameter("ids", "at most 100000 ids at once").response }
                marked = try await marks.mark(try await withCopies(ids, person: person), .read, at: Date()).count
            } else {
                return Problem.badParameter("ids", "give the cards to mark read as ids=, or before= to mark everything up to a time").response
            }
        } catch {
            return Problem(title: "Service Unavailable", status: 503, detail: "the card store cannot be written now").response
        }
        return await back(request, form: form, marked: marked, marks: marks)
    }

    /// After a mark: back to the page the form came from (a path of this server only), or
    /// for the reader's script, JSON with what changed and the unread count.
    private func back(_ request: Request, form: FormFields, marked: Int, marks: any ReadingMarkStore) async -> Response {
        if let accept = request.headers[.accept], accept.contains("application/json") {
            let unread = (try? await marks.unreadCounts())?.values.reduce(0, +) ?? 0
            return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"marked":\#(marked),"unread":\#(unread)}"# + "\n")))
        }
        return Response(status: .seeOther, headers: [.location: SameServerPath.safe(form.get("return")) ?? "/", .cacheControl: "no-store"])
    }
}
