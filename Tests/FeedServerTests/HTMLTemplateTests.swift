import HTMLTemplates
import Mustache
import Testing

/// Every HTML we write escapes its values by their bytes (HTMLTemplate).
@Suite struct HTMLTemplateTests {
    /// A `"` or `<` followed by a combining mark is one `Character` in Swift: escaping by
    /// `Character` let it through, and the quote ended the attribute.
    @Test func aQuoteBeforeACombiningMarkIsEscaped() throws {
        let template = try HTMLTemplate.parse(#"<img alt="{{title}}"><p>{{title}}</p>{{{raw}}}"#)
        let title = "Mug\"\u{301} onerror=alert(1) <\u{301}script>&'"
        #expect(template.render(["title": title, "raw": "<b>kept</b>"])
            == "<img alt=\"Mug&quot;\u{301} onerror=alert(1) &lt;\u{301}script&gt;&amp;&#39;\"><p>Mug&quot;\u{301} onerror=alert(1) &lt;\u{301}script&gt;&amp;&#39;</p><b>kept</b>")
        // Nothing to escape: the value as it is.
        #expect(try HTMLTemplate.parse("{{v}}").render(["v": "Café ☕️ 12"]) == "Café ☕️ 12")
    }

    /// Partials are escaped the same way; a template's own lines and text are untouched.
    @Test func partialsAndLinesAreKeptAsWritten() throws {
        var library = MustacheLibrary()
        library.register(try HTMLTemplate.parse("<h1>{{name}}</h1>\n"), named: "head")
        library.register(try HTMLTemplate.parse("{{> head}}\nline 2 {{x}}\n"), named: "page")
        #expect(library.render(["name": "\"\u{301}", "x": "a<b"], withTemplate: "page") == "<h1>&quot;\u{301}</h1>\nline 2 a&lt;b\n")
    }
}
