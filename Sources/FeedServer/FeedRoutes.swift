import ServeAccess
import ServeHTTP
import FeedConfig
import FeedCore
import FeedEngine
import FeedFormats
import FeedState
import FeedSupport
import Foundation
import GoogleReaderModel
import ReaderPages
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import HummingbirdCore
import NIOCore

/// The routes of `aggregate serve`. A class: every route's closure holds it, and a
/// struct of a dozen references was copied, each retained, on every request.
final class FeedRoutes: Sendable {
    /// The configuration answered now, and how it changes (a reload of Sources.yml).
    let reconfiguration: Reconfiguration
    var current: CurrentSources { reconfiguration.current }
    /// The readers' runner on the configuration answered now.
    var runner: FeedRunner { current.served.runner }
    var config: FeedConfig { current.served.config }
    /// The sources as the Google Reader API lists them.
    var catalog: GoogleReader.Catalog { current.served.catalog }
    /// The reader's source filter with nothing selected, rendered once per configuration.
    var unselectedSources: String { current.served.unselectedSources }
    var sourceFolders: [String: String] { current.served.folders }
    /// When each undated card was first seen (feed entries need a date that does not move).
    /// The card store the background refresh records in, which feeds and the reader are
    /// answered from (nil without the refresh or a state: each reader's run fetches).
    let store: (any CardStore)?
    /// Each person's marks on the store's cards, and its search index (nil without the store).
    let marks: (any ReadingMarkStore)?
    let searchIndex: (any CardSearchIndex)?
    /// Which cards people said are or are not one item (nil without the store).
    let itemDecisions: (any ItemDecisionStore)?
    /// The decisions as pages read them (``RecentItemDecisions``).
    let recentDecisions: RecentItemDecisions
    let refreshed: RefreshedSources?
    let health: SourceHealth
    /// Rendered feeds, kept as bytes while the sources they were built from are unchanged.
    let responses: any RenderedResponseCache
    let versions: SourceVersions
    let metrics: ServeMetrics
    /// Filter rules that ran out of time: in `/metrics`, and once each on stderr.
    let ruleTimeouts: RuleTimeoutReporter
    let detailGuard = DetailGuard()
    /// Bounds the work in flight: renderings and card lookups (a kept answer needs none).
    let slots: RequestSlots
    let accessLog: @Sendable (String) -> Void
    /// One line per request on stderr (`--no-access-log` turns it off).
    let logsRequests: Bool
    /// The reader's side list of sources, as last rendered.
    let sourceViews = SourceViews()
    /// The reader's sessions and form tokens (with a card store: the marks' forms).
    let sessions: ReaderSessions
    /// Each person's reader pages, as last rendered.
    let personalPages = PersonalPages()
    /// Who may use the server, and how people sign in (with accounts).
    let access: AccessPolicy
    let signIn: SignIn?
    /// Who a request without credentials is (the owner, a guest, or nobody).
    let owner: OwnerAccess
    /// `--trusted-proxy`: the peers whose forwarding headers name the client.
    let trustedProxies: [IPRange]
    /// `--base-url`: where people reach this server (links to its own pages).
    let reachedAt: URL?
    /// `--metrics-token`: `/metrics` for a client that is not this machine.
    let metricsToken: String?
    /// Most kept cards a view filtered by kind or words reads (``FeedServer/defaultMaxFilteredCards``).
    let maxFilteredCards: Int
    /// Signed-in browsers' sessions, kept in the accounts' state (in memory without accounts).
    let loginSessions: AccountSessions

    init(reconfiguration: Reconfiguration, store: (any CardStore)?, marks: (any ReadingMarkStore)? = nil, searchIndex: (any CardSearchIndex)? = nil,
         itemDecisions: (any ItemDecisionStore)? = nil, refreshed: RefreshedSources?, health: SourceHealth,
         responses: any RenderedResponseCache, versions: SourceVersions, metrics: ServeMetrics, ruleTimeouts: RuleTimeoutReporter,
         slots: RequestSlots, accessLog: @escaping @Sendable (String) -> Void, logsRequests: Bool,
         access: AccessPolicy = .open, trustedProxies: [IPRange] = [], reachedAt: URL? = nil, metricsToken: String? = nil,
         maxFilteredCards: Int = FeedServer.defaultMaxFilteredCards) {
        self.maxFilteredCards = maxFilteredCards
        self.access = access
        self.trustedProxies = trustedProxies
        self.reachedAt = reachedAt
        if case .accounts(let accounts) = access { sessions = ReaderSessions(secure: accounts.secureCookies) } else { sessions = ReaderSessions() }
        switch access {
        case .accounts(let accounts):
            signIn = SignIn(access: accounts)
            loginSessions = AccountSessions(store: accounts.store)
            owner = OwnerAccess(accounts.openUntilFirstAccount ? .untilFirstAccount(accounts.store) : .none)
        case .open, .readOnly:
            signIn = nil
            loginSessions = AccountSessions(store: InMemoryAccounts())
            owner = OwnerAccess(access.writes ? .owner : .guest)
        }
        self.metricsToken = metricsToken
        self.reconfiguration = reconfiguration
        self.store = store
        self.marks = marks
        self.searchIndex = searchIndex
        self.itemDecisions = itemDecisions
        recentDecisions = RecentItemDecisions(itemDecisions)
        self.refreshed = refreshed
        self.health = health
        self.responses = responses
        self.versions = versions
        self.metrics = metrics
        self.ruleTimeouts = ruleTimeouts
        self.slots = slots
        self.accessLog = accessLog
        self.logsRequests = logsRequests
    }

    /// Feed routes and the format each serves.
    static let feeds: [(path: String, format: any CardFormat.Type)] = [
        ("/feed.atom", AtomFormat.self), ("/feed.json", JSONFeedFormat.self),
        ("/feed.rss", RSSFormat.self), ("/feed.jsonl", JSONLinesFormat.self),
    ]

    /// The routes that show cards: feeds, the reader, card pages, search and the source
    /// lists (``register(on:)`` puts them behind the reader role).
    func registerReading(on group: RouterGroup<ServeRequestContext>) {
        for (path, format) in Self.feeds {
            group.get(RouterPath(path)) { request, _ in await self.feed(request, format: format) }
        }
        group.get("/cards/:id") { request, context in
            // `/cards/users%3A2` is `users:2`.
            let raw = context.parameters.get("id") ?? ""
            return await self.slots.run {
                await self.card(request, id: raw.removingPercentEncoding ?? raw, client: context.clientAddress, person: context.person,
                                signedIn: context.identity?.account?.name)
            }
        }
        group.get("/sources") { request, _ in self.sources(request) }
        group.get("/sources.opml") { request, _ in
            // Every source a reader can subscribe to: feeds by their own URL, the others by ours.
            let base = request.head.authority.map { "http://\($0)" }
            return HTTPAnswer(body: Array(OPML.document(of: self.config, registry: self.runner.registry, servedAt: base).utf8), contentType: "text/x-opml; charset=utf-8",
                              lastModified: nil, maxAge: nil).response(to: request)
        }
        group.get("/") { request, context in
            self.readsMarks ? await self.slots.run {
                await self.readingList(request, person: context.person, signedIn: context.identity?.account?.name,
                                       decidesItems: context.isAdmin)
            }
                : await self.reader(request)
        }
        if readsMarks {
            group.get("/search") { request, context in
                await self.slots.run {
                    await self.search(request, person: context.person, signedIn: context.identity?.account?.name,
                                      decidesItems: context.isAdmin)
                }
            }
        }
    }

    /// A feed: from the rendered-response cache while every source it reads is unchanged,
    /// else rendered once (however many readers ask for it at the same moment).
    func feed(_ request: Request, format: any CardFormat.Type) async -> Response {
        await kept(request, emptyIsAbsent: false) { query, sources in
            await self.render(request, query: query, format: format, sources: sources)
        }
    }

    /// `GET /`: the cards as a page, through the same kept responses as the feeds.
    private func reader(_ request: Request) async -> Response {
        let parameters = request.uri.queryParameters.map { (String($0.key), String($0.value)) }.filter { !$0.1.isEmpty && $0.0 != "token" }
        return await kept(request, emptyIsAbsent: true) { query, sources in
            let built = self.versions.snapshot(sources)
            let result: FeedResult
            do throws(AnswerFailure) {
                result = try await self.answer(query, sources: sources, reading: nil).result
            } catch {
                return RenderedResponse(problem: error.problem, versions: built)
            }
            await self.health.record(result.outcomes)
            self.ruleTimeouts.report(result.outcomes)
            let degraded = await self.degraded(result.outcomes, sources: sources)
            let html = ReaderPage.list(result, parameters: parameters, config: self.config, degraded: degraded,
                                       unselectedSources: self.unselectedSources, now: Date())
            return RenderedResponse(body: Array(html.utf8), contentType: "text/html; charset=utf-8", lastModified: nil,
                                    maxAge: self.maxAge(query), degraded: Self.degradedHeader(result.outcomes), versions: built)
        }
    }

    /// `query` answered: from the card store when the background refresh looks after every
    /// source it reads (no upstream body decoded, no fetch beside the refresh), with the
    /// first-seen times the store has of its undated cards; else by a run of the readers'
    /// runner, as without a store. A store that cannot be read is an answer of its own
    /// (``AnswerFailure/storeUnreadable(_:)``, and `/healthz` degraded), never a page of
    /// another shape.
    /// With `reading`, only the kept cards with those marks (the reader's views). `kept`:
    /// what the store keeps of the answer's cards (their dates and marks).
    func answer(_ query: FeedQuery, sources: [String], reading: ReadingFilter?, person: Int = StoreUser.default) async throws(AnswerFailure)
        -> (result: FeedResult, firstSeen: [String: Date], kept: [String: KeptDates]) {
        guard let store = store?.reading(as: person), reading != nil || refreshed?.covers(sources) == true else {
            do {
                return (try await runner.run(query), [:], [:])
            } catch {
                throw .badQuery(error)
            }
        }
        let configs: [SourceConfig]
        do {
            configs = try runner.select(sources)
        } catch {
            throw .badQuery(error)
        }
        // As every reader of the store: after the refresh's first recording, or its grace.
        if let refreshed, refreshed.covers(sources) { _ = await refreshed.pending(among: sources) }
        let entries = reading == nil ? await refreshed?.entries(sources) ?? [:] : [:]
        // Sources whose cards the refresh holds apart from the store (`record: false`).
        let apartSources = sources.filter { entries[$0]?.apart == true }
        let outcomes = sources.compactMap { entries[$0]?.outcome }
        do {
            if apartSources.isEmpty, let request = FeedRunner.storedPage(query, sources: sources, reading: reading) {
                // A page the store makes from its indexes.
                let page = try await store.page(request)
                var result = FeedRunner.stored(page, query: query, sources: configs)
                if reading == nil { result.outcomes = outcomes }
                await health.store(failure: nil)
                return (result, Self.firstSeen(undatedIn: page.cards), Self.dates(of: page.cards, in: result))
            }
            // A filter, or cards held apart: every kept card of the sources ordered here.
            let stored = sources.filter { !apartSources.contains($0) }
            if query.filters {
                // Which reads every card of them: beyond the bound, an answer that says so,
                // not seconds of a core and gigabytes (25 s and 4 GB at a million cards).
                let held = try await store.page(StoredPageQuery(sources: stored, order: .feed, descending: false, offset: 0, limit: 1)).total
                if held > maxFilteredCards { throw AnswerFailure.tooManyToFilter(held, bound: maxFilteredCards) }
            }
            var kept = try await store.cards(of: stored)
            kept += await refreshed?.apartCards(of: apartSources) ?? []
            if let reading { kept.removeAll { !reading.includes($0.dates) } }
            var result = try FeedRunner.stored(kept.map(\.card), config: config, query: query)
            if reading == nil { result.outcomes = outcomes }
            await health.store(failure: nil)
            return (result, Self.firstSeen(undatedIn: kept), Self.dates(of: kept, in: result))
        } catch let error as UsageError {
            throw .badQuery(error)
        } catch let failure as AnswerFailure {
            throw failure
        } catch {
            let reason = PlainWords.describe(error)
            await health.store(failure: reason)
            throw .storeUnreadable(reason)
        }
    }

    /// The dates and marks of `kept` that `result` shows.
    private static func dates(of kept: [KeptCard], in result: FeedResult) -> [String: KeptDates] {
        let shown = Set(result.cards.map(\.id))
        var dates: [String: KeptDates] = [:]
        for card in kept where shown.contains(card.card.id) { dates[card.card.id] = card.dates }
        return dates
    }

    /// When the store first saw each of `kept` that carries no date of its own.
    static func firstSeen(undatedIn kept: [KeptCard]) -> [String: Date] {
        var firstSeen: [String: Date] = [:]
        for card in kept where card.card.published == nil { firstSeen[card.card.id] = card.dates.firstSeen }
        return firstSeen
    }

    /// The kept answer to `request`, else `render`'s, in a request slot, once for all who
    /// ask at the same moment. Only valid queries are kept, so a kept answer needs no
    /// parsing of its query.
    private func kept(_ request: Request, emptyIsAbsent: Bool,
                      render: @escaping @Sendable (FeedQuery, [String]) async -> RenderedResponse) async -> Response {
        let key = Self.cacheKey(request)
        if let kept = responses.kept(key, versions: versions) {
            metrics.responseCache(hit: true)
            return kept.answer(to: request)
        }
        let query: FeedQuery
        do {
            query = try FeedRequest.query(request, config: config, emptyIsAbsent: emptyIsAbsent)
        } catch {
            return error.problem.response
        }
        let sources = (try? runner.select(query.sourceIDs).map(\.id)) ?? query.sourceIDs
        let (rendered, hit) = await responses.response(for: key, versions: versions) {
            // A merged feed is answered without the sources whose first refresh is still
            // pending past its grace (a new subscription, a source that hangs), and says so.
            let pending = sources.count > 1 ? await self.refreshed?.pending(among: sources) ?? [] : []
            guard !pending.isEmpty, pending.count < sources.count else { return await self.slots.run { await render(query, sources) } }
            let ready = sources.filter { !pending.contains($0) }
            var narrowed = query
            narrowed.sourceIDs = ready
            return await self.slots.run { await render(narrowed, ready) }.withPending(pending, versions: self.versions.snapshot(pending))
        }
        metrics.responseCache(hit: hit)
        return rendered.answer(to: request)
    }

    /// The sources a page should name as not live, and what they are served from.
    func degraded(_ outcomes: [SourceOutcome], sources: [String]) async -> [String: SourceHealth.Status] {
        let named = Set(sources)
        var states = await health.failing.filter { named.contains($0.key) }
        for outcome in outcomes where outcome.status != .live {
            states[outcome.id] = SourceHealth.Status(outcome.status)
        }
        return states
    }

    /// The same feed for the same request: path, the query's parameters in any order, and
    /// the host (the feed names its own URL).
    static func cacheKey(_ request: Request) -> String {
        cacheKey(authority: request.head.authority, target: request.uri.path + (FeedRequest.withoutToken(request.uri.query).map { "?" + $0 } ?? ""))
    }

    /// The key of a request for `target` at `authority` (``ResponseKey``).
    static func cacheKey(authority: String?, target: String) -> String {
        ResponseKey.of(authority: authority, target: target)
    }

    private func render(_ request: Request, query: FeedQuery, format: any CardFormat.Type, sources: [String]) async -> RenderedResponse {
        // The versions before reading: a change during the rendering retires this response.
        let built = versions.snapshot(sources)
        let result: FeedResult
        var firstSeen: [String: Date]
        do {
            (result, firstSeen, _) = try await answer(query, sources: sources, reading: nil)
        } catch {
            return RenderedResponse(problem: error.problem, versions: built)
        }
        await health.record(result.outcomes)
        ruleTimeouts.report(result.outcomes)
        if result.cards.isEmpty, !result.outcomes.isEmpty, result.outcomes.allSatisfy({ $0.failure != nil }) {
            let failures = result.outcomes.map { "\($0.id): \($0.failure ?? "failed")" }.joined(separator: "; ")
            return RenderedResponse(problem: Problem(title: "Bad Gateway", status: 502, detail: failures), versions: built)
        }
        let info = config.feed.narrowed(by: FeedRequest.withoutToken(request.uri.query), selfURL: Self.selfURL(request))
        let unknown = result.cards.filter { $0.published == nil && firstSeen[$0.id] == nil }
        // Cards a reader's run fetched beside the store (no background refresh): the
        // store's time for those it keeps; the others carry the feed's date.
        if format.isFeed, let store, !unknown.isEmpty {
            do {
                firstSeen.merge(try await store.firstSeen(of: unknown.map(\.id))) { kept, _ in kept }
            } catch {
                accessLog("aggregate: cannot read when cards were first seen (\(PlainWords.describe(error))); undated entries carry the feed's date")
            }
        }
        let document = FeedDocument(cards: result.cards, info: info, firstSeen: firstSeen)
        var out = FormattedOutput()
        format.init().write(document, to: &out)
        // A source whose refresh fails is served from its last copy: say so, as a fallback would.
        var degraded = Self.degradedHeader(result.outcomes)
        let named = Set(sources)
        let failed = Set(result.outcomes.filter { $0.failure != nil }.map(\.id))
        let failing = await health.failing.filter { named.contains($0.key) && !failed.contains($0.key) }
        if !failing.isEmpty {
            let said = Set(result.outcomes.filter { $0.status != .live }.map(\.id))
            let added = failing.keys.sorted().filter { !said.contains($0) }.map { "\($0)=cache" }
            degraded = ([degraded].compactMap { $0 } + added).joined(separator: ", ")
        }
        return RenderedResponse(body: out.finish(), contentType: format.mediaType,
                                lastModified: Self.lastModified(result.cards, firstSeen: firstSeen), maxAge: maxAge(query),
                                degraded: degraded, versions: built)
    }

    /// The shortest `cache_ttl` of the sources a query reads: no reader should keep the
    /// feed longer than its freshest source.
    func maxAge(_ query: FeedQuery) -> Int? {
        let ids = query.sourceIDs.isEmpty ? config.sources.filter(\.enabled).map(\.id) : query.sourceIDs
        return ids.compactMap { config.source(id: $0)?.cacheTTL }.min().map { Int($0) }
    }

    static func json<T: Encodable>(_ value: T) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array((try? encoder.encode(value)) ?? Data("{}".utf8)) + [UInt8(ascii: "\n")]
    }

    /// `ltk=cache, users=failed`: the sources this response did not get live.
    static func degradedHeader(_ outcomes: [SourceOutcome]) -> String? {
        let degraded = outcomes.compactMap { outcome -> String? in
            outcome.status == .live ? nil : "\(outcome.id)=\(SourceHealth.Status(outcome.status).rawValue)"
        }
        return degraded.isEmpty ? nil : degraded.joined(separator: ", ")
    }

    static func lastModified(_ cards: some Collection<Card>, firstSeen: [String: Date]) -> Date? {
        cards.compactMap { $0.published ?? firstSeen[$0.id] }.max()
    }

    /// The URL the reader asked for, query included (a filtered feed is a feed of its own).
    static func selfURL(_ request: Request) -> URL? {
        guard let authority = request.head.authority else { return nil }
        let query = FeedRequest.withoutToken(request.uri.query).map { $0.isEmpty ? "" : "?\($0)" } ?? ""
        return URL(string: "http://\(authority)\(request.uri.path)\(query)")
    }
}


/// Why ``FeedRoutes/answer(_:sources:reading:person:)`` gave no answer.
enum AnswerFailure: Error, CustomStringConvertible {
    /// The query names what is not there (an unknown source): the asker's to fix.
    case badQuery(UsageError)
    /// The card store cannot be read now (its file, its database): the server's.
    case storeUnreadable(String)
    /// A filter by kind or words over more kept cards than the server reads for one view.
    case tooManyToFilter(Int, bound: Int)

    var description: String {
        switch self {
        case .badQuery(let error): error.description
        case .storeUnreadable(let reason): "the card store cannot be read now (\(reason))"
        case .tooManyToFilter(let held, let bound):
            "a view filtered by kind or words reads every kept card of its sources: these hold \(held), more than the \(bound) "
                + "this server reads for one view; choose fewer sources, or search (/search?q=kind:post words), which is indexed"
        }
    }

    /// The answer's problem JSON: 400 for the query, 422 for a filter over too many cards,
    /// 503 for the store.
    var problem: Problem {
        switch self {
        case .badQuery(let error): Problem.badParameter("source", error.description)
        case .tooManyToFilter: Problem(title: "Too Many Cards to Filter", status: 422, detail: description)
        case .storeUnreadable: Problem(title: "Service Unavailable", status: 503, detail: description)
        }
    }
}
