// RunLoopSerialExecutor: Swift concurrency jobs run by a run loop.

import CRunLoop

/// An executor that runs jobs on a run loop's thread, so that an actor can be
/// pinned to that thread.
///
/// Each job is queued on the loop as ``RunLoop/perform(inModes:block:)``
/// queues a block (waking the loop) and runs when the loop runs in one of
/// the executor's modes, by default any common mode. Jobs run one at a
/// time, in FIFO order, so the executor is serial. Pin an actor to it
/// through `unownedExecutor`:
///
/// ```swift
/// import SwiftRunLoop
///
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
///
/// A job that the loop can never run, because the loop's thread has exited
/// (it was enqueued afterwards, or was still queued when the thread
/// exited), stops the process with a precondition failure naming the
/// thread, instead of leaving its caller suspended forever. The executor of
/// a ``RunLoopThread`` keeps that thread alive, so this happens only after
/// an explicit ``RunLoopThread/stop()`` or when the loop's thread is your own.
public final class RunLoopSerialExecutor: SerialExecutor, TaskExecutor, Sendable {
    /// The run loop whose thread runs the jobs.
    public let runLoop: RunLoop
    /// The modes the jobs are queued for.
    public let modes: [RunLoop.Mode]
    /// The thread this executor keeps alive (for a ``RunLoopThread``'s).
    private let thread: ThreadHandle?
    /// How failure messages name the loop's thread.
    private let label: String
    /// The one mode jobs are queued for when it is the default or the
    /// common modes, whose C names need no lookup; nil otherwise.
    private let constantMode: RunLoop.ConstantMode?

    /// Makes an executor for `runLoop` whose jobs run when the loop runs in
    /// any of `modes` (default, or for an empty list: the common modes).
    public convenience init(runLoop: RunLoop, modes: [RunLoop.Mode] = [.common]) {
        self.init(runLoop: runLoop, modes: modes, thread: nil, label: "the thread of run loop \(runLoop.ref)")
    }

    init(runLoop: RunLoop, modes: [RunLoop.Mode], thread: ThreadHandle?, label: String) {
        self.runLoop = runLoop
        let valid = modes.filter { !$0.rawValue.isEmpty }
        self.modes = valid.isEmpty ? [.common] : valid
        self.thread = thread
        self.label = thread == nil ? label : "RunLoopThread \"\(label)\""
        self.constantMode = self.modes.count == 1 ? RunLoop.ConstantMode(self.modes[0]) : nil
    }

    /// Queues `job` on the run loop and wakes it.
    ///
    /// If the loop's thread has exited (or exits before running the job), the
    /// process stops with a precondition failure naming the thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        guard let constantMode else {
            runLoop.enqueue(JobItem(job, executor: self), inModes: modes)
            return
        }
        // The usual case, once per job: the job and this executor are the
        // queued item's payload, so queueing allocates nothing in Swift.
        runLoop.enqueuePayload(QueuedJob(job: job, executor: self), inMode: constantMode.name, call: queuedJobCall)
        RLRunLoopWakeUp(runLoop.ref)
    }

    /// Runs `job` on the loop's thread, isolated to this executor.
    fileprivate func run(_ job: UnownedJob) {
        job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
    }

    /// A job that could not run: it is reported, never silently dropped.
    fileprivate func jobDropped() -> Never {
        preconditionFailure(
            "RunLoopSerialExecutor: a job for \(label) was dropped because that thread has "
                + "stopped (its run loop runs nothing more); an actor pinned to it was used after it stopped")
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

/// One job queued on the loop (once per mode; it runs at most once). Its
/// last reference goes when every queued copy has run or was dropped: if
/// none ran, the loop's thread exited with the job still queued (or before
/// it was queued), and the job is reported.
private final class JobItem: PerformItem, @unchecked Sendable {
    private let job: UnownedJob
    private let executor: RunLoopSerialExecutor
    /// Touched only on the loop's thread (or, unqueued, by the last release).
    private var started = false

    init(_ job: UnownedJob, executor: RunLoopSerialExecutor) {
        self.job = job
        self.executor = executor
    }

    override func run() {
        guard !started else { return }
        started = true
        executor.run(job)
    }

    deinit {
        if !started { executor.jobDropped() }
    }
}

/// A job queued for a single mode: held in the C item itself (its two
/// words are the item's payload), moved in and out, never copied, so the
/// executor's reference is taken once and given back once.
private struct QueuedJob {
    let job: UnownedJob
    let executor: RunLoopSerialExecutor
}

/// Takes a queued job out of the item's payload and runs it; a job dropped
/// unrun (the loop's thread exited, or out of memory) is reported. The C
/// side calls this once per item.
private let queuedJobCall: @convention(c) (UnsafeMutableRawPointer?, Bool) -> Void = { payload, run in
    let queued = payload.unsafelyUnwrapped.bindMemory(to: QueuedJob.self, capacity: 1).move()
    guard run else { queued.executor.jobDropped() }
    queued.executor.run(queued.job)
}
