import FeedCore
import Foundation

/// A whole-source time limit: every page, retry and backoff of the live upstream
/// together. The work is cancelled at the instant (AsyncHTTPClient stops the request).
struct Deadline: Sendable {
    let instant: ContinuousClock.Instant
    /// The configured `deadline`, for the message.
    let seconds: Double

    init(seconds: Double, from start: ContinuousClock.Instant = .now) {
        self.seconds = seconds
        self.instant = start.advanced(by: .milliseconds(Int64((seconds * 1000).rounded())))
    }

    /// Runs `body`, or throws ``SourceError/deadline(seconds:)`` once the instant passes.
    /// At the instant `body` is cancelled and not waited for: a request that does not stop
    /// at once (seen under load: an HTTP request that ran on to its 5 s answer) cannot hold
    /// the run past the source's deadline. It ends on its own, its answer dropped.
    func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        guard ContinuousClock.now < instant else { throw SourceError.deadline(seconds: seconds) }
        let race = FirstOutcome<T>()
        let work = Task {
            do { await race.finish(.success(try await body())) } catch { await race.finish(.failure(error)) }
        }
        let timer = Task { [instant, seconds] in
            try? await Task.sleep(until: instant, clock: .continuous)
            guard !Task.isCancelled else { return }
            await race.finish(.failure(SourceError.deadline(seconds: seconds)))
        }
        defer {
            work.cancel()
            timer.cancel()
        }
        return try await withTaskCancellationHandler {
            try await race.value()
        } onCancel: {
            work.cancel()
            timer.cancel()
            Task { await race.finish(.failure(CancellationError())) }
        }
    }
}

/// The first of several outcomes, handed to whoever waits for it.
private actor FirstOutcome<T: Sendable> {
    private var outcome: Result<T, any Error>?
    private var waiter: CheckedContinuation<T, any Error>?

    func finish(_ result: Result<T, any Error>) {
        guard outcome == nil else { return }
        outcome = result
        waiter?.resume(with: result)
        waiter = nil
    }

    func value() async throws -> T {
        if let outcome { return try outcome.get() }
        return try await withCheckedThrowingContinuation { waiter = $0 }
    }
}
