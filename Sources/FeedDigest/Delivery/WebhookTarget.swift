import AsyncHTTPClient
import FeedConfig
import FeedCore
import FeedEngine
import FeedFormats
import FeedSupport
import Foundation
import NIOCore
import NIOFoundationCompat

/// `{webhook: URL, style: json | slack | discord | ntfy, headers: {…}}`: the report POSTed
/// with an `Idempotency-Key` (the report's id). Only a 2xx answer to that POST is
/// delivered, whatever its body (which is not read). A 5xx, 429, 408 or no answer is tried
/// again within the run (after 0.5 s, then 1 s, or the `Retry-After` the receiver asks
/// for, up to 10 s), and next run if it still fails; any other 4xx is reported with the
/// first line of the answer and tried again next run. No redirect is followed: a 3xx is a
/// failure naming its `Location` (following one would send the configured secrets and the
/// report to another host, and a 302 turns the POST into a GET that delivers nothing).
/// A refused connection fails at once, not after the pool's reconnect loop.
struct WebhookTarget: DeliveryTarget {
    let key: String
    let formerKeys: [String]
    let name: String
    /// As written: `${VAR}` is expanded when delivering.
    let url: String
    let style: DeliveryTargetConfig.WebhookStyle
    let headers: [String: String]
    let environment: [String: String]

    static let attempts = 3
    static let timeout = TimeAmount.seconds(10)
    static let longestWait = 10.0
    /// How much of an answer that is not a 2xx is read, for its first line.
    static let answerBytesRead = 2048

    /// The client webhooks are POSTed with: no redirects, no reconnect loop.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5)))
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    func payload(for report: DigestReport, text: String) -> DeliveryPayload {
        WebhookPayloads.payload(style, report: report, text: text)
    }

    func deliver(_ payload: DeliveryPayload, reportID: String) async throws(DeliveryFailure) {
        let target: URL
        var request: HTTPClientRequest
        do {
            let expanded = try EnvironmentInterpolation.expand(url, environment: environment)
            guard let parsed = ConfigMapReader.httpURL(expanded) else { throw DeliveryFailure.permanent("the URL is not an absolute http(s) URL") }
            target = parsed
            request = HTTPClientRequest(url: expanded)
            request.method = .POST
            for (name, value) in payload.headers { request.headers.replaceOrAdd(name: name, value: value) }
            for (name, value) in headers {
                // `${VAR}` is expanded only now, so its value is checked only now: a CR or LF
                // from the environment must not split the request (or a message).
                let expanded = try EnvironmentInterpolation.expand(value, environment: environment)
                if let problem = HeaderRules.problem(name: name, value: expanded) { throw DeliveryFailure.permanent("header \(name): \(problem)") }
                request.headers.replaceOrAdd(name: name, value: expanded)
            }
        } catch let failure as DeliveryFailure {
            throw failure
        } catch EnvironmentInterpolation.Failure.undefined(let variable) {
            throw .permanent("environment variable \(variable) is not set")
        } catch {
            throw .permanent("malformed ${…} in its URL or headers")
        }
        request.headers.replaceOrAdd(name: "Idempotency-Key", value: reportID)
        request.headers.replaceOrAdd(name: "User-Agent", value: "aggregate/\(AggregateVersion.current)")
        var last = DeliveryFailure.temporary("not sent")
        for attempt in 1...Self.attempts {
            request.body = .bytes(ByteBuffer(string: payload.body))
            var wait = attempt == 1 ? 0.5 : 1.0
            do {
                let response = try await Self.client.execute(request, timeout: Self.timeout)
                let status = Int(response.status.code)
                // Delivered: what the receiver says beside its 2xx is not needed (a large
                // answer must not turn a delivered report into one posted again each run).
                if (200..<300).contains(status) { return }
                if (300..<400).contains(status) {
                    let location = response.headers.first(name: "Location").map { " to \(Redaction.url($0))" } ?? ""
                    throw DeliveryFailure.permanent("HTTP \(status): it redirects\(location), and delivery follows no redirects; "
                        + "write the address it redirects to in deliver: (\(target.redactedString))")
                }
                let head = try await Self.firstBytes(of: response.body, limit: Self.answerBytesRead)
                let line = String(decoding: head, as: UTF8.self).split(whereSeparator: \.isNewline).first.map { ": \($0.prefix(200))" } ?? ""
                let said = "HTTP \(status)\(line) (\(target.redactedString))"
                guard status >= 500 || status == 429 || status == 408 else { throw DeliveryFailure.permanent(said) }
                last = .temporary(said)
                if let seconds = response.headers.first(name: "Retry-After").flatMap(Double.init) { wait = min(max(seconds, 0), Self.longestWait) }
            } catch let failure as DeliveryFailure {
                throw failure
            } catch {
                let cause = LiveHTTPTransport.failure(error, timeout: 10, maxBody: Self.answerBytesRead)
                last = .temporary("\(cause) (\(target.redactedString))")
            }
            if attempt < Self.attempts { try? await Task.sleep(for: .seconds(wait)) }
        }
        throw last
    }

    /// The first `limit` bytes of an answer; the rest is not read.
    static func firstBytes(of body: HTTPClientResponse.Body, limit: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in body {
            bytes += chunk.readableBytesView.prefix(limit - bytes.count)
            if bytes.count >= limit { break }
        }
        return bytes
    }
}

/// The bodies each webhook style posts.
enum WebhookPayloads {
    static func payload(_ style: DeliveryTargetConfig.WebhookStyle, report: DigestReport, text: String) -> DeliveryPayload {
        let heading = "\(report.name): \(report.countsText)"
        switch style {
        case .json:
            return DeliveryPayload(body: json(report, text: text), headers: ["Content-Type": "application/json"])
        case .slack:
            // Slack's mrkdwn: &, < and > escaped; links as <url|title>.
            func escape(_ text: String) -> String {
                text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            }
            let lines = report.items.map { item in
                let title = item.card.url.map { "<\($0.absoluteString)|\(escape(item.card.title))>" } ?? escape(item.card.title)
                return "• \(escape(item.changeText)): \(title)" + (item.priceText.isEmpty ? "" : " — \(escape(item.priceText))")
            }
            return DeliveryPayload(body: object(["text": .string((["*\(escape(heading))*"] + lines + unavailable(report)).joined(separator: "\n"))]),
                                   headers: ["Content-Type": "application/json"])
        case .discord:
            // Discord takes 2,000 characters of Markdown: later items are counted, not cut.
            var content = "**\(heading)**"
            for (index, item) in report.items.enumerated() {
                let title = item.card.url.map { "[\(item.card.title)](<\($0.absoluteString)>)" } ?? item.card.title
                let line = "\n- \(item.changeText): \(title)" + (item.priceText.isEmpty ? "" : " — \(item.priceText)")
                let more = "\n… and \(report.items.count - index) more"
                if content.count + line.count + more.count > 2000 { content += more; break }
                content += line
            }
            return DeliveryPayload(body: object(["content": .string(content)]), headers: ["Content-Type": "application/json"])
        case .ntfy:
            // ntfy: the message is the body; the title and the link opened on a tap are headers.
            let lines = report.items.map { item in
                "\(item.changeText): \(item.card.title)" + (item.priceText.isEmpty ? "" : " — \(item.priceText)")
            }
            var headers = ["Title": headerText(heading), "Content-Type": "text/plain; charset=utf-8"]
            if let click = report.items.first(where: { $0.card.url != nil })?.card.url { headers["Click"] = click.absoluteString }
            return DeliveryPayload(body: (lines + unavailable(report)).joined(separator: "\n"), headers: headers)
        }
    }

    /// Our own shape (docs/digests.md): the digest, its date, the report as text, and each
    /// item with its change and card.
    static func json(_ report: DigestReport, text: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let items: [JSONValue] = report.items.map { item in
            var fields: [String: JSONValue] = ["change": .string(item.change.rawValue)]
            if let data = try? encoder.encode(item.card), let card = try? JSONDecoder().decode(JSONValue.self, from: data) { fields["card"] = card }
            if let condition = item.condition { fields["condition"] = .string(condition) }
            if let previous = item.previousPrice { fields["previous_price"] = .number(previous) }
            return .object(fields)
        }
        return object([
            "digest": .string(report.name), "date": .string(RFC3339.string(from: report.date)), "summary": .string(report.countsText),
            "text": .string(text), "items": .array(items),
            "unavailable": .array(report.unavailable.map { .object(["source": .string($0.source), "reason": .string($0.reason)]) }),
        ])
    }

    static func unavailable(_ report: DigestReport) -> [String] {
        report.unavailable.map { "Not checked: \($0.source) — \($0.reason)" }
    }

    static func object(_ fields: [String: JSONValue]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(JSONValue.object(fields))) ?? Data(), as: UTF8.self)
    }

    /// A header value: ASCII as it is, anything else as an RFC 2047 encoded word (ntfy reads both).
    static func headerText(_ text: String) -> String {
        text.allSatisfy { $0.isASCII && !$0.isNewline } ? text : "=?UTF-8?B?\(Data(text.utf8).base64EncodedString())?="
    }
}
