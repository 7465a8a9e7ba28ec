import ServeHTTP
import Foundation
import Hummingbird

/// CSRF for every cookie-backed state change (the reader's marks): refused when another
/// site made the browser send it (``CrossSiteGuard``), or when the form does not carry
/// the token of the session its cookie names (``ReaderSessions``): another site can make
/// a browser send the cookie, never read the token. The form is read here, at most
/// 4 MiB, and left in the request for the route.
package struct FormGuard: RouterMiddleware {
    package typealias Context = ServeRequestContext
    package static let maxForm = 4 << 20
    package let sessions: ReaderSessions

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let refusal = CrossSiteGuard.refusal(request) { return Problem(title: "Forbidden", status: 403, detail: refusal).response }
        var request = request
        guard let buffer = try? await request.collectBody(upTo: Self.maxForm) else {
            return Problem(title: "Content Too Large", status: 413, detail: "a form is at most 4 MiB").response
        }
        let form = FormFields(pairs: Form.pairs(String(buffer: buffer)))
        let session = sessions.session(of: request)
        guard !session.isNew, sessions.accepts(form.get("token"), for: session.id) else {
            return Problem(title: "Forbidden", status: 403, detail: "the form's token is missing or not this session's: reload the page and try again").response
        }
        return try await next(request, context)
    }

    /// The form ``FormGuard`` read and checked.
    package static func form(of request: Request) async -> FormFields {
        let buffer = (try? await request.body.collect(upTo: maxForm)) ?? ByteBuffer()
        return FormFields(pairs: Form.pairs(String(buffer: buffer)))
    }

    package init(sessions: ReaderSessions) {
        self.sessions = sessions
    }
}

/// A path of this server to go to after a form (`next=`, `return=`): never another site
/// (`//host`, `/\host`), never a control character or a space, which a browser may strip
/// or a header may split on.
package enum SameServerPath {
    package static func safe(_ target: String?) -> String? {
        guard let target, target.hasPrefix("/"), !target.hasPrefix("//"), !target.hasPrefix("/\\"),
              !target.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7f || $0.properties.isWhitespace
                                                    || $0.properties.generalCategory == .control || $0.properties.generalCategory == .format })
        else { return nil }
        return target
    }
}
