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
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              var host = components.host?.lowercased(), !host.isEmpty else { return nil }
        for prefix in ["www.", "amp.", "m."] where host.hasPrefix(prefix) && host.split(separator: ".").count > 2 {
            host.removeFirst(prefix.count)
        }
        let port = components.port.flatMap { $0 == 80 || $0 == 443 ? nil : $0 }
        var path = components.percentEncodedPath
        // AMP pages: `/amp`, `/amp/` at the end, or `/amp/` in front.
        for suffix in ["/amp/", "/amp", ".amp"] where path.lowercased().hasSuffix(suffix) {
            path.removeLast(suffix.count)
        }
        if path.lowercased().hasPrefix("/amp/") { path.removeFirst(4) }
        while path.hasSuffix("/") { path.removeLast() }
        let items: [URLQueryItem] = (components.percentEncodedQueryItems ?? nil) ?? []
        let query = items
            .filter { item in
                let name = item.name.lowercased()
                return !trackingParameters.contains(name) && !trackingPrefixes.contains { name.hasPrefix($0) }
            }
            .map { item in item.value.map { "\(item.name)=\($0)" } ?? item.name }
            .sorted()
        var text = "//" + host + (port.map { ":\($0)" } ?? "") + path
        if !query.isEmpty { text += "?" + query.joined(separator: "&") }
        return text
    }

    /// The canonical form of `text` when it is an http(s) address (a GUID that is a link).
    public static func canonical(_ text: String) -> String? {
        guard text.hasPrefix("http://") || text.hasPrefix("https://"), let url = URL(string: text) else { return nil }
        return canonical(url)
    }
}
