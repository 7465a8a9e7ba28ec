import FeedSupport
import Foundation
import Testing

/// The allow-list that makes upstream HTML safe to show: the classic attacks (the OWASP XSS
/// filter-evasion cheat sheet's vectors and DOMPurify's kinds of test), ordinary markup
/// kept, and random input that never yields anything the allow-list does not allow.
@Suite struct HTMLSanitizerTests {
    @Test(arguments: [
        // Ordinary markup is kept as it is.
        ("<p>Garlic wants a <strong>cold spell</strong>.</p>", "<p>Garlic wants a <strong>cold spell</strong>.</p>"),
        ("<h2>Steps</h2><ol start=\"3\"><li>Dig</li><li>Plant</li></ol>", "<h2>Steps</h2><ol start=\"3\"><li>Dig</li><li>Plant</li></ol>"),
        ("<blockquote><p>Quote</p></blockquote><pre><code>let x = 1 &lt; 2</code></pre>",
         "<blockquote><p>Quote</p></blockquote><pre><code>let x = 1 &lt; 2</code></pre>"),
        ("<table><tr><th scope=\"col\">A</th><td colspan=\"2\">B</td></tr></table>",
         "<table><tr><th scope=\"col\">A</th><td colspan=\"2\">B</td></tr></table>"),
        ("<a href=\"https://example.com/a?b=1&amp;c=2\" title=\"T\">link</a>",
         "<a href=\"https://example.com/a?b=1&amp;c=2\" title=\"T\" rel=\"noopener noreferrer nofollow\">link</a>"),
        ("<img src=\"https://example.com/x.jpg\" alt=\"X\" width=\"640\" onload=\"alert(1)\">", "<img src=\"https://example.com/x.jpg\" alt=\"X\" width=\"640\">"),
        // Scripts, styles, frames and forms' fields go with what they hold.
        ("<script>alert(1)</script>ok", "ok"),
        ("<SCRIPT SRC=http://xss.example/xss.js></SCRIPT>ok", "ok"),
        ("<style>body{display:none}</style><p>ok</p>", "<p>ok</p>"),
        ("<iframe src=\"https://evil.example\"></iframe><p>ok</p>", "<p>ok</p>"),
        ("<svg onload=alert(1)><script>alert(2)</script></svg>ok", "ok"),
        ("<math><mi xlink:href=\"javascript:alert(1)\">x</mi></math>ok", "ok"),
        ("<form action=\"https://evil.example\"><input name=\"q\"><button>Go</button></form>", "Go"),
        ("<textarea><script>alert(1)</script></textarea>ok", "ok"),
        // Event handlers, styles and classes are dropped; the element stays.
        ("<p onclick=\"alert(1)\" style=\"color:red\" class=\"x\">t</p>", "<p>t</p>"),
        ("<div/onmouseover='alert(1)'>t</div>", "<div>t</div>"),
        // Addresses that are not web addresses: no link, no image.
        ("<a href=\"javascript:alert(1)\">x</a>", "x"),
        ("<a href=\"JaVaScRiPt:alert(1)\">x</a>", "x"),
        ("<a href=\"jav&#x09;ascript:alert(1)\">x</a>", "x"),
        ("<a href=\"&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)\">x</a>", "x"),
        ("<a href=\" javascript:alert(1)\">x</a>", "x"),
        ("<a href=\"data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==\">x</a>", "x"),
        ("<img src=\"javascript:alert(1)\">", ""),
        ("<img src=x onerror=alert(1)>", ""),
        ("<a href=\"/relative\">x</a>", "x"),
        ("<a href=\"vbscript:msgbox(1)\">x</a>", "x"),
        // Broken and sneaky markup.
        ("<p>unclosed <em>emphasis", "<p>unclosed <em>emphasis</em></p>"),
        ("</p>stray end<p>", "stray end<p></p>"),
        ("a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"),
        ("<!-- <script>alert(1)</script> -->ok", "ok"),
        ("<![CDATA[<script>alert(1)</script>]]>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("<<script>alert(1)//<</script>ok", "&lt;ok"),
        ("<scr<script>ipt>alert(1)</script>", "ipt&gt;alert(1)"),
        ("<p title=\"\\\"><script>alert(1)</script>\">t</p>", "<p>\"&gt;t</p>"),
        ("<img \"\"\"><script>alert(1)</script>\">", "\"&gt;"),
        ("<b>\u{0}nul</b>", "<b>nul</b>"),
        ("&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;script&gt;alert(1)&lt;/script&gt;"),
    ]) func keepsWhatIsAllowedAndNothingElse(_ input: String, _ expected: String) {
        #expect(HTMLSanitizer.clean(input) == expected)
    }

    @Test func relativeAddressesAreResolvedAgainstThePage() {
        let base = URL(string: "https://blog.example/2026/11/garlic.html")
        #expect(HTMLSanitizer.clean(#"<a href="/about">a</a><img src="pics/g.jpg" alt="g">"#, base: base)
                == #"<a href="https://blog.example/about" rel="noopener noreferrer nofollow">a</a><img src="https://blog.example/2026/11/pics/g.jpg" alt="g">"#)
        #expect(HTMLSanitizer.clean(#"<a href="javascript:x">a</a>"#, base: base) == "a")
    }

    /// Random markup from the pieces attacks are made of: the output holds no element but
    /// the allowed, no attribute but the allowed, no address but http(s), and cleaning it
    /// again changes nothing.
    @Test func randomMarkupNeverYieldsWhatTheListDoesNotAllow() {
        let pieces = ["<", ">", "/", "\"", "'", "=", " ", "\t", "\n", "&", ";", "#", "x", "script", "img", "a", "p", "svg", "style", "on",
                      "onerror", "href", "src", "javascript:", "java\tscript:", "https://e.example/", "alert(1)", "<!--", "-->", "<![CDATA[",
                      "]]>", "&#106;", "&lt;", "iframe", "b", "table", "td", "colspan", "9", "data:", "STYLE", "Script", "`", "\u{0}"]
        var generator = SplitMix(seed: 42)
        let allowedElements: Set<String> = ["p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "dl", "dt", "dd", "blockquote",
                                            "q", "cite", "pre", "code", "kbd", "samp", "var", "em", "strong", "b", "i", "u", "s", "del", "ins",
                                            "sub", "sup", "small", "mark", "abbr", "a", "img", "figure", "figcaption", "table", "thead",
                                            "tbody", "tfoot", "tr", "th", "td", "caption", "span", "div"]
        for _ in 0..<3000 {
            let input = (0..<generator.next(40)).map { _ in pieces[generator.next(pieces.count)] }.joined()
            let output = HTMLSanitizer.clean(input)
            for match in output.matches(of: #/<\/?([a-zA-Z0-9]+)([^>]*)>/#) {
                #expect(allowedElements.contains(String(match.output.1)), "\(input.debugDescription) → \(output.debugDescription)")
                for attribute in String(match.output.2).matches(of: #/ ([a-z]+)="([^"]*)"/#) {
                    let name = String(attribute.output.1), value = String(attribute.output.2)
                    #expect(["href", "src", "title", "alt", "width", "height", "colspan", "rowspan", "scope", "start", "rel"].contains(name),
                            "\(input.debugDescription) → \(output.debugDescription)")
                    if name == "href" || name == "src" { #expect(value.hasPrefix("http://") || value.hasPrefix("https://")) }
                }
            }
            #expect(!output.lowercased().contains("<script"))
            #expect(!output.contains("\u{0}"))
            #expect(HTMLSanitizer.clean(output) == output, "\(input.debugDescription) → \(output.debugDescription)")
        }
    }

    /// Deep nesting and huge input take time in proportion to their length.
    @Test func deepAndLongInputStaysLinear() {
        let deep = String(repeating: "<div>", count: 100_000) + "x"
        let cleaned = HTMLSanitizer.clean(deep)
        #expect(cleaned.hasPrefix(String(repeating: "<div>", count: HTMLSanitizer.maxDepth) + "x"))
        let comments = String(repeating: "<!--", count: 50_000)
        #expect(HTMLSanitizer.clean(comments) == "")
        let brackets = String(repeating: "<a ", count: 50_000)
        #expect(HTMLSanitizer.clean(brackets).isEmpty)
    }
}
