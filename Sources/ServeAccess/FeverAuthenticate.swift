import ServeHTTP
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Who a Fever API request is: its `api_key` (form or query), the MD5 of the person's name
/// and Fever password (``SignIn/account(feverKey:address:now:)``). Fever's apps know no
/// other credential and no status but the answer's `auth`: a request without a right key
/// is answered `{"api_version":3,"auth":0}` here, and the routes behind see a signed-in
/// person only. On a server without accounts every key is this machine's owner's.
package struct FeverAuthenticate: RouterMiddleware {
    package typealias Context = ServeRequestContext
    /// Nil without accounts.
    package let signIn: SignIn?
    package let owner: OwnerAccess
    /// The largest form a Fever request sends (a key, a mark and an id or two).
    package static let mostFormBytes = 64 << 10

    package init(signIn: SignIn?, owner: OwnerAccess) {
        self.signIn = signIn
        self.owner = owner
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var (request, context) = (request, context)
        // Read once here; the route reads the same bytes again.
        let form: FormFields
        do {
            form = try await Self.form(of: &request)
        } catch {
            return Problem(title: "Content Too Large", status: 413, detail: "a Fever request's form is at most 64 KiB").response
        }
        if let anonymous = owner.anonymous {
            context.identity = anonymous
        } else if let signIn, let key = form.get("api_key"), !key.isEmpty {
            switch await signIn.account(feverKey: key, address: context.clientAddress) {
            case .success(let account): context.identity = SignedIn(account: account, credential: .token)
            case .failure(.throttled(let seconds)): return SignInAnswer.tooManyAttempts(seconds)
            case .failure: return Self.unauthorized
            }
        } else {
            return Self.unauthorized
        }
        return try await next(request, context)
    }

    /// The request's query and, for a POST, its form body (collected: kept for the route).
    package static func form(of request: inout Request) async throws -> FormFields {
        var pairs = Form.pairs(request.uri.query ?? "")
        if request.method == .post {
            let body = try await request.collectBody(upTo: mostFormBytes)
            pairs += Form.pairs(String(buffer: body))
        }
        return FormFields(pairs: pairs)
    }

    /// Fever's answer to a request it does not know: a 200 whose `auth` is 0, which is how
    /// its apps learn a key is wrong.
    package static var unauthorized: Response {
        Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                 body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"api_version":3,"auth":0}"#)))
    }
}
