import FeedCore
import FeedSupport
import Foundation

/// Posts joined with their profile and products, as cards: a pure function of one page.
enum LTKMapping {
    static func cards(for feed: LTKFeed, source: String, notes: inout [String]) -> [Card] {
        let products = Dictionary((feed.products?.elements ?? []).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let profiles = Dictionary((feed.profiles?.elements ?? []).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return feed.ltks.elements.map { post in
            let profile = post.profile_id.flatMap { profiles[$0] }
            if let id = post.profile_id, profile == nil {
                notes.append("post \(post.id): profile \(id) is not in profiles; no author")
            }
            let ids = post.product_ids ?? []
            let joined = ids.compactMap { products[$0] }
            if joined.count < ids.count {
                notes.append("post \(post.id): \(ids.count - joined.count) of \(ids.count) products not in products; left out")
            }
            return card(for: post, profile: profile, products: joined, source: source, notes: &notes)
        }
    }

    static func card(for post: LTKPost, profile: LTKProfile?, products: [LTKProduct], source: String,
                     notes: inout [String]) -> Card {
        let caption = Caption(post.caption ?? "")
        let author = profile?.display_name.flatMap { $0.isEmpty ? nil : $0 }.map { name in
            Card.Author(name: name, image: profile?.avatar_url.flatMap(ConfigMapReader.httpURL),
                        url: profile?.blog_url.flatMap(ConfigMapReader.httpURL))
        }
        let published = post.date_published.flatMap { text in
            RFC3339.date(from: text) ?? {
                notes.append("post \(post.id): date_published \"\(text)\" is not a date; left out")
                return nil
            }()
        }
        var card = Card(
            source: source, upstreamID: post.id, kind: .post,
            title: caption.title ?? author.map { "\($0.name)'s LTK" } ?? "LTK post",
            summary: caption.body, image: post.hero_image.flatMap(ConfigMapReader.httpURL),
            url: post.share_url.flatMap(ConfigMapReader.httpURL), author: author, published: published,
            tags: caption.hashtags)
        if !products.isEmpty {
            card.details["products"] = .array(products.map { product in
                var entry: [String: JSONValue] = ["id": .string(product.id)]
                if let url = product.hyperlink { entry["url"] = .string(url) }
                if let image = product.image_url { entry["image"] = .string(image) }
                if let retailer = product.retailer_display_name { entry["retailer"] = .string(retailer) }
                return .object(entry)
            })
        }
        return card
    }
}

/// A caption split into its first line (the title), the rest, and its hashtags.
struct Caption {
    var title: String?
    var body: String?
    var hashtags: [String]

    init(_ text: String) {
        var tags: [String] = []
        var lines: [String] = []
        for rawLine in text.split(whereSeparator: \.isNewline) {
            var words: [Substring] = []
            for word in rawLine.split(separator: " ", omittingEmptySubsequences: true) {
                if word.hasPrefix("#"), word.count > 1, word.dropFirst().allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) {
                    if !tags.contains(String(word)) { tags.append(String(word)) }
                } else {
                    words.append(word)
                }
            }
            let line = words.joined(separator: " ").trimmingCharacters(in: .whitespaces)
            if !line.isEmpty { lines.append(line) }
        }
        hashtags = tags
        title = lines.first.map { $0.hasSuffix(":") ? String($0.dropLast()).trimmingCharacters(in: .whitespaces) : $0 }
        body = lines.count > 1 ? lines.dropFirst().joined(separator: "\n") : nil
    }
}
