import AsyncHTTPClient
import FeedCore
import FeedFormats
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import Synchronization
import FeedSupport

/// The network: one AsyncHTTPClient shared by every source of a run, so connections
/// to one host are reused; gzip/deflate, at most 5 redirects, a body cap and a limit on
/// requests in flight per host. Call ``shutdown()`` once the run is over.
public final class LiveHTTPTransport: Sendable {
    /// `User-Agent` sent with every request.
    public static let userAgent = "aggregate/\(AggregateVersion.current)"
    /// Responses larger than this fail the source instead of filling memory, unless the
    /// request says otherwise (a source's `max_body`).
    public let maxBodyBytes: Int
    private let configuration: HTTPClient.Configuration
    /// Made on the first request: a warm run served from the cache starts no event loop.
    private let madeClient = Mutex<HTTPClient?>(nil)
    private let limiter: HostLimiter
    /// Which addresses requests and their redirects may reach.
    public let addresses: AddressPolicy

    public init(maxBodyBytes: Int = 20 * 1024 * 1024, perHostLimit: Int = 4, addresses: AddressPolicy = .any) {
        self.maxBodyBytes = maxBodyBytes
        self.limiter = HostLimiter(limit: perHostLimit)
        self.addresses = addresses
        var configuration = HTTPClient.Configuration(
            // Redirects are followed by ``send(_:timeout:)`` itself, so configured headers
            // (API keys) never travel to another origin.
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10)),
            // The size cap is applied per request to the decompressed body as it is
            // collected (`max_body` differs per source), so decompression itself is unbounded.
            decompression: .enabled(limit: .none))
        configuration.httpVersion = .automatic
        // Retries are ours (backoff, Retry-After, a budget); the pool's own reconnect
        // loop would hold an unreachable host until the deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        self.configuration = configuration
    }

    private var client: HTTPClient {
        madeClient.withLock { made in
            if let made { return made }
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            made = client
            return client
        }
    }

    public func shutdown() async {
        if let client = madeClient.withLock({ $0 }) { try? await client.shutdown() }
    }

    /// Redirects followed per request.
    static let maxRedirects = 5

    /// One GET with a deadline covering connect, headers, body and every redirect.
    /// Redirects are followed here: the source's configured headers go to its own origin
    /// (scheme, host and port) only, and are dropped on a redirect to any other.
    /// `addresses`: this request's policy, when stricter than the transport's (an address
    /// an upstream wrote, such as an article's link).
    public func send(_ request: FeedCore.HTTPRequest, timeout: Double, maxBody: Int? = nil, addresses: AddressPolicy? = nil) async throws -> HTTPResponse {
        let maxBody = maxBody ?? maxBodyBytes
        let addresses = addresses ?? self.addresses
        do {
            // The client's deadline covers the response head only; the race covers the
            // body too, so a slow drip cannot outlast the timeout.
            return try await withThrowingTaskGroup(of: HTTPResponse?.self) { group in
                group.addTask {
                    try await self.follow(request, maxBody: maxBody, addresses: addresses, deadline: .now() + .milliseconds(Int64(timeout * 1000)))
                }
                group.addTask {
                    try await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let response = first else {
                    throw HTTPClientError.deadlineExceeded
                }
                return response
            }
        } catch let error as SourceError {
            throw error
        } catch {
            throw describe(error, url: request.url, timeout: timeout, maxBody: maxBody)
        }
    }

    private func follow(_ request: FeedCore.HTTPRequest, maxBody: Int, addresses: AddressPolicy, deadline: NIODeadline) async throws -> HTTPResponse {
        let origin = Origin(request.url)
        var url = request.url
        var visited: Set<String> = [url.absoluteString]
        for _ in 0...Self.maxRedirects {
            let headers = Origin(url) == origin ? request.headers : [:]
            let response = try await fetch(url, headers: headers, maxBody: maxBody, addresses: addresses, deadline: deadline)
            guard [301, 302, 303, 307, 308].contains(response.status), let location = response.headers["location"] else {
                return HTTPResponse(status: response.status, headers: response.headers, body: response.body, url: url)
            }
            guard let next = URL(string: location, relativeTo: url)?.absoluteURL,
                  ["http", "https"].contains(next.scheme?.lowercased() ?? "") else {
                throw SourceError.transport(.badRedirect)
            }
            guard visited.insert(next.absoluteString).inserted else { throw SourceError.transport(.redirectLoop) }
            url = next
        }
        throw SourceError.transport(.tooManyRedirects(Self.maxRedirects))
    }

    private func fetch(_ url: URL, headers: [String: String], maxBody: Int, addresses: AddressPolicy, deadline: NIODeadline) async throws -> HTTPResponse {
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.headers.add(name: "User-Agent", value: Self.userAgent)
        outgoing.headers.add(name: "Accept", value: "application/json")
        outgoing.headers.add(name: "Accept-Encoding", value: "gzip, deflate")
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            outgoing.headers.replaceOrAdd(name: name, value: value)
        }
        let prepared = outgoing
        return try await limiter.withSlot(for: url.host ?? "") {
            // A restricted transport resolves the host itself, checks every address, and
            // connects to the one it checked (a client of its own whose resolver answers
            // that address): a name that resolves differently a moment later (DNS
            // rebinding) cannot move the connection.
            guard !addresses.allowsAll else { return try await self.execute(prepared, url: url, on: self.client, maxBody: maxBody, deadline: deadline) }
            let host = url.host ?? ""
            let address = try await addresses.checkedAddress(of: host)
            var configuration = self.configuration
            configuration.dnsOverride = [host: address]
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            do {
                let response = try await self.execute(prepared, url: url, on: client, maxBody: maxBody, deadline: deadline)
                try? await client.shutdown()
                return response
            } catch {
                try? await client.shutdown()
                throw error
            }
        }
    }

    private func execute(_ prepared: HTTPClientRequest, url: URL, on client: HTTPClient, maxBody: Int, deadline: NIODeadline) async throws -> HTTPResponse {
        let response = try await client.execute(prepared, deadline: deadline)
        let body = Data(buffer: try await response.body.collect(upTo: maxBody))
        var fields: [String: String] = [:]
        for header in response.headers {
            let name = header.name.lowercased()
            fields[name] = fields[name].map { "\($0), \(header.value)" } ?? header.value
        }
        return HTTPResponse(status: Int(response.status.code), headers: fields, body: body, url: url)
    }

    /// The HTTP client's errors as typed failures, by their types alone.
    private func describe(_ error: any Error, url: URL, timeout: Double, maxBody: Int) -> SourceError {
        Self.failure(error, timeout: timeout, maxBody: maxBody)
    }

    /// AsyncHTTPClient's and SwiftNIO's errors as typed failures, by their types alone;
    /// their descriptions say causes in words (`connection refused`), not type names.
    public static func failure(_ error: any Error, timeout: Double, maxBody: Int) -> SourceError {
        if error is NIOTooManyBytesError || error is NIOHTTPDecompression.DecompressionError {
            return .transport(.tooLarge(bytes: maxBody))
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout, .tlsHandshakeTimeout:
                return .timeout(seconds: timeout)
            case .redirectCycleDetected:
                return .transport(.redirectLoop)
            case .redirectLimitReached:
                return .transport(.tooManyRedirects(Self.maxRedirects))
            case .remoteConnectionClosed, .bodyLengthMismatch:
                return .transport(.closedEarly)
            default:
                return .transport(.other("\(error)"))
            }
        }
        if error is HTTPParserError { return .transport(.closedEarly) }
        if let error = error as? NIOConnectionError {
            if error.connectionErrors.isEmpty { return .transport(.dns) }
            let refused = error.connectionErrors.contains { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }
            return .transport(refused ? .refused : .unreachable)
        }
        if let error = error as? IOError {
            return .transport(error.errnoCode == ECONNREFUSED ? .refused : .unreachable)
        }
        if error is SocketAddressError { return .transport(.dns) }
        return .transport(.other("\(error)"))
    }
}

/// Scheme, host and port: where configured headers may go.
struct Origin: Equatable {
    let scheme: String
    let host: String
    let port: Int?

    init(_ url: URL) {
        scheme = url.scheme?.lowercased() ?? ""
        host = url.host?.lowercased() ?? ""
        port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil)
    }
}
