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
import HTTPTypes
import Hummingbird
import NIOCore

/// The Google Reader API under `/api/greader/` (docs/people-and-apps.md), so phone apps and
/// newsboat sync with `serve`: sign-in (ClientLogin), subscriptions and labels, unread
/// counts, streams of items, and read and starred marks, each person's own. Signed in as
/// every other route is (``AccountGate``: `Authorization: GoogleLogin auth=TOKEN`); without
/// accounts, as the default person.
extension FeedRoutes {
    /// The ClientLogin tokens a person keeps for one app (newsboat signs in on every
    /// reload; two phones may run the same app): past these, that app's oldest are revoked.
    static let clientLoginTokensPerApp = 3
    /// The apps a person keeps ClientLogin tokens for: past these, the app signed in least
    /// recently loses its tokens. The limit counts apps, so a cron reload every ten minutes
    /// never signs a phone out.
    static let clientLoginApps = 10
    static let clientLoginLabel = "Google Reader app"

    /// ClientLogin, open to anyone: POST only, so a password never travels in a URL
    /// (405 for anything else).
    func registerClientLogin(on router: RouterGroup<ServeRequestContext>) {
        let path = RouterPath(GoogleReader.prefix + "/accounts/ClientLogin")
        router.post(path) { request, context in await self.clientLogin(request, context: context) }
        for method in [HTTPRequest.Method.get, .put, .delete, .patch] {
            router.on(path, method: method) { _, _ in
                var response = Self.text("Error=BadRequest\nClientLogin takes POST only: the password goes in the form, never in the URL\n",
                                         status: .methodNotAllowed)
                response.headers[.allow] = "POST"
                return response
            }
        }
    }

    func registerGoogleReader(on router: RouterGroup<ServeRequestContext>) {
        let api = GoogleReader.prefix + "/reader/api/0"
        for method in [HTTPRequest.Method.get, .post] {
            router.on(RouterPath(api + "/stream/items/contents"), method: method) { request, context in
                await self.api(request, context) { try await self.itemContents($0, person: context.person, style: self.itemStyle(request)) }
            }
        }
        router.get(RouterPath(api + "/token")) { _, _ in Self.text("aggregate-google-reader-token\n") }
        router.get(RouterPath(api + "/user-info")) { request, context in await self.api(request, context) { _ in self.userInfo(context) } }
        router.get(RouterPath(api + "/subscription/list")) { request, context in
            await self.api(request, context) { _ in
                Self.json(["subscriptions": self.catalog.subscriptions(base: self.pageBase(request))])
            }
        }
        router.get(RouterPath(api + "/tag/list")) { request, context in
            await self.api(request, context) { _ in
                let labels = Set(self.catalog.entries.flatMap { $0.subscription.categories.map(\.label) })
                let tags = [GoogleReader.Tag(id: GoogleReader.starred, type: nil)]
                    + labels.sorted().map { GoogleReader.Tag(id: GoogleReader.labelPrefix + $0, type: "folder") }
                return Self.json(["tags": tags])
            }
        }
        router.get(RouterPath(api + "/unread-count")) { request, context in
            await self.api(request, context) { _ in try await self.unreadCount(person: context.person) }
        }
        router.get(RouterPath(api + "/stream/contents/**")) { request, context in
            let stream = context.parameters.getCatchAll().joined(separator: "/")
            return await self.api(request, context) {
                try await self.streamContents($0, stream: stream.removingPercentEncoding ?? stream, person: context.person, style: self.itemStyle(request))
            }
        }
        router.get(RouterPath(api + "/stream/contents")) { request, context in
            await self.api(request, context) {
                try await self.streamContents($0, stream: $0.get("s") ?? GoogleReader.readingList, person: context.person, style: self.itemStyle(request))
            }
        }
        // A stream as an Atom feed, as FeedHQ and newsboat's FeedHQ mode read it.
        router.get(RouterPath(GoogleReader.prefix + "/reader/atom/**")) { request, context in
            let stream = context.parameters.getCatchAll().joined(separator: "/")
            return await self.api(request, context) {
                try await self.atomStream($0, stream: stream.removingPercentEncoding ?? stream, person: context.person, style: self.itemStyle(request))
            }
        }
        router.get(RouterPath(api + "/stream/items/ids")) { request, context in
            await self.api(request, context) { try await self.itemIDs($0, person: context.person) }
        }
        router.post(RouterPath(api + "/edit-tag")) { request, context in
            await self.api(request, context) { try await self.editTag($0, person: context.person) }
        }
        router.post(RouterPath(api + "/mark-all-as-read")) { request, context in
            await self.api(request, context) { try await self.markAllAsRead($0, person: context.person) }
        }
    }

    /// A failure an API answer reports: its status and text.
    struct APIError: Error {
        var status: HTTPResponse.Status
        var text: String
    }

    /// Runs an API route with the request's parameters (query and form, merged); a POST
    /// another site made a browser send is refused.
    func api(_ request: Request, _ context: ServeRequestContext, readsQuery: Bool = true,
             _ body: (FormFields) async throws -> Response) async -> Response {
        if request.method == .post, let refusal = CrossSiteGuard.refusal(request) {
            return Problem(title: "Forbidden", status: 403, detail: refusal).response
        }
        var pairs = readsQuery ? Form.pairs(request.uri.query ?? "") : []
        if request.method == .post {
            guard let buffer = try? await request.body.collect(upTo: 4 << 20) else {
                return Self.text("a request body is at most 4 MiB\n", status: .contentTooLarge)
            }
            pairs += Form.pairs(String(buffer: buffer))
        }
        do {
            return try await body(FormFields(pairs: pairs))
        } catch let error as APIError {
            return Self.text(error.text + "\n", status: error.status)
        } catch {
            return Self.text("the card store cannot be used now\n", status: .serviceUnavailable)
        }
    }

    static func text(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                 body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func json(_ value: some Encodable) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let bytes = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// `accounts/ClientLogin` (`Email`, `Passwd`): `Auth=` a token of the account's, made
    /// for the app (a password that is itself one of the account's tokens is handed back).
    private func clientLogin(_ request: Request, context: ServeRequestContext) async -> Response {
        await api(request, context, readsQuery: false) { form in
            guard let signIn else {
                // No accounts: this machine's server, the default person's marks.
                return Self.text("SID=none\nLSID=none\nAuth=none\n")
            }
            let name = form.get("Email") ?? "", password = form.get("Passwd") ?? ""
            if AccountToken.parse(password) != nil, let account = await signIn.account(token: password), account.name == name {
                return Self.text("SID=\(password)\nLSID=\(password)\nAuth=\(password)\n")
            }
            switch await signIn.check(name: name, password: password, address: context.clientAddress) {
            case .success(let account):
                let store = signIn.access.store
                let label = "\(Self.clientLoginLabel): \(Self.appName(form: form, userAgent: request.headers[.userAgent]))"
                let made = AccountToken.make(user: account.id, label: label, at: Date())
                try await store.add(made.token, secretHash: made.secretHash)
                let mine = try await store.tokens(of: account.id).filter { $0.label.hasPrefix(Self.clientLoginLabel) }
                for old in mine.filter({ $0.label == label }).dropLast(Self.clientLoginTokensPerApp) {
                    _ = try await store.revoke(token: old.id, of: account.id)
                }
                // Apps by their newest sign-in, newest first: those past the limit go.
                var newest: [String: Date] = [:]
                for token in mine { newest[token.label] = max(newest[token.label] ?? .distantPast, token.created) }
                let kept = Set(newest.sorted { $0.value > $1.value }.prefix(Self.clientLoginApps).map(\.key))
                for old in mine where !kept.contains(old.label) { _ = try await store.revoke(token: old.id, of: account.id) }
                return Self.text("SID=\(made.text)\nLSID=\(made.text)\nAuth=\(made.text)\n")
            case .failure(.throttled(let seconds)):
                var response = Self.text("Error=BadAuthentication\n", status: .tooManyRequests)
                response.headers[.retryAfter] = String(seconds)
                return response
            case .failure(.busy):
                var response = Self.text("Error=ServiceUnavailable\n", status: .tooManyRequests)
                response.headers[.retryAfter] = "1"
                return response
            case .failure(.wrong):
                return Self.text("Error=BadAuthentication\n", status: .forbidden)
            case .failure(.unavailable):
                return Self.text("Error=ServiceUnavailable\n", status: .serviceUnavailable)
            }
        }
    }

    /// The app a ClientLogin comes from, for its token's label: the form's `client` or
    /// `source`, else the User-Agent's first product (`newsboat/2.36` → `newsboat`); one
    /// line of at most 40 printable characters, `unnamed` when nothing says.
    static func appName(form: FormFields, userAgent: String?) -> String {
        let said = form.get("client") ?? form.get("source") ?? userAgent.flatMap { $0.split(separator: " ").first.map { String($0.split(separator: "/").first ?? $0) } }
        let printable = String((said ?? "").unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F }.map(Character.init))
            .trimmingCharacters(in: .whitespaces)
        return printable.isEmpty ? "unnamed" : String(printable.prefix(40))
    }

    private func userInfo(_ context: ServeRequestContext) -> Response {
        let id = String(context.person)
        return Self.json(GoogleReader.UserInfo(userId: id, userName: context.identity?.account?.name ?? "aggregate", userProfileId: id, userEmail: ""))
    }

    private func personStore(_ person: Int) throws(APIError) -> any CardStore {
        guard let store else { throw Self.noStore }
        return store.reading(as: person)
    }

    private func personMarks(_ person: Int) throws(APIError) -> any ReadingMarkStore {
        guard let marks else { throw Self.noStore }
        return marks.marks(of: person)
    }

    private static let noStore = APIError(status: .notFound, text: "the Google Reader API needs the card store (serve with a state and the background refresh)")

    /// Each source's unread cards, each label's, and the reading list's.
    private func unreadCount(person: Int) async throws -> Response {
        let counts = try await personMarks(person).unreadCounts()
        var rows: [GoogleReader.UnreadCount] = []
        var labels: [String: Int] = [:]
        for entry in catalog.entries {
            let (source, subscription) = (entry.source, entry.subscription)
            let count = counts[source.id] ?? 0
            guard count > 0 else { continue }
            rows.append(GoogleReader.UnreadCount(id: subscription.id, count: count))
            for label in subscription.categories { labels[label.id, default: 0] += count }
        }
        rows += labels.sorted { $0.key < $1.key }.map { GoogleReader.UnreadCount(id: $0.key, count: $0.value) }
        rows.append(GoogleReader.UnreadCount(id: GoogleReader.readingList, count: counts.values.reduce(0, +)))
        return Self.json(GoogleReader.UnreadCounts(unreadcounts: rows))
    }

    /// The sources a stream reads.
    private func sources(of stream: GoogleReader.Stream) throws(APIError) -> [String] {
        let subscriptions = catalog.entries
        switch stream {
        case .readingList, .starred, .read: return subscriptions.map(\.source.id)
        case .feed(let id):
            guard subscriptions.contains(where: { $0.source.id == id }) else { throw APIError(status: .notFound, text: "no source feed/\(id)") }
            return [id]
        case .label(let label):
            return subscriptions.filter { $0.subscription.categories.contains { $0.label == label } }.map(\.source.id)
        }
    }

    /// One page of a stream's items, newest first (`r=o`: oldest first): `n` of them (20,
    /// at most 1,000), from continuation `c`; `xt`/`it` exclude or keep read and starred
    /// items; `ot`/`nt` keep those after or before a time (seconds).
    /// Items an app asks for at most in one page (`n`).
    static let mostItems = 10_000
    /// Kept cards one page looks through at most for its filters: past these a page may be
    /// short, and its continuation goes on from where it stopped.
    static let mostScanned = 20_000

    /// A stream's page: `n` items (at most ``mostItems``) that pass the stream and its
    /// filters (`xt`, `it`, `ot`/`nt` in seconds against when the card was first recorded,
    /// as FreshRSS compares them), newest first or `r=o` oldest first, from the kept card
    /// `c` names on. The store's pages are read until the page is full or the stream ends,
    /// so a page is short only at the end, and the last page has no continuation (apps
    /// loop while one is there). The continuation is the place in the store's order
    /// where the next page starts.
    private func page(_ form: FormFields, stream text: String, person: Int) async throws
        -> (cards: [(Card, KeptDates)], continuation: String?) {
        _ = try personStore(person)
        guard let stream = GoogleReader.Stream(text) else { throw APIError(status: .badRequest, text: "unknown stream \(text)") }
        let sources = try sources(of: stream)
        let count = min(max(Int(form.get("n") ?? "") ?? 20, 1), Self.mostItems)
        var position = max(Int(form.get("c") ?? "") ?? 0, 0)
        let excluded = form.getAll("xt").compactMap(GoogleReader.Stream.init)
        let included = form.getAll("it").compactMap(GoogleReader.Stream.init)
        // One mark the store filters by; any other is checked on each card.
        var filters = ([stream.filter] + included.map(\.filter)).compactMap { $0 }
        if excluded.contains(.read) { filters.append(.unread) }
        let excludesStarred = excluded.contains(.starred)
        let after = form.get("ot").flatMap(Double.init), before = form.get("nt").flatMap(Double.init)
        guard !sources.isEmpty else { return ([], nil) }
        // The store's own view is the page when no filter is left to each card: ask it for
        // `n`; else for more at a time, as some will not pass.
        let checksEachCard = filters.count > 1 || excludesStarred || after != nil || before != nil
        let chunk = min(checksEachCard ? max(count * 2, 200) : count, FeedQuery.maxPerPage)
        var cards: [(Card, KeptDates)] = []
        var scanned = 0
        var exhausted = false
        while cards.count < count, !exhausted, scanned < Self.mostScanned {
            let query = FeedQuery(sourceIDs: sources, sort: .date, order: form.get("r") == "o" ? .ascending : .descending,
                                  page: position / chunk + 1, perPage: chunk)
            let answered: (result: FeedResult, firstSeen: [String: Date], kept: [String: KeptDates])
            do {
                answered = try await answer(query, sources: sources, reading: filters.first, person: person)
            } catch {
                throw APIError(status: error.problem.status == 503 ? .serviceUnavailable : .badRequest, text: error.description)
            }
            let rows = answered.result.cards
            let pageStart = (position / chunk) * chunk
            for card in rows.dropFirst(position - pageStart) where cards.count < count {
                position += 1
                scanned += 1
                guard let dates = answered.kept[card.id] else { continue }
                let recorded = dates.firstSeen.timeIntervalSince1970
                guard filters.dropFirst().allSatisfy({ $0.includes(dates) }), !(excludesStarred && dates.starredAt != nil),
                      after.map({ recorded >= $0 }) ?? true, before.map({ recorded <= $0 }) ?? true else { continue }
                cards.append((card, dates))
            }
            // The stream ends where the store's order does.
            exhausted = rows.count < chunk ? position >= pageStart + rows.count : answered.result.isComplete && position >= answered.result.matched
        }
        return (cards, exhausted ? nil : String(position))
    }

    /// Where this server's pages are: `--base-url`, else the address the request came to.
    func pageBase(_ request: Request) -> String {
        if let reachedAt {
            let text = reachedAt.absoluteString
            return text.hasSuffix("/") ? String(text.dropLast()) : text
        }
        return request.head.authority.map { "http://\($0)" } ?? ""
    }

    /// How the request's app reads items: this server's pages, and its enclosures' keys.
    func itemStyle(_ request: Request) -> GoogleReader.ItemStyle {
        GoogleReader.ItemStyle(pageBase: pageBase(request), enclosureKeys: GoogleReader.EnclosureKeys(userAgent: request.headers[.userAgent]))
    }

    private func items(_ cards: [(Card, KeptDates)], style: GoogleReader.ItemStyle) -> [GoogleReader.Item] {
        return cards.map { card, dates in
            let found = catalog.byID[card.source]
            return GoogleReader.Item(card, dates: dates, source: found?.source, labels: found?.subscription.categories.map(\.label) ?? [], style: style)
        }
    }

    private func streamContents(_ form: FormFields, stream: String, person: Int, style: GoogleReader.ItemStyle) async throws -> Response {
        let (cards, continuation) = try await page(form, stream: stream, person: person)
        return Self.json(GoogleReader.Contents(id: stream, title: title(of: stream), updated: Int64(Date().timeIntervalSince1970),
                                               items: items(cards, style: style), continuation: continuation))
    }

    /// A stream's page as Atom: each item's states and labels as categories of Google's
    /// scheme (`label="read"` is how a FeedHQ client learns an item is read).
    private func atomStream(_ form: FormFields, stream: String, person: Int, style: GoogleReader.ItemStyle) async throws -> Response {
        let (cards, continuation) = try await page(form, stream: stream, person: person)
        func date(_ seconds: Int64) -> String { RFC3339.string(from: Date(timeIntervalSince1970: Double(seconds))) }
        func category(_ term: String) -> String {
            let label = term.split(separator: "/").last.map(String.init) ?? term
            return #"<category term="\#(XMLText.escape(term))" scheme="http://www.google.com/reader/" label="\#(XMLText.escape(label))"/>"#
        }
        var xml = #"<?xml version="1.0" encoding="utf-8"?>"# + "\n"
            + #"<feed xmlns="http://www.w3.org/2005/Atom" xmlns:gr="http://www.google.com/schemas/reader/atom/">"# + "\n"
        xml += "<id>tag:google.com,2005:reader/\(XMLText.escape(stream))</id>\n<title>\(XMLText.escape(title(of: stream)))</title>\n"
        xml += "<updated>\(date(Int64(Date().timeIntervalSince1970)))</updated>\n"
        if let continuation { xml += "<gr:continuation>\(continuation)</gr:continuation>\n" }
        for item in items(cards, style: style) {
            xml += "<entry>\n<id>\(item.id)</id>\n<title>\(XMLText.escape(item.title))</title>\n"
            xml += "<published>\(date(item.published))</published>\n<updated>\(date(item.updated))</updated>\n"
            for link in item.alternate { xml += #"<link rel="alternate" href="\#(XMLText.escape(link.href))" type="text/html"/>"# + "\n" }
            for file in item.enclosure ?? [] {
                xml += #"<link rel="enclosure" href="\#(XMLText.escape(file.href))""#
                    + (file.type.map { #" type="\#(XMLText.escape($0))""# } ?? "") + (file.length.map { #" length="\#($0)""# } ?? "") + "/>\n"
            }
            for term in item.categories where term.hasPrefix("user/") { xml += category(term) + "\n" }
            for tag in item.categories where !tag.hasPrefix("user/") { xml += #"<category term="\#(XMLText.escape(tag))"/>"# + "\n" }
            if let author = item.author { xml += "<author><name>\(XMLText.escape(author))</name></author>\n" }
            xml += #"<summary type="html">\#(XMLText.escape(item.summary.content))</summary>"# + "\n"
            xml += #"<source gr:stream-id="\#(XMLText.escape(item.origin.streamId))"><id>tag:google.com,2005:reader/\#(XMLText.escape(item.origin.streamId))</id><title>\#(XMLText.escape(item.origin.title))</title></source>"#
            xml += "\n</entry>\n"
        }
        xml += "</feed>\n"
        return Response(status: .ok, headers: [.contentType: "application/atom+xml; charset=utf-8", .cacheControl: "no-store"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: xml)))
    }

    /// A stream's title: its source's name, else the feed's title.
    private func title(of stream: String) -> String {
        if case .feed(let id)? = GoogleReader.Stream(stream), let source = config.source(id: id) { return source.displayName }
        return config.feed.title
    }

    private func itemIDs(_ form: FormFields, person: Int) async throws -> Response {
        let (cards, continuation) = try await page(form, stream: form.get("s") ?? GoogleReader.readingList, person: person)
        let refs = cards.map { card, dates in
            GoogleReader.ItemRef(id: String(dates.number),
                                 timestampUsec: String(Int64((card.published ?? dates.firstSeen).timeIntervalSince1970 * 1_000_000)))
        }
        return Self.json(GoogleReader.ItemRefs(itemRefs: refs, continuation: continuation))
    }

    /// The numbers of the request's `i=` items, in either form, in the request's order.
    private func itemNumbers(_ form: FormFields) throws(APIError) -> [Int64] {
        let items = form.getAll("i")
        guard items.count <= 10_000 else { throw APIError(status: .badRequest, text: "at most 10000 items at once") }
        return items.compactMap(GoogleReader.number(ofItem:))
    }

    /// The card ids of the request's `i=` items; unknown ones are left out.
    private func cardIDs(_ form: FormFields, store: any CardStore) async throws -> [String] {
        let numbers = try itemNumbers(form)
        let found = try await store.ids(ofNumbers: numbers)
        return numbers.compactMap { found[$0] }
    }

    /// The `i=` items of the person's subscriptions, in the request's order, read in one
    /// query of the number index.
    private func itemContents(_ form: FormFields, person: Int, style: GoogleReader.ItemStyle) async throws -> Response {
        let store = try personStore(person)
        var seen = Set<Int64>()
        let numbers = try itemNumbers(form).filter { seen.insert($0).inserted }
        let kept = try await store.cards(numbered: .among(numbers), of: sources(of: .readingList), limit: numbers.count)
        let byNumber = Dictionary(kept.map { ($0.dates.number, $0) }, uniquingKeysWith: { first, _ in first })
        let cards = numbers.compactMap { byNumber[$0] }.map { ($0.card, $0.dates) }
        return Self.json(GoogleReader.Contents(id: GoogleReader.readingList, title: config.feed.title,
                                               updated: Int64(Date().timeIntervalSince1970), items: items(cards, style: style), continuation: nil))
    }

    /// `edit-tag`: `a=` adds and `r=` removes `…/read`, `…/starred` (and `…/kept-unread`,
    /// unread) on the `i=` items.
    private func editTag(_ form: FormFields, person: Int) async throws -> Response {
        let ids = try await cardIDs(form, store: try personStore(person))
        let personal = try personMarks(person)
        var marks: [ReadingMark] = []
        for tag in form.getAll("a") {
            switch tag {
            case GoogleReader.read: marks.append(.read)
            case GoogleReader.starred: marks.append(.star)
            case GoogleReader.keptUnread: marks.append(.unread)
            default: continue
            }
        }
        for tag in form.getAll("r") {
            switch tag {
            case GoogleReader.read: marks.append(.unread)
            case GoogleReader.starred: marks.append(.unstar)
            default: continue
            }
        }
        for mark in marks where !ids.isEmpty { _ = try await personal.mark(ids, mark, at: Date()) }
        return Self.text("OK")
    }

    /// `mark-all-as-read`: the stream `s`'s cards seen up to `ts` (microseconds; now without it).
    private func markAllAsRead(_ form: FormFields, person: Int) async throws -> Response {
        let store = try personStore(person)
        let personal = try personMarks(person)
        guard let text = form.get("s"), let stream = GoogleReader.Stream(text) else {
            throw APIError(status: .badRequest, text: "s= names the stream to mark read")
        }
        let upTo = form.get("ts").flatMap(Double.init).map { Date(timeIntervalSince1970: $0 / 1_000_000) } ?? Date()
        switch stream {
        case .read:
            break
        case .starred:
            // The starred cards from the store's marks, not every card read to find them.
            let sources = catalog.entries.map(\.source.id)
            let query = StoredPageQuery(sources: sources, order: .feed, descending: false, offset: 0, limit: 100_000, reading: .starred)
            let starred = try await store.page(query).cards
            _ = try await personal.mark(starred.filter { $0.dates.firstSeen <= upTo }.map(\.card.id), .read, at: Date())
        case .readingList, .feed, .label:
            let sources = try sources(of: stream)
            if !sources.isEmpty { _ = try await personal.markRead(seenBy: upTo, sources: sources, at: Date()) }
        }
        return Self.text("OK")
    }
}
