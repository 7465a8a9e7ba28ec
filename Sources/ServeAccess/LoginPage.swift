import ServeHTTP
import FeedState
import Foundation
import HTMLTemplates
import HTTPTypes
import Hummingbird
import Mustache
import NIOCore

/// `GET /login`, `POST /login` and `POST /logout`: a browser signs in with a form and
/// keeps a session (hummingbird-auth's, in a cookie that is `HttpOnly`, `SameSite=Lax`, and
/// `Secure` behind https). A wrong name and a wrong password get the same answer.
package enum LoginPage {
    package static let template = try? HTMLTemplate.parse(String(decoding: PackageResources.login_html_mustache, as: UTF8.self))

    /// How long a session lasts without signing in again.
    package static let sessionLength: Duration = .seconds(30 * 24 * 3600)

    package static func register(on router: RouterGroup<ServeRequestContext>, signIn: SignIn) {
        router.get("/login") { request, _ in
            page(next: safeTarget(request.uri.queryParameters.get("next")), status: .ok)
        }
        router.post("/login") { request, context in
            if let refusal = CrossSiteGuard.refusal(request) { return Problem(title: "Forbidden", status: 403, detail: refusal).response }
            guard let buffer = try? await request.body.collect(upTo: 64 << 10) else {
                return Problem(title: "Content Too Large", status: 413, detail: "a sign-in form is at most 64 KiB").response
            }
            let form = FormFields(pairs: Form.pairs(String(buffer: buffer)))
            let name = form.get("name") ?? "", next = safeTarget(form.get("next"))
            switch await signIn.check(name: name, password: form.get("password") ?? "", address: context.clientAddress) {
            case .success(let account):
                context.sessions.createSession(LoginSession(user: account.id, passwordVersion: account.passwordVersion), expiresIn: sessionLength)
                return Response(status: .seeOther, headers: [.location: next, .cacheControl: "no-store"])
            case .failure(.throttled(let seconds)):
                var response = page(next: next, name: name, error: "Too many failed sign-ins: try again in \(seconds) seconds.", status: .tooManyRequests)
                response.headers[.retryAfter] = String(seconds)
                return response
            case .failure(.busy):
                var response = page(next: next, name: name, error: "Too many sign-ins at once: try again in a second.", status: .tooManyRequests)
                response.headers[.retryAfter] = "1"
                return response
            case .failure(.wrong):
                return page(next: next, name: name, error: "Wrong user name or password.", status: .unauthorized)
            case .failure(.unavailable):
                return page(next: next, name: name, error: "The accounts cannot be read now: try again shortly.", status: .serviceUnavailable)
            }
        }
        router.post("/logout") { request, context in
            if let refusal = CrossSiteGuard.refusal(request) { return Problem(title: "Forbidden", status: 403, detail: refusal).response }
            context.sessions.clearSession()
            return Response(status: .seeOther, headers: [.location: "/login", .cacheControl: "no-store"])
        }
    }

    package static func page(next: String, name: String = "", error: String? = nil, status: HTTPResponse.Status) -> Response {
        var context: [String: Any] = ["next": next, "name": name]
        if let error { context["error"] = error }
        let html = template?.render(context) ?? "Sign in"
        var headers: HTTPFields = [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"]
        SecurityHeaders.add(to: &headers, contentType: "text/html")
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    /// Where to go after signing in: a path of this server only, never another site.
    package static func safeTarget(_ target: String?) -> String {
        guard let target = SameServerPath.safe(target), !target.hasPrefix("/login") else { return "/" }
        return target
    }

    package static func queryEscaped(_ text: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+?#")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "/"
    }
}
