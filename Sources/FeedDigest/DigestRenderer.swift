import FeedConfig
import FeedCore
import FeedEngine
import FeedFormats
import Foundation
import HTMLTemplates
import Mustache

/// Renders a ``DigestReport`` in one format, or through a Mustache template.
public enum DigestRenderer {
    public static func render(_ report: DigestReport, format: DigestConfig.Format, feed: FeedInfo = FeedInfo()) -> String {
        if let cardFormat = format.cardFormat {
            var info = feed
            info.title = "\(feed.title): \(report.name)"
            return CardFormats.render(FeedDocument(cards: report.items.map(\.card), info: info), as: cardFormat)
        }
        switch format {
        case .markdown: return markdown(report)
        case .text: return text(report)
        case .html: return html(report)
        default: return jsonl(report)
        }
    }

    static func markdown(_ report: DigestReport) -> String {
        func escape(_ text: String) -> String {
            text.reduce(into: "") { out, character in
                if "\\[]*_`<>#".contains(character) { out.append("\\") }
                out.append(character)
            }
        }
        var lines = ["# \(escape(report.name)): \(report.countsText)", "", "_\(report.dateText)_"]
        for (source, items) in report.sections {
            lines += ["", "## \(escape(source))", ""]
            for item in items {
                let title = item.card.url.map { "[\(escape(item.card.title))](\($0.absoluteString))" } ?? escape(item.card.title)
                let price = item.priceText.isEmpty ? "" : " — \(item.priceText)"
                lines.append("- **\(item.changeText):** \(title)\(price)")
            }
        }
        if !report.unavailable.isEmpty {
            lines += ["", "---", ""] + report.unavailable.map { "Not checked: **\(escape($0.source))** — \(escape($0.reason))" }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func text(_ report: DigestReport) -> String {
        var lines = ["\(report.name): \(report.countsText) (\(report.dateText))"]
        for (source, items) in report.sections {
            lines += ["", source]
            for item in items {
                var line = "  \(item.changeText.lowercased()): \(item.card.title)"
                if !item.priceText.isEmpty { line += " — \(item.priceText)" }
                if let url = item.card.url { line += " <\(url.absoluteString)>" }
                lines.append(line)
            }
        }
        if !report.unavailable.isEmpty {
            lines += [""] + report.unavailable.map { "Not checked: \($0.source) — \($0.reason)" }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The `html` format: the built-in template over the same context a `template:` sees.
    static func html(_ report: DigestReport) -> String {
        htmlTemplate?.render(context(report)) ?? text(report)
    }

    /// `Templates/digest.html.mustache`, compiled into the binary (the digest tests render
    /// it). swift-mustache escapes every `{{value}}` for HTML: the one HTML escaper.
    private static let htmlTemplate = try? HTMLTemplate.parse(String(decoding: PackageResources.digest_html_mustache, as: UTF8.self))

    /// The cards as JSON Lines, each with `change` and, for price changes, `previous_price`.
    static func jsonl(_ report: DigestReport) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return report.items.map { item in
            guard let data = try? encoder.encode(item.card),
                  case .object(var fields) = try? JSONDecoder().decode(JSONValue.self, from: data) else { return "" }
            fields["change"] = .string(item.change.rawValue)
            if let previous = item.previousPrice { fields["previous_price"] = .number(previous) }
            if let condition = item.condition { fields["condition"] = .string(condition) }
            return String(decoding: (try? encoder.encode(fields)) ?? Data(), as: UTF8.self) + "\n"
        }.joined()
    }

    /// The context a `template:` sees (documented in docs/digests.md).
    static func context(_ report: DigestReport) -> [String: Any] {
        func item(_ item: DigestItem) -> [String: Any] {
            var fields: [String: Any] = [
                "id": item.card.id, "source": item.card.source, "title": item.card.title, "change": item.change.rawValue,
                "change_text": item.changeText, "price": item.card.price?.label ?? "", "price_text": item.priceText,
                "has_price": !item.priceText.isEmpty,
                "is_new": item.change == .new, "is_price_drop": item.change == .priceDrop,
                "is_price_rise": item.change == .priceRise, "is_removed": item.change == .removed,
                "is_alert": item.change == .alert,
            ]
            if let condition = item.condition { fields["condition"] = condition }
            if let url = item.card.url { fields["url"] = url.absoluteString }
            if let summary = item.card.summary { fields["summary"] = summary }
            if let previous = item.previousPrice { fields["previous_price"] = Money.format(previous, currency: item.card.price?.currency) }
            if let percent = item.percent { fields["percent"] = percent }
            return fields
        }
        return [
            "name": report.name, "date": report.dateText, "counts_text": report.countsText, "total": report.items.count,
            "counts": ["new": report.count(.new), "price_drop": report.count(.priceDrop),
                       "price_rise": report.count(.priceRise), "removed": report.count(.removed), "alert": report.count(.alert)],
            "sources": report.sections.map { ["id": $0.source, "items": $0.items.map(item)] as [String: Any] },
            "unavailable": report.unavailable.map { ["id": $0.source, "reason": $0.reason] },
            "has_unavailable": !report.unavailable.isEmpty,
        ]
    }
}

/// A `template:` file, parsed once; parse errors name the file, line and column.
public struct DigestTemplate: Sendable {
    let template: MustacheTemplate

    public init(path: String) throws(DigestTemplateError) {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw DigestTemplateError(description: "\(path): cannot read the template")
        }
        do {
            template = try HTMLTemplate.parse(text)
        } catch let error as MustacheTemplate.ParserError {
            // The line in the file: the escaping's pragma is a line before it (HTMLTemplate).
            let line = max(1, error.context.lineNumber - HTMLTemplate.lineShift)
            throw DigestTemplateError(description: "\(path):\(line):\(error.context.columnNumber): template error: \(Self.explain(error.error))")
        } catch {
            throw DigestTemplateError(description: "\(path): template error: \(error)")
        }
    }

    public func render(_ report: DigestReport) -> String {
        template.render(DigestRenderer.context(report))
    }

    private static func explain(_ error: any Error) -> String {
        switch error as? MustacheTemplate.Error {
        case .sectionCloseNameIncorrect?: "this {{/…}} does not close the section that is open"
        case .unfinishedName?: "a tag is not finished with }}"
        case .expectedSectionEnd?: "a section is opened with {{#…}} but never closed"
        case .invalidSetDelimiter?: "invalid {{=…=}} delimiter change"
        default: "\(error)"
        }
    }
}

public struct DigestTemplateError: Error, Sendable, CustomStringConvertible {
    public var description: String
}
