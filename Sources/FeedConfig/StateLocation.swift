import Foundation

/// Where `aggregate` keeps its state: a directory of SQLite files (one machine) or a
/// PostgreSQL database (shared by every host that names it). Chosen by `--state`,
/// `AGGREGATE_STATE` or the `state:` key of Sources.yml, in that order.
public enum StateLocation: Sendable, Equatable, CustomStringConvertible {
    /// A directory of SQLite files; with `cache`, the HTTP cache (`cache.sqlite` and its
    /// bodies) goes there instead: the default keeps what must not be lost under
    /// `$XDG_STATE_HOME` and the disposable cache under `$XDG_CACHE_HOME`.
    case directory(URL, cache: URL? = nil)
    case postgres(PostgresLocation)

    /// Why a `--state` value is not a location.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case unsupportedScheme(String)
        case badPostgresURL(String)

        public var description: String {
            switch self {
            case .unsupportedScheme(let scheme):
                "\(scheme):// is not a state store: give a directory path (SQLite) or postgres://user:password@host:5432/database"
            case .badPostgresURL(let reason): reason
            }
        }
    }

    /// A directory path, `file:///path`, or `postgres://` / `postgresql://` URL.
    public init(parsing text: String, relativeTo base: URL? = nil) throws(Problem) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let schemeEnd = trimmed.range(of: "://") {
            let scheme = trimmed[..<schemeEnd.lowerBound].lowercased()
            switch scheme {
            case "postgres", "postgresql": self = .postgres(try PostgresLocation(parsing: trimmed))
            case "file": self = .directory(URL(fileURLWithPath: String(trimmed[schemeEnd.upperBound...])))
            default: throw .unsupportedScheme(String(trimmed[..<schemeEnd.lowerBound]))
            }
            return
        }
        if let base, !trimmed.hasPrefix("/") {
            self = .directory(base.appendingPathComponent(trimmed).standardizedFileURL)
        } else {
            self = .directory(URL(fileURLWithPath: trimmed))
        }
    }

    /// For messages: a path, or the URL with its password replaced by `***`.
    public var description: String {
        switch self {
        case .directory(let url, _): url.path
        case .postgres(let location): location.description
        }
    }
}

/// A PostgreSQL database named by a URL. The password never leaves this value but to
/// the connection: ``description`` redacts it.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    public enum TLSMode: String, Sendable {
        case disable, prefer, require
    }

    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var tls: TLSMode

    /// `postgres://user:password@host:port/database?sslmode=disable|prefer|require`.
    public init(parsing text: String) throws(StateLocation.Problem) {
        guard let components = URLComponents(string: text) else {
            throw .badPostgresURL("the state URL is not a valid URL: write it as postgres://user:password@host:5432/database (percent-encode special characters in the password)")
        }
        guard let host = components.host, !host.isEmpty else {
            throw .badPostgresURL("the state URL names no host: write it as postgres://user:password@host:5432/database")
        }
        guard let user = components.user, !user.isEmpty else {
            throw .badPostgresURL("the state URL names no user: write it as postgres://user:password@\(host)/database")
        }
        self.host = host
        port = components.port ?? 5432
        self.user = user
        password = components.password
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = path.isEmpty ? user : path
        var tls = TLSMode.prefer
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                switch item.value ?? "" {
                case "disable": tls = .disable
                case "allow", "prefer": tls = .prefer
                case "require", "verify-ca", "verify-full": tls = .require
                default: throw .badPostgresURL("sslmode=\(item.value ?? "") is not one of disable, prefer, require")
                }
            default:
                throw .badPostgresURL("the state URL's parameter \(item.name) is not known (known: sslmode)")
            }
        }
        self.tls = tls
    }

    public var description: String {
        let credentials = password == nil ? user : "\(user):***"
        let query = tls == .prefer ? "" : "?sslmode=\(tls.rawValue)"
        return "postgres://\(credentials)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)\(query)"
    }
}

extension StateLocation {
    /// The state without `--state`: accounts, marks, the digests' memory and the card store
    /// in `$XDG_STATE_HOME/aggregate` (`~/.local/state/aggregate`), where backups look and
    /// cache cleaners do not; the HTTP cache in `$XDG_CACHE_HOME/aggregate` (`~/.cache/aggregate`).
    public static func defaultLocation(environment: [String: String] = ProcessInfo.processInfo.environment) -> StateLocation {
        .directory(defaultDirectory(environment: environment), cache: defaultCacheDirectory(environment: environment))
    }

    /// `$XDG_STATE_HOME/aggregate` (`~/.local/state/aggregate` when unset).
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let home = environment["HOME"] ?? NSHomeDirectory()
        let stateHome = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "\(home)/.local/state"
        return URL(fileURLWithPath: stateHome).appendingPathComponent("aggregate")
    }

    /// `$XDG_CACHE_HOME/aggregate` (`~/.cache/aggregate` when unset): the HTTP cache, and
    /// where the state lived before it moved (the first run moves it).
    public static func defaultCacheDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let home = environment["HOME"] ?? NSHomeDirectory()
        let cacheHome = environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "\(home)/.cache"
        return URL(fileURLWithPath: cacheHome).appendingPathComponent("aggregate")
    }
}
