// Running an async program on the main run loop, and the diagnostic for the
// main loop run from another thread.
//
// Why an entry point of our own: an `async` main hands the main thread to
// dispatch_main() at its first suspension, after which main-actor jobs run on
// dispatch threads and the main run loop never runs. A synchronous main that
// runs the main loop keeps the main thread, and the main loop drains the main
// dispatch queue, which is where main-actor jobs go on Linux.

import CRunLoop
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension RunLoop {
    /// Runs `body` as a main-actor task, and the main run loop on the main
    /// thread until the task has finished; returns what it returned or
    /// rethrows what it threw.
    ///
    /// The supported way to write an `async` program whose main-actor code
    /// (and every timer, source and observer of ``RunLoop/main``) runs on the
    /// process's main thread. Call it from top-level code or a synchronous
    /// `static func main()`, or let ``RunLoopMain`` call it for a `@main`
    /// type. (An `async` main does not work: at its first `await` the Swift
    /// runtime gives the main thread to `dispatchMain()`, and main-actor work
    /// then runs on other threads while the main loop never runs.)
    ///
    /// ```swift
    /// import SwiftRunLoop
    ///
    /// try RunLoop.runMain {
    ///     try await Task.sleep(for: .milliseconds(10))
    ///     print("on the main thread:", RunLoop.main.isCurrent)
    /// }
    /// ```
    ///
    /// The main loop runs in the default mode while `body` is suspended. A
    /// task's work in the main actor, `DispatchQueue.main` blocks and the
    /// main loop's own timers and sources run in between. No Foundation
    /// equivalent.
    ///
    /// - Parameter body: The program, run on the main actor.
    /// - Precondition: Called on the process's main thread while the main
    ///   loop is not running (not from one of its callouts, nor from
    ///   main-actor code that it runs: the main dispatch queue is not drained
    ///   by a nested run, so `body` could never finish).
    public static func runMain<Result: Sendable>(
        _ body: @escaping @MainActor @Sendable () async throws -> Result
    ) throws -> Result {
        precondition(
            main.isCurrent,
            "RunLoop.runMain must be called on the process's main thread "
                + "(from top-level code or a synchronous static main()), not from another thread")
        precondition(
            main.currentMode == nil,
            "RunLoop.runMain must not be called while the main run loop runs "
                + "(from one of its callouts or from main-actor code): call it once, from the program's entry point")
        let outcome = Locked<Swift.Result<Result, any Error>?>(nil)
        // Keeps the default mode from being empty while the task is suspended.
        let keepAlive = Source {}
        main.add(keepAlive, forMode: .common)
        defer { keepAlive.invalidate() }
        Task { @MainActor in
            let result: Swift.Result<Result, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            RunLoop.main.stop()
        }
        while true {
            if let result = outcome.withLock({ $0 }) { return try result.get() }
            _ = main.run(mode: .default, seconds: 1.0e10, returnAfterSourceHandled: false)
        }
    }

    /// Whether this is the calling thread's loop; when it is not and this is
    /// the main loop, writes (once per process) why its run methods do
    /// nothing here.
    func isCurrentOrReport() -> Bool {
        if isCurrent { return true }
        if ref == RunLoop.main.ref, !reportedMainRunOffThread.exchange(true, ordering: .relaxed) {
            let message =
                "SwiftRunLoop: RunLoop.main was run from a thread that is not the main thread; "
                + "it returned without running (the main loop runs only on the main thread). In an async "
                + "main, code after the first await runs on another thread: use RunLoop.runMain { ... } "
                + "or a @main type conforming to RunLoopMain.\n"
            var bytes = Array(message.utf8)
            _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
        }
        return false
    }
}

/// Whether the off-thread diagnostic for the main loop was written.
private let reportedMainRunOffThread = Atomic<Bool>(false)

/// A `@main` entry point for an `async` program whose main-actor work runs on
/// ``RunLoop/main``.
///
/// Conform the `@main` type and write the program in ``run()``; the
/// protocol supplies a synchronous `main()` that calls
/// ``RunLoop/runMain(_:)``:
///
/// ```swift
/// import SwiftRunLoop
///
/// @main
/// struct App: RunLoopMain {
///     static func run() async throws {
///         try await Task.sleep(for: .milliseconds(10))
///         print("still on the main thread:", RunLoop.main.isCurrent)
///     }
/// }
/// ```
///
/// The protocol is `@MainActor`, so ``run()`` and the rest of the type are
/// isolated to the main actor. Do not declare a `main()` of your own in the
/// type: it would replace this one.
@MainActor
public protocol RunLoopMain {
    /// The program: runs on the main actor, on the main thread, while the
    /// main run loop runs.
    static func run() async throws
}

extension RunLoopMain {
    /// Runs ``run()`` with ``RunLoop/runMain(_:)``.
    public static func main() throws {
        try RunLoop.runMain { try await run() }
    }
}
