import ServeAccess
import ServeHTTP
import Foundation
import Hummingbird
import NIOCore

/// A person's reader pages, kept as rendered while nothing they show has moved: the store's
/// counter of every source (``SourceVersions``, which carries the configuration's too), the
/// person's marks' counter (``CardStore/marksVersion()``), and the minute (a card says
/// "5 minutes ago"). Rendering is most of a page's cost (swift-mustache looks every field
/// up by name at run time: a first rendering takes 14–17 ms on a million-card store, a
/// kept page 1.5), and a person reloading, paging back and forth, or coming back from a
/// card asks for the same page again and again. Every browser's forms carry their own session's
/// token, so a page is kept with a stand-in for it, random for each process (no upstream
/// text can contain it) and as long as a token, and each answer writes the token over it.
/// What is kept never reaches an HTTP cache: the answers stay `no-store`.
struct PersonalPages: Sendable {
    let pages: InMemoryRenderedResponses
    /// Stands in for a session's form token in a kept page: 64 random hex digits.
    let tokenStandIn: String

    /// 16 MiB: about 170 pages of 20 cards (95 KB each).
    init(limit: Int = 16 << 20) {
        pages = InMemoryRenderedResponses(limit: limit)
        var generator = SystemRandomNumberGenerator()
        tokenStandIn = (0..<4).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
    }

    /// The key of the page at `target` of `person` (signed in as `signedIn`) with their
    /// marks at `marksVersion`, in the minute of `now`: a page kept under an older key is
    /// never answered again, and eviction takes it.
    static func key(person: Int, signedIn: String?, marksVersion: Int, now: Date, target: String) -> String {
        "\(person) \(signedIn ?? "-") \(marksVersion) \(Int(now.timeIntervalSince1970 / 60)) \(target)"
    }

    /// The page kept under `key` while `versions` stand, else `render`'s (given the token's
    /// stand-in, returning the page or the problem to answer), with `token` in it; once for
    /// all who ask at the same moment.
    func page(_ key: String, versions: SourceVersions, token: String,
              render: @escaping @Sendable (_ token: String) async -> RenderedResponse) async -> (RenderedResponse, hit: Bool) {
        let standIn = tokenStandIn
        // Written over in place: a token as long as the stand-in (every session's is).
        guard token.utf8.count == standIn.utf8.count else { return (await render(token), false) }
        var (page, hit) = await pages.response(for: key, versions: versions) {
            var page = await render(standIn)
            page.tokenOffsets = Self.offsets(of: standIn, in: page.body)
            return page
        }
        if page.status == 200, !page.tokenOffsets.isEmpty {
            // One copy of the page, the token set at each place the stand-in was.
            var filled = ByteBuffer()
            filled.writeImmutableBuffer(page.body)
            for offset in page.tokenOffsets { filled.setString(token, at: offset) }
            page.body = filled
        }
        return (page, hit)
    }

    /// Where `standIn` begins in `page`, each place.
    static func offsets(of standIn: String, in page: ByteBuffer) -> [Int] {
        let standIn = Array(standIn.utf8)
        guard let first = standIn.first else { return [] }
        return page.withUnsafeReadableBytes { bytes in
            var found: [Int] = []
            var index = 0
            while index + standIn.count <= bytes.count {
                if bytes[index] == first, bytes[index..<(index + standIn.count)].elementsEqual(standIn) {
                    found.append(index)
                    index += standIn.count
                } else {
                    index += 1
                }
            }
            return found
        }
    }
}

extension RenderedResponse {
    /// A person's page, kept with the token's stand-in: never compressed or tagged (each
    /// answer is other bytes).
    init(personalPage html: String, versions: [String: Int]) {
        let body = ByteBuffer(string: html)
        self.init(body: body, gzip: nil, etag: "", gzipETag: "", contentType: "text/html; charset=utf-8", lastModified: nil,
                  maxAge: nil, degraded: nil, versions: versions)
        heldBytes = body.capacity
    }
}

extension RenderedResponse {
    /// A person's page as answered, with their session cookie; a problem as it is.
    func answer(to request: Request, session: ReaderSession) -> Response {
        status == 200 ? FeedRoutes.personal(body, session: session) : answer(to: request)
    }
}
