import FeedCore
import Foundation

/// One entry of a digest's `deliver:`: where its report goes.
public struct DeliveryTargetConfig: Sendable {
    /// The payload a webhook receives.
    public enum WebhookStyle: String, Sendable, CaseIterable {
        /// Our own JSON shape (docs/digests.md).
        case json
        /// `{"text": …}` with `<url|title>` links (Slack and Mattermost incoming webhooks).
        case slack
        /// `{"content": …}` with Markdown links (Discord webhooks).
        case discord
        /// The text as the body, `Title` and `Click` headers (an ntfy topic URL).
        case ntfy
    }

    public enum Kind: Sendable {
        /// POST to the URL as written (`${VAR}` expanded when delivering, so a digest's
        /// secret is needed only by the runs that deliver).
        case webhook(url: String, style: WebhookStyle, headers: [String: String])
        /// The report piped to a program: argv, no shell.
        case exec(command: [String], timeout: Double)
        /// The report written to a file (absolute, or relative to Sources.yml).
        case file(path: String)
    }

    public var kind: Kind
    public var location: ConfigLocation

    public init(_ kind: Kind, location: ConfigLocation = ConfigLocation(file: "Sources.yml", line: 1, column: 1)) {
        self.kind = kind
        self.location = location
    }

    public static let defaultExecTimeout = 30.0

    /// The key as earlier versions stored it: the target exactly as written.
    public var writtenKey: String {
        switch kind {
        case .webhook(let url, let style, _): "webhook \(url)" + (style == .json ? "" : " (\(style.rawValue))")
        case .exec(let command, _): "exec \(command.joined(separator: " "))"
        case .file(let path): "file \(path)"
        }
    }

    /// How messages name the target: a written `${VAR}` stays as it is; a URL written out
    /// is redacted.
    public var name: String {
        switch kind {
        case .webhook(let url, _, _):
            if url.contains("${") { return "webhook \(url)" }
            return "webhook \(URL(string: url)?.redactedString ?? url)"
        case .exec(let command, _):
            return "exec \(command.joined(separator: " "))"
        case .file(let path):
            return "file \(path)"
        }
    }

    /// Reads one entry of `deliver:`.
    static func read(_ entry: ConfigMapReader, directory: String) -> DeliveryTargetConfig? {
        let kinds = ["webhook", "exec", "file"].filter { entry.node($0) != nil }
        guard kinds.count == 1, let kind = kinds.first else {
            entry.report(nil, kinds.isEmpty
                ? "needs one of webhook: URL, exec: [program, args…] or file: PATH"
                : "gives \(kinds.joined(separator: " and ")): write one target per entry")
            return nil
        }
        let before = entry.issues.issues.count
        switch kind {
        case "webhook":
            entry.rejectUnknownKeys(["webhook", "style", "headers"])
            guard let url = entry.string("webhook") else { return nil }
            if !url.contains("${"), ConfigMapReader.httpURL(url) == nil {
                entry.report("webhook", "expected an absolute http(s) URL (or ${VAR} holding one), got \"\(url)\"")
            }
            let style = entry.choice("style", from: WebhookStyle.allCases.map(\.rawValue)).flatMap(WebhookStyle.init(rawValue:)) ?? .json
            var headers: [String: String] = [:]
            if let map = entry.map("headers") {
                for header in map.entries {
                    guard let value = map.string(header.key, allowEmpty: true) else { continue }
                    // The value may hold `${VAR}`: checked as written; expanded when delivering.
                    if let problem = HeaderRules.problem(name: header.key, value: value) {
                        map.report(header.key, problem, at: header.keyLocation)
                    }
                    headers[header.key] = value
                }
            }
            guard entry.issues.issues.count == before else { return nil }
            return DeliveryTargetConfig(.webhook(url: url, style: style, headers: headers), location: entry.location)
        case "exec":
            entry.rejectUnknownKeys(["exec", "timeout"])
            var command: [String] = []
            for (path, node) in entry.list("exec") ?? [] {
                guard case .scalar(let scalar) = node.value, scalar.kind != .null else {
                    entry.issues.report(ConfigIssue(location: node.location, path: path, message: "expected a word of the command, got \(node.kindDescription)"))
                    continue
                }
                command.append(scalar.text)
            }
            if command.isEmpty, entry.issues.issues.count == before {
                entry.report("exec", "needs the program and its arguments, like [sendmail, -t]")
            }
            let timeout = entry.seconds("timeout", in: 0.1...3600) ?? defaultExecTimeout
            guard entry.issues.issues.count == before else { return nil }
            return DeliveryTargetConfig(.exec(command: command, timeout: timeout), location: entry.location)
        default:
            entry.rejectUnknownKeys(["file"])
            guard let path = entry.string("file") else { return nil }
            let resolved = path.hasPrefix("/") ? path : URL(fileURLWithPath: directory).appendingPathComponent(path).path
            guard entry.issues.issues.count == before else { return nil }
            return DeliveryTargetConfig(.file(path: resolved), location: entry.location)
        }
    }
}
