// RunLoop.IdleQueue: the C core's RLIdleQueue with closures.
//
// Each submitted closure is boxed once (retained by the C task, released by
// its release callback, whether the task ran, was cancelled or dropped). The
// wrapper owns the C queue; deinit releases it, which drops pending tasks.

import CRunLoop
import FoundationEssentials

extension RunLoop {
    /// A first-in, first-out queue of closures that a run loop runs only when
    /// it is idle: just before it would go to sleep.
    ///
    /// The IdleRun recipe of the CFRunLoop articles (expensive work in a
    /// ``Activity/beforeWaiting`` observer), done properly. Each pass that is
    /// about to sleep runs one task, or, with a positive ``slice``, tasks
    /// until that many seconds have passed; while tasks remain the loop polls
    /// instead of sleeping, services its timers and sources, and comes back
    /// for the next slice. So events wait at most one slice (or one task).
    ///
    /// Idle means "about to sleep", as in CF: a pass that handled a signalled
    /// source, and every pass of a polling run (`seconds: 0`), runs no idle
    /// tasks, so a source signalled on every pass postpones them. Pending
    /// tasks keep the mode from being empty, so a run does not finish with
    /// idle work left.
    ///
    /// Dropping the queue (or ``invalidate()``) drops the tasks still pending.
    public final class IdleQueue: @unchecked Sendable {
        /// Identifies a submitted task, for ``IdleQueue/cancel(_:)``.
        public struct Token: Hashable, Sendable {
            let rawValue: UInt64
        }

        let ref: OpaquePointer

        /// Makes a queue whose tasks run on `runLoop`'s thread when it is idle
        /// in `mode`.
        ///
        /// - Parameters:
        ///   - runLoop: The loop that runs the tasks.
        ///   - mode: The mode whose idle passes run them; ``RunLoop/Mode/common``
        ///     runs them in every common mode.
        ///   - slice: Seconds of tasks per idle pass; 0 runs one task per pass.
        ///     At most 10 seconds.
        public init(runLoop: RunLoop, mode: RunLoop.Mode = .default, slice: TimeInterval = 0) {
            let mode = mode.rawValue.isEmpty ? RunLoop.Mode.default : mode
            self.ref = mode.withCName {
                RLIdleQueueCreate(runLoop.ref, $0, slice) ?? outOfResources("RunLoop.IdleQueue")
            }
        }

        deinit {
            RLIdleQueueRelease(ref)
        }

        /// Queues `task` to run on the loop's thread when the loop is idle,
        /// after the tasks already queued. Safe from any thread; wakes the loop.
        ///
        /// - Returns: A token for ``cancel(_:)``, or `nil` when the queue was
        ///   invalidated (the task is then dropped).
        @discardableResult
        public func submit(_ task: @escaping @Sendable () -> Void) -> Token? {
            let info = Unmanaged.passRetained(IdleTask(task)).toOpaque()
            let token = RLIdleQueueSubmit(ref, idleTaskTrampoline, info, idleTaskRelease)
            return token == 0 ? nil : Token(rawValue: token)
        }

        /// Removes a task that has not started yet.
        ///
        /// - Returns: `true` when the task was removed (it will not run);
        ///   `false` when it already ran, is running or was cancelled.
        @discardableResult
        public func cancel(_ token: Token) -> Bool {
            RLIdleQueueCancel(ref, token.rawValue)
        }

        /// Seconds of tasks per idle pass (0: one task per pass).
        public var slice: TimeInterval {
            get { RLIdleQueueGetSlice(ref) }
            set { RLIdleQueueSetSlice(ref, newValue) }
        }

        /// The number of tasks queued and not started.
        public var pendingCount: Int { RLIdleQueueGetPendingCount(ref) }

        /// The number of tasks run so far.
        public var completedCount: Int { Int(RLIdleQueueGetCompletedCount(ref)) }

        /// Stops the queue for good: pending tasks are dropped, later
        /// submissions return `nil`. A task that is running finishes.
        /// Idempotent; safe from any thread, including a task.
        public func invalidate() {
            RLIdleQueueInvalidate(ref)
        }

        /// Whether the queue accepts tasks (`false` once invalidated).
        public var isValid: Bool { RLIdleQueueIsValid(ref) }
    }
}

private final class IdleTask: @unchecked Sendable {
    var task: (@Sendable () -> Void)?
    init(_ task: @escaping @Sendable () -> Void) { self.task = task }
}

private let idleTaskTrampoline: @convention(c) (UnsafeMutableRawPointer?) -> Void = { info in
    let item = Unmanaged<IdleTask>.fromOpaque(info!).takeUnretainedValue()
    guard let task = item.task else { return }
    item.task = nil
    task()
}

/// Drops the task's box, whether it ran, was cancelled or was dropped.
private let idleTaskRelease: @convention(c) (UnsafeMutableRawPointer?) -> Void = { info in
    Unmanaged<IdleTask>.fromOpaque(info!).release()
}

extension RunLoop.IdleQueue: CustomStringConvertible {
    /// The C core's description (validity, loop, mode, slice, task counts).
    public var description: String { describe(ref) }
}
