// RunLoopActor: an actor whose jobs run on a run loop's thread, declared
// with one stored property instead of an `unownedExecutor` of its own.

/// An actor pinned to a run loop's thread: its methods run there, between
/// the loop's timers, sources and observers.
///
/// Conform the actor and give it the executor, typically a
/// ``RunLoopThread``'s; the protocol supplies the actor's `unownedExecutor`:
///
/// ```swift
/// import SwiftRunLoop
///
/// actor Worker: RunLoopActor {
///     let runLoopExecutor = RunLoopThread(name: "worker").executor
///     var jobs = 0
///     func work() -> Int { jobs += 1; return jobs }
/// }
/// ```
///
/// Each `Worker` then has a thread of its own, kept alive as long as the
/// actor is. To share one thread among several actors, hand each the same
/// executor (`init(thread: RunLoopThread) { runLoopExecutor = thread.executor }`).
/// Code running on the loop's thread outside the actor's methods (a timer's
/// block, a source's handler) may enter the actor synchronously with
/// `assumeIsolated`, as ``RunLoopSerialExecutor`` explains.
///
/// A `let` of a `Sendable` type satisfies the `nonisolated` requirement, so
/// the stored property needs no annotation. Do not also declare
/// `unownedExecutor`: yours would replace the protocol's.
public protocol RunLoopActor: Actor {
    /// The executor that runs the actor's jobs: it names the run loop, and
    /// for a ``RunLoopThread``'s, keeps the thread alive.
    nonisolated var runLoopExecutor: RunLoopSerialExecutor { get }
}

extension RunLoopActor {
    /// The actor's executor: ``runLoopExecutor``.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        runLoopExecutor.asUnownedSerialExecutor()
    }
}
