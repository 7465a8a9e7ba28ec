import FeedSupport
import Testing

/// The one HTML-to-text converter: on one line for summaries, with its lines for
/// descriptions people read whole.
@Suite struct HTMLTextTests {
    @Test func tagsGoEntitiesDecodeParagraphsStay() {
        #expect(HTMLText.lines("<p>One &amp; two&nbsp;three</p>\n\n<p>Four &#163;5 &pound;6 &#x2019;</p>") == "One & two three\n\nFour £5 £6 ’")
        #expect(HTMLText.lines("<ul><li>a</li>\n<li>b</li></ul>") == "• a\n• b")
        #expect(HTMLText.lines("x &unknown; y") == "x &unknown; y")
    }

    @Test func linesKeepHeadingsBreaksAndListsApartFromTheText() {
        let html = "<h2>Care</h2>Rinse<br>then dry.<ul><li></li><li>No  bleach</li></ul><script>x()</script><p>Done</p>"
        #expect(HTMLText.lines(html) == "Care\n\nRinse\nthen dry.\n\n• No bleach\n\nDone")
        // The same markup on one line: what a summary shows.
        #expect(HTMLText.plain(html) == "Care Rinse then dry. No bleach Done")
    }
}
