import HTTPTypes

/// The headers that keep what upstreams wrote from acting in the reader's origin, on every
/// page `serve` renders. The one script allowed is the reader's own keyboard file
/// (`/reader.js`, from this origin, no inline script): a link or markup that slipped past
/// the renderer still cannot run any. Images (and a podcast's audio) come from the
/// upstreams' hosts (`http:`/`https:` only), styles from `/reader.css` only, forms go back
/// to `serve` only, and no other site may frame a page (clickjacking).
package enum SecurityHeaders {
    package static let contentSecurityPolicy =
        "default-src 'none'; img-src 'self' https: http:; media-src https: http:; style-src 'self'; script-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

    /// Added to `fields` for a response of `contentType`: `nosniff` on everything (a
    /// feed is never read as a page), the policy on pages and SVG (which can hold script).
    package static func add(to fields: inout HTTPFields, contentType: String) {
        fields[.xContentTypeOptions] = "nosniff"
        if contentType.hasPrefix("text/html") || contentType.hasPrefix("image/svg+xml") {
            fields[.contentSecurityPolicy] = contentSecurityPolicy
            fields[.referrerPolicy] = "same-origin"
            fields[.xFrameOptions] = "DENY"
        }
    }
}

extension HTTPField.Name {
    package static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    package static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
}
