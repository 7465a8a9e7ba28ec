/// Whole articles as news sites write them, for `full_content:`: what the fixture serves
/// under `/page/article/`, each with the menus, asides and scripts around it that must not
/// become the card's content.
enum ArticlePages {
    static let chrome = """
        <header><nav><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></nav></header>
        """

    /// The body in JSON-LD `articleBody` (two paragraphs), the page's markup a teaser only.
    static let linkedData = """
        <!DOCTYPE html><html><head><title>Harbour works begin</title>
        <script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"Harbour works begin",\
        "articleBody":"Work on the north quay starts on Monday and lasts until the spring, the harbour office said.\\n\\nFerries keep \
        to their timetable; the fish market moves to the old customs shed for the winter, with stalls open from six in the morning <daily>."}</script>
        </head><body>\(chrome)<div class="teaser"><p>Work on the north quay starts on Monday.</p><p>Subscribe to read more.</p></div></body></html>
        """

    /// The article in `<article>`, between a menu, an aside and a script.
    static let articleElement = """
        <!DOCTYPE html><html><head><title>The new ferry is named</title></head><body>\(chrome)
        <article><h1>The new ferry is named</h1>
        <p>After a vote in every school of the island, the new ferry will be called <em>Northern Light</em>.</p>
        <p>She enters service in March and carries <a href="/ferries/northern-light">twice as many cars</a> as the old one, \
        the shipping company said on Tuesday, and her crossing takes twenty minutes less.</p>
        <script>document.write("tracker")</script></article>
        <aside><p>Most read: the weather</p></aside></body></html>
        """

    /// No `<article>` or `<main>`: the story is the block whose paragraphs hold the most text.
    static let densest = """
        <!DOCTYPE html><html><head><title>A winter of storms</title></head><body>\(chrome)
        <div class="sidebar"><p>Tide times</p><p>Weather</p></div>
        <div class="story"><h2>A winter of storms</h2>
        <p>Forecasters expect more storms than usual this winter, and the council has put sandbags by the harbour wall.</p>
        <p>Residents of the lower town are asked to keep drains clear and to sign up for the flood warnings by text message.</p></div>
        <div class="footer"><p>© Harbour City Herald</p></div></body></html>
        """

    /// An article a selector picks out: `.entry-content`, beside comments.
    static func entry(_ number: String) -> String {
        let number = number.filter(\.isNumber).prefix(4)
        return """
            <!DOCTYPE html><html><head><title>Picked post \(number)</title></head><body>\(chrome)
            <div class="entry-content"><p>The whole of picked post \(number).</p></div>
            <div class="comments"><p>First!</p></div></body></html>
            """
    }
}
