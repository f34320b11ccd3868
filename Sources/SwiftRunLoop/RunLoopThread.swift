// RunLoopThread: a thread that does nothing but run its loop (the C core's
// RLThread, which owns the pthread and joins it).
//
// Ownership: the C thread object is owned by a `ThreadHandle`; the
// `RunLoopThread` and every executor it handed out hold that handle, so the
// OS thread lives while any of them does, and the last one to go stops and
// joins it (RLThreadRelease).

import CRunLoop
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A dedicated thread that runs its run loop until stopped: a home for
/// timers, sources and actors (through its ``executor``).
///
/// The thread keeps its loop's default and common modes from being empty, so
/// the loop waits for work instead of returning; it runs the default mode
/// until ``stop()``. Everything else is the ordinary run-loop API on
/// ``runLoop``. (Foundation's closest equivalent is a `Thread` whose `main`
/// runs `RunLoop.current` with a dummy port.)
///
/// ## Lifetime
/// The OS thread lives as long as this object or its ``executor`` (and so
/// an actor pinned to it) is referenced. When the last of them goes, the
/// thread is stopped and joined, so forgetting ``stop()`` leaks nothing; if
/// that last reference is dropped on the thread itself (in one of its
/// callouts), the thread is stopped and detached instead, and exits after
/// that callout. Call ``stop()`` to end it earlier.
///
/// ## Actors on a stopped thread
/// Once the thread has stopped, its loop runs nothing more. A job for an
/// actor pinned to it (enqueued after the stop, or still queued when the
/// thread exited) cannot run, and silently dropping it would leave its
/// caller suspended forever; instead the process stops with a precondition
/// failure that names the thread. Stop a thread only when its actors are
/// done.
public final class RunLoopThread: Sendable {
    /// The thread's run loop.
    public let runLoop: RunLoop
    /// An executor running jobs on this thread, in its common modes. It keeps
    /// the thread alive.
    public let executor: RunLoopSerialExecutor
    /// The name given at creation (the system shows its first 15 bytes).
    public let name: String

    private let handle: ThreadHandle

    /// Starts a thread and returns once its run loop exists, or throws why
    /// it cannot.
    ///
    /// ```swift
    /// import SwiftRunLoop
    ///
    /// let worker = try RunLoopThread(named: "worker")
    /// worker.runLoop.perform { print("on the worker's thread") }
    /// worker.stop()
    /// ```
    ///
    /// - Parameter name: The thread's name as the system shows it (Linux keeps
    ///   the first 15 bytes).
    /// - Throws: ``RunLoop/ResourceError`` when the system cannot make the
    ///   thread (too many threads, out of memory) or its run loop (out of
    ///   descriptors). Its code is the `errno` left in the calling thread
    ///   when that is `EAGAIN`, `ENOMEM`, `EMFILE` or `ENFILE`; often
    ///   unavailable (`nil`): `pthread_create` returns its reason without
    ///   setting `errno`, and a loop that could not be made failed in the new
    ///   thread, whose `errno` is its own.
    public convenience init(named name: String) throws(RunLoop.ResourceError) {
        let thread = try makeOrThrow(
            "RunLoopThread(named: \"\(name)\")", shortages: [EAGAIN, ENOMEM, EMFILE, ENFILE]
        ) { Self.start(name) }
        self.init(started: thread, name: name)
    }

    /// Starts a thread and returns once its run loop exists; stops the
    /// process when the system cannot make the thread or its loop.
    ///
    /// Kept for existing code and for programs that cannot go on without
    /// the thread; ``init(named:)`` throws the failure instead, for a
    /// program that can recover from it (fewer workers, retry later).
    ///
    /// - Parameter name: The thread's name as the system shows it (Linux keeps
    ///   the first 15 bytes).
    public convenience init(name: String = "RunLoopThread") {
        let thread: ThreadHandle
        do {
            thread = try makeOrThrow("RunLoopThread(name: \"\(name)\")") { Self.start(name) }
        } catch {
            fatalError("\(error)")
        }
        self.init(started: thread, name: name)
    }

    private init(started handle: ThreadHandle, name: String) {
        // A started thread has its loop until the handle goes.
        self.runLoop = RunLoop.wrapper(forLoopOf: RLThreadGetRunLoop(handle.thread)!)
        self.handle = handle
        self.name = name
        self.executor = RunLoopSerialExecutor(runLoop: runLoop, modes: [.common], thread: handle, label: name)
    }

    /// A started thread, or nil when it could not be made or started (its
    /// object is then released).
    private static func start(_ name: String) -> ThreadHandle? {
        guard let thread = RLThreadCreate(name) else { return nil }
        let handle = ThreadHandle(adopting: thread)
        return RLThreadStart(thread) ? handle : nil
    }

    /// Stops the thread: its loop's current run ends after the callout in
    /// progress, the thread exits, and its loop is torn down (queued blocks
    /// are dropped and released). Returns once the thread has exited, except
    /// when called on the thread itself, where it only asks and returns at
    /// once (the thread exits after the current callout). Idempotent; from
    /// any thread.
    ///
    /// Actors pinned to the thread must be done by then (see the type's
    /// documentation).
    public func stop() {
        RLThreadStop(handle.thread)
    }

    /// Blocks the calling thread until the thread has exited, after a
    /// ``stop()`` made by any thread (it does not stop the thread itself).
    /// Returns at once when called on the thread itself.
    public func waitUntilExited() {
        if runLoop.isCurrent { return }
        // The C thread offers a join only together with a stop: wait for the
        // exit first (polling, 1 to 10 ms apart), then join.
        var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
        while !RLThreadHasExited(handle.thread) {
            nanosleep(&pause, nil)
            pause.tv_nsec = min(pause.tv_nsec * 2, 10_000_000)
        }
        RLThreadStop(handle.thread)
    }

    /// Whether the thread has exited.
    public var hasExited: Bool {
        RLThreadHasExited(handle.thread)
    }
}

/// Owns one reference to a C run-loop thread; the last release stops and
/// joins it (or detaches it when that happens on the thread itself).
final class ThreadHandle: @unchecked Sendable {
    let thread: RLThreadRef

    init(adopting thread: RLThreadRef) {
        self.thread = thread
    }

    deinit {
        RLThreadRelease(thread)
    }

    /// Whether the thread has exited (its loop runs nothing more).
    var hasExited: Bool { RLThreadHasExited(thread) }
}

extension RunLoopThread: CustomStringConvertible {
    /// The C core's description (name, phase, loop).
    public var description: String { describe(handle.thread) }
}
