// RunLoopThread: a thread that does nothing but run its loop.

import CRunLoop
import Synchronization
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
/// Call ``stop()`` when done; the thread exits after its current callout,
/// tearing its loop down (queued blocks are dropped).
public final class RunLoopThread: Sendable {
    /// The thread's run loop.
    public let runLoop: RunLoop
    /// An executor running jobs on this thread, in its common modes.
    public let executor: RunLoopSerialExecutor

    private let state: ThreadState
    private let stopSignaller: RunLoop.Source.Signaller

    /// Starts a thread and returns once its run loop exists.
    ///
    /// - Parameter name: The thread's name as the system shows it (Linux keeps
    ///   the first 15 bytes).
    public init(name: String = "RunLoopThread") {
        let state = ThreadState(name: name)
        var thread = pthread_t()
        let unmanaged = Unmanaged.passRetained(state)
        let rc = pthread_create(&thread, nil, { arg in
            let state = Unmanaged<ThreadState>.fromOpaque(arg!).takeRetainedValue()
            state.main()
            return nil
        }, unmanaged.toOpaque())
        precondition(rc == 0, "pthread_create failed: \(rc)")
        pthread_detach(thread)
        let (loop, signaller) = state.waitForRunLoop()
        self.runLoop = loop
        self.stopSignaller = signaller
        self.executor = RunLoopSerialExecutor(runLoop: loop)
        self.state = state
    }

    /// Asks the thread to stop: its loop's current run ends and the thread
    /// exits. From any thread, including the loop's own; idempotent.
    public func stop() {
        // The stop source calls stop() from inside a run, so a request made
        // while the thread is between two runs is not lost.
        state.stopRequested.store(true, ordering: .sequentiallyConsistent)
        stopSignaller.signal(andWakeUp: runLoop)
    }

    /// Blocks the calling thread until the thread has exited (after
    /// ``stop()``). Returns at once when called on the thread itself.
    public func waitUntilExited() {
        if runLoop.isCurrent { return }
        state.waitForExit()
    }

    /// Whether the thread has exited.
    public var hasExited: Bool {
        state.exited.load(ordering: .sequentiallyConsistent)
    }
}

private final class ThreadState: Sendable {
    let name: String
    let stopRequested = Atomic<Bool>(false)
    let exited = Atomic<Bool>(false)
    private let started = Mutex<(RunLoop, RunLoop.Source.Signaller)?>(nil)
    private let semaphore = Semaphore()
    private let exitSemaphore = Semaphore()

    init(name: String) {
        self.name = name
    }

    func main() {
        _ = setThreadName(pthread_self(), String(decoding: name.utf8.prefix(15), as: UTF8.self))
        let loop = RunLoop.current
        // The stop source keeps the common modes non-empty until it is
        // signalled by stop(), and then stops the run it is performed in.
        let stopSource = RunLoop.Source { [self] in
            if stopRequested.load(ordering: .sequentiallyConsistent) { loop.stop() }
        }
        loop.add(stopSource, forMode: .common)
        started.withLock { $0 = (loop, stopSource.signaller) }
        semaphore.signal()
        while !stopRequested.load(ordering: .sequentiallyConsistent) {
            loop.run(mode: .default, seconds: 1.0e10, returnAfterSourceHandled: false)
        }
        stopSource.invalidate()
        exited.store(true, ordering: .sequentiallyConsistent)
        exitSemaphore.signal()
    }

    func waitForRunLoop() -> (RunLoop, RunLoop.Source.Signaller) {
        semaphore.wait()
        return started.withLock { $0! }
    }

    func waitForExit() {
        exitSemaphore.wait()
        exitSemaphore.signal()  // let other waiters through
    }
}

/// A counting semaphore on a pthread mutex and condition variable.
final class Semaphore: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var count = 0

    init() {
        lock.initialize(to: pthread_mutex_t())
        condition.initialize(to: pthread_cond_t())
        pthread_mutex_init(lock, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(lock)
        lock.deallocate()
        condition.deallocate()
    }

    func signal() {
        pthread_mutex_lock(lock)
        count += 1
        pthread_cond_signal(condition)
        pthread_mutex_unlock(lock)
    }

    func wait() {
        pthread_mutex_lock(lock)
        while count == 0 { pthread_cond_wait(condition, lock) }
        count -= 1
        pthread_mutex_unlock(lock)
    }
}

/// glibc's pthread_setname_np (declared only under _GNU_SOURCE, so not imported).
@_silgen_name("pthread_setname_np")
private func setThreadName(_ thread: pthread_t, _ name: UnsafePointer<CChar>) -> Int32
