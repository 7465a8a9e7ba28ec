import Foundation

/// A link as the item it names, whatever feed or share button wrote it: the scheme and
/// host lowercased (`www.` and the `amp.` of an AMP host left out, `http` and `https` one),
/// the default port, the fragment and a trailing slash dropped, tracking parameters
/// removed and the rest sorted, an AMP page's `/amp` path or `amp=1` parameter folded
/// into the page itself. Two links with the same canonical form name one item.
public enum CanonicalLink {
    /// Parameters that say who shared or advertised a link, never what it names.
    public static let trackingParameters: Set<String> = [
        "fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "twclid", "ttclid", "li_fat_id",
        "mc_cid", "mc_eid", "igshid", "igsh", "ref", "ref_src", "ref_url", "si", "spm", "share", "_hsenc", "_hsmi",
        "mkt_tok", "cmpid", "ncid", "sr_share", "at_medium", "at_campaign", "amp", "outputtype", "s_cid", "icid",
    ]

    /// Parameter prefixes of the same kind (`utm_source`, `utm_medium`, …).
    public static let trackingPrefixes = ["utm_", "pk_", "mtm_", "hsa_", "at_"]

    /// The canonical form of `url`; nil for anything but an http(s) address with a host.
    public static func canonical(_ url: URL) -> String? {
        canonical(url.absoluteString)
    }

    /// The canonical form of `text` when it is an http(s) address (a GUID that is a link).
    /// Read from the text's bytes (URLComponents for each of a run's 25,000 links was most
    /// of the time merging added).
    public static func canonical(_ text: String) -> String? {
        var bytes = Array(text.utf8)
        if let hash = bytes.firstIndex(of: UInt8(ascii: "#")) { bytes.removeSubrange(hash...) }
        func lower(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte + 32 : byte }
        func starts(_ prefix: String, at index: Int) -> Bool {
            let prefix = Array(prefix.utf8)
            return bytes.count - index >= prefix.count && zip(bytes[index...], prefix).allSatisfy { lower($0) == $1 }
        }
        var index: Int
        if starts("https://", at: 0) { index = 8 } else if starts("http://", at: 0) { index = 7 } else { return nil }
        let authorityEnd = bytes[index...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? bytes.count
        if let at = bytes[index..<authorityEnd].lastIndex(of: UInt8(ascii: "@")) { index = at + 1 }
        var host = bytes[index..<authorityEnd].map(lower)
        var port: [UInt8] = []
        if let colon = host.lastIndex(of: UInt8(ascii: ":")), host.last != UInt8(ascii: "]") {
            port = Array(host[(colon + 1)...])
            host.removeSubrange(colon...)
            if port == Array("80".utf8) || port == Array("443".utf8) { port = [] }
        }
        guard !host.isEmpty else { return nil }
        let dots = host.reduce(0) { $0 + ($1 == UInt8(ascii: ".") ? 1 : 0) }
        if dots >= 2, let prefix = hostPrefixes.first(where: { host.starts(with: $0) }) { host.removeFirst(prefix.count) }
        let queryStart = bytes[authorityEnd...].firstIndex(of: UInt8(ascii: "?"))
        var path = Array(bytes[authorityEnd..<(queryStart ?? bytes.count)])
        // AMP pages: `/amp`, `/amp/` or `.amp` at the end, or `/amp/` in front.
        if let suffix = ampSuffixes.first(where: { path.count >= $0.count && path.suffix($0.count).map(lower) == $0 }) { path.removeLast(suffix.count) }
        if path.count >= 5, path.prefix(5).map(lower) == Array("/amp/".utf8) { path.removeFirst(4) }
        while path.last == UInt8(ascii: "/") { path.removeLast() }
        var canonical: [UInt8] = Array("//".utf8) + host
        if !port.isEmpty { canonical += [UInt8(ascii: ":")] + port }
        canonical += path
        if let queryStart {
            let kept = bytes[(queryStart + 1)...].split(separator: UInt8(ascii: "&")).filter { pair in
                let name = String(decoding: pair.prefix { $0 != UInt8(ascii: "=") }.map(lower), as: UTF8.self)
                return !name.isEmpty && !trackingParameters.contains(name) && !trackingPrefixes.contains { name.hasPrefix($0) }
            }.map { String(decoding: $0, as: UTF8.self) }.sorted()
            if !kept.isEmpty { canonical += Array(("?" + kept.joined(separator: "&")).utf8) }
        }
        return String(decoding: canonical, as: UTF8.self)
    }

    static let hostPrefixes = ["www.", "amp.", "m."].map { Array($0.utf8) }
    static let ampSuffixes = ["/amp/", "/amp", ".amp"].map { Array($0.utf8) }
}
