import ArgumentParser
import FeedConfig
import FeedCore
import FeedEngine
import FeedFormats
import FeedServer
import ServeAccess
import ServeHTTP
import FeedState
import FeedSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `aggregate user add|list|remove|role|password|fever|token|tokens|revoke`: the people who
/// can sign in to `serve`, their roles, their Fever passwords and their API tokens
/// (docs/people-and-apps.md).
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Add, list and remove the people who sign in to `serve`, and their API tokens.",
        discussion: """
            With a user, `serve` asks people to sign in (the reader's form, HTTP Basic, a token) and keeps \
            read and starred cards per person; without one it serves this machine only (or --no-auth, read-only). \
            Every user reads and marks; an admin also changes Sources.yml through `serve` and sees its operations \
            (/metrics, the detailed /healthz) from other machines. The first user is an admin, later ones readers \
            unless added with --admin. \
            Passwords are asked for on the terminal, or read from stdin with --password-stdin, never from an argument.
            """,
        subcommands: [Add.self, List.self, Remove.self, Role.self, Password.self, Fever.self, Token.self, Tokens.self, Revoke.self])

    struct Add: ContextCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a user (the password is asked for).")
        @Argument(help: "The user name: letters, digits, '.', '_', '-' or '@'.") var name: String
        @Flag(help: "Read the password from the first line of stdin.") var passwordStdin = false
        @Flag(help: "Make the user an admin (the first user always is).") var admin = false
        @OptionGroup var common: CommonOptions

        func validate() throws {
            if let problem = Account.problem(withName: name) { throw ValidationError(problem) }
        }

        func run(in context: CommandContext) async throws {
            let password = try PasswordInput.read(fromStdin: passwordStdin, confirm: true)
            let hash = try await Passwords.hash(password)
            let account = try await common.withAccounts(context.registry) { accounts in
                try await accounts.add(name: name, passwordHash: hash, role: admin ? .admin : nil, at: Date())
            }
            Terminal.writeError("aggregate: added \(name) (\(account.role.rawValue)); `aggregate serve` now asks people to sign in")
        }
    }

    struct List: ContextCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the users and how many tokens each has.")
        @OptionGroup var common: CommonOptions

        func run(in context: CommandContext) async throws {
            let rows = try await common.withAccounts(context.registry) { accounts in
                var rows: [String] = []
                for account in try await accounts.accounts() {
                    let tokens = try await accounts.tokens(of: account.id).count
                    rows.append("\(account.name)\t\(account.role.rawValue)\tadded \(RFC3339.string(from: account.created))\t\(tokens) token\(tokens == 1 ? "" : "s")")
                }
                return rows
            }
            context.stdout.write(rows.map { $0 + "\n" }.joined())
            if rows.isEmpty { Terminal.writeError("aggregate: no users: `serve` serves this machine only (add one with `aggregate user add NAME`)") }
        }
    }

    struct Remove: ContextCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a user and their tokens.")
        @Argument var name: String
        @OptionGroup var common: CommonOptions

        func run(in context: CommandContext) async throws {
            let removed = try await common.withAccounts(context.registry) { try await $0.remove(named: name) }
            guard removed else { throw common.usage(AccountError.noSuchUser(name).description) }
            Terminal.writeError("aggregate: removed \(name) and their tokens")
        }
    }

    struct Role: ContextCommand {
        static let configuration = CommandConfiguration(
            commandName: "role", abstract: "Make a user an admin or a reader.",
            discussion: "An admin changes Sources.yml through `serve` and sees /metrics and the detailed /healthz; a reader reads and marks.")
        @Argument var name: String
        @Argument(help: ArgumentHelp("admin or reader.", valueName: "role")) var role: String
        @OptionGroup var common: CommonOptions

        func validate() throws {
            guard AccountRole(rawValue: role) != nil else { throw ValidationError("the role is admin or reader, got \(String(reflecting: role))") }
        }

        func run(in context: CommandContext) async throws {
            let role = AccountRole(rawValue: role) ?? .reader
            let changed = try await common.withAccounts(context.registry) { try await $0.setRole(named: name, role: role) }
            guard changed else { throw common.usage(AccountError.noSuchUser(name).description) }
            Terminal.writeError("aggregate: \(name) is now \(role == .admin ? "an admin" : "a reader")")
        }
    }

    struct Password: ContextCommand {
        static let configuration = CommandConfiguration(commandName: "password", abstract: "Set a user's password; their sessions end.")
        @Argument var name: String
        @Flag(help: "Read the password from the first line of stdin.") var passwordStdin = false
        @OptionGroup var common: CommonOptions

        func run(in context: CommandContext) async throws {
            try await common.withAccounts(context.registry) { accounts in
                guard try await accounts.account(named: name) != nil else { throw UsageError(AccountError.noSuchUser(name).description) }
            }
            let hash = try await Passwords.hash(try PasswordInput.read(fromStdin: passwordStdin, confirm: true))
            let changed = try await common.withAccounts(context.registry) { try await $0.setPassword(named: name, hash: hash) }
            guard changed else { throw common.usage(AccountError.noSuchUser(name).description) }
            Terminal.writeError("aggregate: changed the password of \(name); their sessions have ended")
        }
    }

    struct Fever: ContextCommand {
        static let configuration = CommandConfiguration(
            commandName: "fever", abstract: "Set a user's Fever password, for the apps that sync over the Fever API.",
            discussion: """
                Fever apps send the MD5 of NAME:PASSWORD with every request, so Fever gets a password of its own, never \
                the account's: read from stdin, or asked for on a terminal. A new one replaces the old. In the app, type \
                the server as https://HOST/api/fever/, the user name NAME and this password (docs/clients/fever.md). \
                `aggregate user tokens NAME` lists it as "Fever API"; `aggregate user revoke NAME ID` ends it.
                """)
        @Argument var name: String
        @Flag(help: "Read the password from the first line of stdin (the default when stdin is not a terminal).") var passwordStdin = false
        @OptionGroup var common: CommonOptions

        func run(in context: CommandContext) async throws {
            guard let account = try await common.withAccounts(context.registry, { try await $0.account(named: name) }) else {
                throw common.usage(AccountError.noSuchUser(name).description)
            }
            let password = try PasswordInput.read(fromStdin: passwordStdin || isatty(STDIN_FILENO) != 1, confirm: true)
            if await Passwords.matches(password, hash: account.passwordHash) {
                throw common.usage("the Fever password must not be \(name)'s own: Fever sends it as an MD5 with every request; choose another")
            }
            let made = AccountToken.fever(user: account.id, key: AccountToken.feverKey(name: name, password: password), at: Date())
            try await common.withAccounts(context.registry) { accounts in
                for old in try await accounts.tokens(of: account.id) where old.label == AccountToken.feverLabel {
                    _ = try await accounts.revoke(token: old.id, of: account.id)
                }
                try await accounts.add(made.token, secretHash: made.secretHash)
            }
            Terminal.writeError("aggregate: set the Fever password of \(name) (token \(made.token.id)); in a Fever app type the server https://HOST/api/fever/, the user \(name) and this password")
        }
    }

    struct Token: ContextCommand {
        static let configuration = CommandConfiguration(
            commandName: "token", abstract: "Make an API token for scripts and feed readers; it is printed once.",
            discussion: "Send it as `Authorization: Bearer TOKEN`, or as ?token=TOKEN where a reader can do nothing else.")
        @Argument var name: String
        @Option(help: "What the token is for (shown by `user tokens`).") var label = ""
        @OptionGroup var common: CommonOptions

        func run(in context: CommandContext) async throws {
            let made = try await common.withAccounts(context.registry) { accounts in
                guard let account = try await accounts.account(named: name) else { throw UsageError(AccountError.noSuchUser(name).description) }
                let made = AccountToken.make(user: account.id, label: label, at: Date())
                try await accounts.add(made.token, secretHash: made.secretHash)
                return made
            }
            context.stdout.write(made.text + "\n")
            Terminal.writeError("aggregate: made token \(made.token.id) for \(name); it is shown this once (revoke it with `aggregate user revoke \(name) \(made.token.id)`)")
        }
    }

    struct Tokens: ContextCommand {
        static let configuration = CommandConfiguration(commandName: "tokens", abstract: "List a user's tokens (never their secrets).")
        @Argument var name: String
        @OptionGroup var common: CommonOptions

        func run(in context: CommandContext) async throws {
            let tokens = try await common.withAccounts(context.registry) { accounts in
                guard let account = try await accounts.account(named: name) else { throw UsageError(AccountError.noSuchUser(name).description) }
                return try await accounts.tokens(of: account.id)
            }
            context.stdout.write(tokens.map { token in
                let used = token.lastUsed.map { "used \(RFC3339.string(from: $0))" } ?? "never used"
                return "\(token.id)\tmade \(RFC3339.string(from: token.created))\t\(used)\t\(TerminalText.safe(token.label))\n"
            }.joined())
        }
    }

    struct Revoke: ContextCommand {
        static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Revoke one of a user's tokens by its id.")
        @Argument var name: String
        @Argument(help: ArgumentHelp("The token's id, as `user tokens` lists it.", valueName: "token-id")) var tokenID: String
        @OptionGroup var common: CommonOptions

        func run(in context: CommandContext) async throws {
            let revoked = try await common.withAccounts(context.registry) { accounts in
                guard let account = try await accounts.account(named: name) else { throw UsageError(AccountError.noSuchUser(name).description) }
                return try await accounts.revoke(token: tokenID, of: account.id)
            }
            guard revoked else { throw common.usage("\(name) has no token \(tokenID) (`aggregate user tokens \(name)` lists them)") }
            Terminal.writeError("aggregate: revoked token \(tokenID) of \(name)")
        }
    }
}

/// A password from the terminal, without echo, or from stdin's first line.
enum PasswordInput {
    static func read(fromStdin: Bool, confirm: Bool) throws -> String {
        let password: String
        if fromStdin {
            guard let line = readLine(strippingNewline: true) else { throw usage("--password-stdin: stdin ended before a password") }
            password = line
        } else {
            guard isatty(STDIN_FILENO) == 1 else {
                throw usage("no terminal to ask for the password on: write it to stdin with --password-stdin (never as an argument)")
            }
            password = try prompt("Password: ")
            if confirm, try prompt("Again: ") != password { throw usage("the two passwords differ; nothing was changed") }
        }
        if let problem = problem(with: password) { throw usage(problem) }
        return password
    }

    /// Why a password will not do: 8 characters at least (NIST SP 800-63B), 72 bytes at
    /// most (bcrypt reads no further, so more would be silently ignored).
    static func problem(with password: String) -> String? {
        if password.count < 8 { return "a password has 8 characters at least" }
        if password.utf8.count > 72 { return "a password has at most 72 bytes (bcrypt reads no further)" }
        return nil
    }

    private static func prompt(_ text: String) throws -> String {
        FileHandle.standardError.write(Data(text.utf8))
        var saved = termios()
        tcgetattr(STDIN_FILENO, &saved)
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        guard let line = readLine(strippingNewline: true) else { throw usage("no password given") }
        return line
    }

    private static func usage(_ message: String) -> Error {
        usageError(message)
    }
}

extension CommonOptions {
    /// Runs `body` with the accounts of the state (opened without the network).
    func withAccounts<T>(_ registry: SourceRegistry, _ body: (any AccountStore) async throws -> T) async throws -> T {
        try await withOpenedState(registry, reading: "the accounts") { state, _ in
            await RolesUpgrade.say(state.accounts)
            return try await body(state.accounts)
        }
    }

    /// Says `message` and gives the usage exit status.
    func usage(_ message: String) -> Error {
        usageError(message)
    }
}

/// Says `message` on stderr and gives the usage exit status (2).
func usageError(_ message: String) -> Error {
    Terminal.writeError("aggregate: \(message)")
    return ExitStatus.usage.code
}

/// The one message of the upgrade to roles: the accounts that existed became admins.
enum RolesUpgrade {
    static func say(_ accounts: any AccountStore) async {
        guard let names = try? await accounts.takeRolesUpgrade(), !names.isEmpty else { return }
        Terminal.writeError("""
            aggregate: accounts now have roles: \(names.joined(separator: ", ")) \(names.count == 1 ? "is an admin" : "are admins"), \
            as every account could change Sources.yml before; `aggregate user role NAME reader` makes one a reader
            """)
    }
}
