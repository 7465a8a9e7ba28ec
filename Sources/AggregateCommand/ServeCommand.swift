import ArgumentParser
import FeedCore
import FeedEngine
import FeedServer
import ServeAccess
import ServeHTTP
import FeedState
import FeedSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `aggregate serve`: the merged feed over HTTP for feed readers.
struct ServeCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the merged feed over HTTP: /feed.atom, /feed.json, /feed.rss, /feed.jsonl, /cards/ID, /sources, /healthz.",
        discussion: """
            Feed routes take the command line's filters as query parameters: source (repeatable), kind, q, sort, \
            order, page, per_page. Upstreams are read through the same cache and fallbacks as the command line, \
            and refreshed in the background before their cache_ttl (or refresh:) runs out: readers are answered \
            from the cache and never wait on an upstream while a copy exists. Rendered feeds are kept in memory \
            until a source they read changes. Stops on SIGTERM or SIGINT after the \
            requests in flight. One access-log line per request on stderr.
            """)

    @Option(help: "Address to listen on (127.0.0.1: this machine only).")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on; 0 picks a free one (printed on start).")
    var port = 8080

    @Option(help: "Connections held at once; one more is answered 503 and closed.")
    var maxConnections = ConnectionLimits.defaults.maxConnections

    @Option(help: "Requests worked on at once; others wait their turn (default: two per processor, at least 4).")
    var maxActiveRequests = ConnectionLimits.defaultActiveRequests

    @Option(help: ArgumentHelp("Most kept cards a view filtered by kind or words may read (it reads every card of its sources; more is answered 422).",
                               valueName: "cards"))
    var maxFilteredCards = FeedServer.defaultMaxFilteredCards

    @Option(help: "Seconds a new connection has to send its first request head.")
    var headerTimeout = 10.0

    @Option(help: "Seconds a kept-alive connection may wait for its next request.")
    var idleTimeout = 30.0

    @Option(help: "Seconds a request's body has to arrive, from its head, plus one for each 64 KiB it sends; a slower one is answered 408 and closed.")
    var bodyTimeout = 10.0

    @Flag(inversion: .prefixedNo, help: "Refresh every source in the background before its cache_ttl (or refresh:) runs out, and answer readers from the cache; with --no-background-refresh a reader's request fetches what is stale, as the command line does.")
    var backgroundRefresh = true

    @Flag(inversion: .prefixedNo, help: "One line per request on stderr (method, path, status, time).")
    var accessLog = true

    @Flag(help: "Serve /metrics in the Prometheus text format (requests, latency, response cache, refreshes, data age).")
    var metrics = false

    @Option(help: "The most memory kept for rendered responses (e.g. 64MiB); the least recently used go first.")
    var responseCache = "64MiB"

    @Flag(help: "Serve anyone who can reach the port, read-only (no marks, no route but GET and HEAD), with no user configured.")
    var noAuth = false

    @Option(help: ArgumentHelp("The address people reach the server at (https://… makes the session cookie Secure).", valueName: "url"))
    var baseURL: String?

    @Option(help: ArgumentHelp("The header a reverse proxy that signs people in names the user in (e.g. X-Forwarded-User); believed from --trusted-proxy only.", valueName: "header"))
    var authProxyHeader: String?

    @Option(help: ArgumentHelp("The address or CIDR block (at most /8, or /32 of IPv6) of a reverse proxy whose Forwarded or X-Forwarded-For header names the client, and whose --auth-proxy-header is believed (repeatable).", valueName: "cidr"))
    var trustedProxy: [String] = []

    @Flag(help: "Let people subscribe (through the Google Reader API) to feeds on loopback, private and other non-public addresses; by default serve fetches a URL a person sends from public addresses only.")
    var allowPrivateFeeds = false

    @Option(help: ArgumentHelp("Let people subscribe to feeds in this non-public block too, such as an intranet's 10.1.2.0/24 (repeatable).", valueName: "cidr"))
    var allowPrivateFeed: [String] = []

    @Option(help: ArgumentHelp("Serve /metrics to clients other than this machine that send this token (Authorization: Bearer).", valueName: "token"))
    var metricsToken: String?

    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard let bytes = ByteSize.parse(responseCache), (1 << 20...(16 << 30)).contains(bytes) else {
            throw ValidationError("--response-cache takes a size from 1MiB to 16GiB, such as 64MiB, got \(responseCache)")
        }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be between 0 and 65535, got \(port)") }
        guard (1...100_000).contains(maxConnections) else {
            throw ValidationError("--max-connections must be between 1 and 100000, got \(maxConnections)")
        }
        guard (1...10_000).contains(maxActiveRequests) else {
            throw ValidationError("--max-active-requests must be between 1 and 10000, got \(maxActiveRequests)")
        }
        guard maxFilteredCards >= 0 else { throw ValidationError("--max-filtered-cards must be 0 or more, got \(maxFilteredCards)") }
        for (name, seconds) in [("--header-timeout", headerTimeout), ("--idle-timeout", idleTimeout), ("--body-timeout", bodyTimeout)]
        where !(0.1...3600).contains(seconds) {
            throw ValidationError("\(name) must be between 0.1 and 3600 seconds, got \(seconds)")
        }
        if let baseURL {
            guard let url = URL(string: baseURL), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
                throw ValidationError("--base-url takes an http:// or https:// address such as https://feeds.example.org, got \(baseURL)")
            }
        }
        for block in trustedProxy {
            guard let range = IPRange(block) else {
                throw ValidationError("--trusted-proxy takes an address or CIDR block such as 10.0.0.0/24 or ::1, got \(block)")
            }
            if let problem = FeedServer.problem(trusting: range) { throw ValidationError(problem) }
        }
        for block in allowPrivateFeed where IPRange(block) == nil {
            throw ValidationError("--allow-private-feed takes an address or CIDR block such as 10.1.2.0/24, got \(block)")
        }
        if let authProxyHeader {
            guard !authProxyHeader.isEmpty, authProxyHeader.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
                throw ValidationError("--auth-proxy-header takes a header name such as X-Forwarded-User, got \(authProxyHeader)")
            }
            guard !trustedProxy.isEmpty else {
                throw ValidationError("--auth-proxy-header needs --trusted-proxy: the addresses of the proxy whose header is believed")
            }
        }
        if let metricsToken, metricsToken.count < 16 {
            throw ValidationError("--metrics-token needs 16 characters at least (e.g. from `openssl rand -hex 32`)")
        }
    }

    /// Whether cookies carry `Secure`: the server is reached over https.
    var secureCookies: Bool { baseURL?.lowercased().hasPrefix("https://") ?? false }

    /// Who may use the server: accounts when there are any; else this machine only, until
    /// the first account is added, or anyone read-only with --no-auth. Nil (after saying
    /// why) when it must not start.
    func accessPolicy(_ state: EngineState?) async -> AccessPolicy? {
        if noAuth { return .readOnly }
        var hasAccounts = false
        if let state {
            await RolesUpgrade.say(state.accounts)
            do {
                hasAccounts = try await !state.accounts.accounts().isEmpty
            } catch {
                Terminal.writeError("aggregate: cannot read the accounts, so serve does not start: \(PlainWords.describe(error))")
                return nil
            }
        }
        if hasAccounts, let state {
            return .accounts(AccountAccess(store: state.accounts, secureCookies: secureCookies, proxyHeader: authProxyHeader))
        }
        let reachedAt = baseURL.flatMap { URL(string: $0)?.host }.map { $0.hasPrefix("[") ? String($0.dropFirst().dropLast()) : $0 }
        guard IPRange.isLoopbackHost(host), reachedAt.map(IPRange.isLoopbackHost) ?? true else {
            let how = IPRange.isLoopbackHost(host) ? "--base-url \(baseURL ?? "")" : "--host \(host)"
            Terminal.writeError("""
                aggregate: serve \(how) would let anyone who reaches it read every feed, and no user is set up. \
                Add one (`aggregate user add NAME`; people then sign in), or pass --no-auth to serve the feeds read-only to anyone.
                """)
            return nil
        }
        if authProxyHeader != nil { Terminal.writeError("aggregate: --auth-proxy-header has no effect without users (`aggregate user add NAME`)") }
        guard let state else { return .open }
        // This machine's until the first `aggregate user add`, which closes it at once.
        return .accounts(AccountAccess(store: state.accounts, secureCookies: secureCookies, openUntilFirstAccount: true))
    }

    /// What subscribing through `serve` fetches with: public addresses only, unless
    /// the owner allows private ones.
    func subscriptionTransport(shared: LiveHTTPTransport?) -> LiveHTTPTransport? {
        guard let shared else { return nil }
        if allowPrivateFeeds { return shared }
        return LiveHTTPTransport(maxBodyBytes: shared.maxBodyBytes, addresses: .publicOnly(alsoAllowing: allowPrivateFeed.compactMap(IPRange.init)))
    }

    static func words(_ access: AccessPolicy) -> String {
        switch access {
        case .open: ""
        case .readOnly: "; read-only, to anyone (--no-auth)"
        case .accounts(let accounts) where accounts.openUntilFirstAccount: ""
        case .accounts: "; people sign in (aggregate user list)"
        }
    }

    /// Room for `--max-connections` sockets: the soft limit on open files (often 1,024)
    /// is raised towards the hard one, as servers do; never lowered. Returns the limit now
    /// in force.
    private func allowOpenFiles() -> Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        let wanted = rlim_t(maxConnections + ConnectionLimits.reservedDescriptors)
        if limit.rlim_cur < wanted {
            limit.rlim_cur = min(wanted, limit.rlim_max)
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return limit.rlim_cur > rlim_t(Int.max) ? nil : Int(limit.rlim_cur)
    }

    func run(in context: CommandContext) async throws {
        // Connections are held below the descriptor limit, with room for upstream sockets,
        // the state, and the runtime's own: out of descriptors, the runtime's timers
        // cannot be made, and libdispatch traps rather than failing.
        var connections = maxConnections
        if let files = allowOpenFiles(), case let fitting = ConnectionLimits.connections(fitting: files), fitting < connections {
            connections = fitting
            Terminal.writeError("aggregate: serving at most \(fitting) connections: the process may open \(files) files (raise `ulimit -n` for more)")
        }
        let host = host
        try await common.withServeRunners(context.registry, background: backgroundRefresh) { runner, refresher, config, state in
            guard let access = await accessPolicy(state) else { throw ExitStatus.usage.code }
            let limits = ConnectionLimits(maxConnections: connections, activeRequests: maxActiveRequests, headerTimeout: .milliseconds(Int(headerTimeout * 1000)),
                                          idleTimeout: .milliseconds(Int(idleTimeout * 1000)), bodyTimeout: .milliseconds(Int(bodyTimeout * 1000)))
            let server = FeedServer(runner: runner, refresher: refresher, config: config, state: state, host: host, port: port,
                                    limits: limits, metrics: metrics, responseCacheBytes: ByteSize.parse(responseCache) ?? (64 << 20),
                                    logsRequests: accessLog, access: access, trustedProxies: trustedProxy.compactMap(IPRange.init),
                                    metricsToken: metricsToken, reachedAt: baseURL.flatMap { URL(string: $0) }, maxFilteredCards: maxFilteredCards,
                                    reload: common.configReload(context.registry, http: subscriptionTransport(shared: (runner.transports as? StandardTransports)?.live)),
                                    accessLog: { Terminal.writeError($0) })
            do {
                try await server.run { bound in
                    Terminal.writeError("aggregate: serving \(config.sources.filter(\.enabled).count) sources on http://\(host):\(bound)/ (feeds: /feed.atom /feed.json /feed.rss /feed.jsonl)\(Self.words(access))")
                }
            } catch {
                Terminal.writeError("aggregate: cannot serve on \(host):\(port): \(PlainWords.describe(error))")
                throw ExitStatus.failed.code
            }
            Terminal.writeError("aggregate: stopped")
        }
    }
}
