// RunLoopSerialExecutor: Swift concurrency jobs run by a run loop.

/// An executor that runs jobs on a run loop's thread, so that an actor can be
/// pinned to that thread.
///
/// Each job is queued on the loop with ``RunLoop/perform(inModes:block:)``
/// (which wakes it) and runs when the loop runs in one of the executor's
/// modes, by default any common mode. Jobs run one at a time, in FIFO order,
/// so the executor is serial. Pin an actor to it through `unownedExecutor`:
///
/// ```swift
/// actor Worker {
///     let executor: RunLoopSerialExecutor
///     nonisolated var unownedExecutor: UnownedSerialExecutor {
///         executor.asUnownedSerialExecutor()
///     }
///     init(runLoop: RunLoop) { executor = RunLoopSerialExecutor(runLoop: runLoop) }
/// }
/// ```
///
/// `assumeIsolated` works from any code running on the loop's thread (a
/// timer, source or observer callout, not only a job), because the executor
/// reports that thread as isolated (`checkIsolated`,
/// `isIsolatingCurrentContext`). Two executors of the same run loop count as
/// the same execution context. It is also a `TaskExecutor`, for
/// `Task(executorPreference:)`.
///
/// The loop must be running for jobs to run: use a ``RunLoopThread``, or run
/// the loop yourself (queued jobs keep the mode from being empty, but an idle
/// loop with nothing else in its mode returns from `run`). There is no
/// Foundation equivalent; with Foundation you would hop with `perform`.
public final class RunLoopSerialExecutor: SerialExecutor, TaskExecutor, Sendable {
    /// The run loop whose thread runs the jobs.
    public let runLoop: RunLoop
    /// The modes the jobs are queued for.
    public let modes: [RunLoop.Mode]

    /// Makes an executor for `runLoop` whose jobs run when the loop runs in
    /// any of `modes` (default: the common modes).
    public init(runLoop: RunLoop, modes: [RunLoop.Mode] = [.common]) {
        self.runLoop = runLoop
        self.modes = modes
    }

    /// Queues `job` on the run loop and wakes it.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        runLoop.perform(inModes: modes) { [self] in
            job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
        }
    }

    /// The executor as the runtime sees it, with complex equality so that
    /// executors of the same run loop count as one.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(complexEquality: self)
    }

    /// The executor as a task executor.
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// Whether `other` is an executor of the same run loop.
    public func isSameExclusiveExecutionContext(other: RunLoopSerialExecutor) -> Bool {
        runLoop == other.runLoop
    }

    /// Stops the process unless the calling thread is the run loop's thread.
    ///
    /// Called by `assumeIsolated` and `preconditionIsolated` outside a job.
    public func checkIsolated() {
        precondition(runLoop.isCurrent, "not on the thread of \(runLoop.ref)'s run loop")
    }

    /// Whether the calling thread is the run loop's thread.
    public func isIsolatingCurrentContext() -> Bool? {
        runLoop.isCurrent
    }
}
