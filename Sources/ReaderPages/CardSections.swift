import FeedConfig
import FeedCore
import FeedSupport
import FeedEngine
import FeedFormats
import FeedState
import Foundation
import HTMLTemplates
import Mustache

/// The sections of a card's page made from its source's details: headings from keys,
/// lists and tables from values, images by their address.
extension ReaderPage {
    /// `included_services` → `Included services`; `productInformation` → `Product information`.
    package static func heading(_ key: String) -> String {
        var words = ""
        for character in key {
            if character == "_" || character == "-" { words.append(" ") } else if character.isUppercase, !words.isEmpty {
                words.append(" ")
                words.append(contentsOf: character.lowercased())
            } else {
                words.append(character)
            }
        }
        return words.prefix(1).uppercased() + words.dropFirst()
    }

    /// A detail worth a section of its own, by its shape: long text (paragraphs), a list
    /// of image addresses (a gallery), of `{name, value}` (a table), of things with a `url`
    /// (links with their images), of short texts (a list). Nil for a plain fact.
    package static func section(_ value: JSONValue, heading: String, title: String) -> [String: Any]? {
        switch value {
        case .string(let text) where text.count > 120 || text.contains("\n"):
            return ["paragraphs": text.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }]
        case .array(let items) where !items.isEmpty:
            let texts = items.compactMap(\.stringValue)
            if texts.count == items.count {
                if texts.allSatisfy({ isImageAddress($0) && WebLink.web($0) != nil }) {
                    return ["has_images": true,
                            "images": texts.enumerated().map { ["url": $0.element, "alt": "\(title), picture \($0.offset + 1)"] }]
                }
                return ["has_items": true, "items": texts]
            }
            let objects = items.compactMap { item -> [String: JSONValue]? in if case .object(let fields) = item { fields } else { nil } }
            guard objects.count == items.count else { return nil }
            let rows = objects.compactMap { row -> [String: String]? in
                guard let name = row["name"]?.stringValue, let value = row["value"].flatMap(fact) else { return nil }
                return ["name": name, "value": value]
            }
            if rows.count == objects.count { return ["has_rows": true, "rows": rows] }
            let links = objects.enumerated().compactMap { offset, link -> [String: String]? in
                guard let url = link["url"]?.stringValue.flatMap(WebLink.web) else { return nil }
                let label = link["title"]?.stringValue ?? link["name"]?.stringValue ?? "\(heading) \(offset + 1)"
                return ["url": url, "image": link["image"]?.stringValue.flatMap(WebLink.web) ?? "/placeholder.svg", "label": label]
            }
            return links.isEmpty ? nil : ["has_links": true, "links": links]
        default:
            return nil
        }
    }

    package static func isImageAddress(_ text: String) -> Bool {
        guard text.hasPrefix("http://") || text.hasPrefix("https://") else { return false }
        let path = text.lowercased().split(separator: "?").first ?? ""
        return [".jpg", ".jpeg", ".png", ".gif", ".webp", ".avif", ".svg"].contains { path.hasSuffix($0) }
    }

    static func fact(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): text.isEmpty ? nil : text
        case .number(let number): "\(number)"
        case .bool(let flag): flag ? "yes" : "no"
        case .array(let items):
            items.compactMap(\.stringValue).isEmpty ? nil : items.compactMap(\.stringValue).joined(separator: ", ")
        default: nil
        }
    }
}
