import FeedSupport
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
    /// Read in place from the text's bytes into one buffer (URLComponents for each of a
    /// run's 25,000 links was most of the time merging added, and an array per part of
    /// each link most of what was left).
    public static func canonical(_ text: String) -> String? {
        var text = text
        return text.withUTF8 { canonical(utf8: $0) }.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The FNV-1a hash of ``canonical(_:)``'s bytes, without making it a `String`: what
    /// finds the cards that may share a link.
    public static func hash(_ text: String) -> UInt64? {
        hash(text[...])
    }

    /// ``hash(_:)`` of part of a text (a card's GUID within its id).
    public static func hash(_ text: Substring) -> UInt64? {
        var text = text
        return text.withUTF8 { canonical(utf8: $0) }.map { FNV1a.hash($0) }
    }

    private static func canonical(utf8 bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let end = bytes.firstIndex(of: UInt8(ascii: "#")) ?? bytes.count
        func lower(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte + 32 : byte }
        /// Whether `bytes[range]` is `lowercase` without case.
        func equal(_ range: Range<Int>, _ lowercase: [UInt8]) -> Bool {
            guard range.count == lowercase.count else { return false }
            var at = range.lowerBound
            for byte in lowercase {
                guard lower(bytes[at]) == byte else { return false }
                at += 1
            }
            return true
        }
        var index: Int
        if equal(0..<min(8, end), https) { index = 8 } else if equal(0..<min(7, end), http) { index = 7 } else { return nil }
        let authorityEnd = bytes[index..<end].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? end
        if let at = bytes[index..<authorityEnd].lastIndex(of: UInt8(ascii: "@")) { index = at + 1 }
        var hostEnd = authorityEnd
        var port = authorityEnd..<authorityEnd
        if let colon = bytes[index..<authorityEnd].lastIndex(of: UInt8(ascii: ":")), bytes[authorityEnd - 1] != UInt8(ascii: "]") {
            hostEnd = colon
            port = (colon + 1)..<authorityEnd
            if equal(port, defaultPorts[0]) || equal(port, defaultPorts[1]) { port = authorityEnd..<authorityEnd }
        }
        guard hostEnd > index else { return nil }
        let dots = bytes[index..<hostEnd].reduce(0) { $0 + ($1 == UInt8(ascii: ".") ? 1 : 0) }
        if dots >= 2, let prefix = hostPrefixes.first(where: { equal(index..<min(index + $0.count, hostEnd), $0) }) { index += prefix.count }
        let queryStart = bytes[authorityEnd..<end].firstIndex(of: UInt8(ascii: "?"))
        var (pathStart, pathEnd) = (authorityEnd, queryStart ?? end)
        // AMP pages: `/amp`, `/amp/` or `.amp` at the end, or `/amp/` in front.
        if let suffix = ampSuffixes.first(where: { pathEnd - pathStart >= $0.count && equal((pathEnd - $0.count)..<pathEnd, $0) }) { pathEnd -= suffix.count }
        if pathEnd - pathStart >= 5, equal(pathStart..<(pathStart + 5), ampSuffixes[0]) { pathStart += 4 }
        while pathEnd > pathStart, bytes[pathEnd - 1] == UInt8(ascii: "/") { pathEnd -= 1 }
        var canonical: [UInt8] = []
        canonical.reserveCapacity(end + 2)
        canonical += [UInt8(ascii: "/"), UInt8(ascii: "/")]
        for at in index..<hostEnd { canonical.append(lower(bytes[at])) }
        if !port.isEmpty { canonical.append(UInt8(ascii: ":")); canonical += bytes[port] }
        canonical += bytes[pathStart..<pathEnd]
        if let queryStart {
            let kept = bytes[(queryStart + 1)..<end].split(separator: UInt8(ascii: "&")).filter { pair in
                let name = String(decoding: pair.prefix { $0 != UInt8(ascii: "=") }.map(lower), as: UTF8.self)
                return !name.isEmpty && !trackingParameters.contains(name) && !trackingPrefixes.contains { name.hasPrefix($0) }
            }.map { String(decoding: $0, as: UTF8.self) }.sorted()
            if !kept.isEmpty { canonical += Array(("?" + kept.joined(separator: "&")).utf8) }
        }
        return canonical
    }

    static let https = Array("https://".utf8)
    static let http = Array("http://".utf8)
    static let defaultPorts = [Array("80".utf8), Array("443".utf8)]
    static let hostPrefixes = ["www.", "amp.", "m."].map { Array($0.utf8) }
    static let ampSuffixes = ["/amp/", "/amp", ".amp"].map { Array($0.utf8) }
}
