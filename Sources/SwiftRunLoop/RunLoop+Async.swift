// Async conveniences: timer ticks as an AsyncStream, awaiting a timer's next
// fire, sleeping on a run loop's clock.

import CRunLoop
import FoundationEssentials

extension RunLoop {
    /// A stream of the fires of a repeating timer on this run loop.
    ///
    /// Each element is the date the timer fired (read on the loop's thread).
    /// The first fire is `interval` seconds from now, the next ones on the
    /// grid `start + k * interval`. The stream keeps only the newest fire
    /// while nobody awaits it, so a slow consumer sees fewer, fresh ticks
    /// rather than a backlog. Ending the iteration (or cancelling its task)
    /// invalidates the timer. The loop must run in `mode` for ticks to come.
    /// (Foundation's closest equivalent is Combine's `Timer.publish`.)
    ///
    /// - Parameters:
    ///   - interval: Seconds between fires (0 or less: 0.1 ms, as for ``Timer``).
    ///   - tolerance: See ``Timer/tolerance``.
    ///   - mode: The mode the timer is scheduled in; the common modes by default.
    public func ticks(
        every interval: TimeInterval, tolerance: TimeInterval = 0,
        forMode mode: RunLoop.Mode = .common
    ) -> AsyncStream<Date> {
        AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let timer = Timer(timeInterval: interval, repeats: true) { _ in
                continuation.yield(Date())
            }
            timer.tolerance = tolerance
            let handle = CObject(retaining: timer.ref)
            continuation.onTermination = { _ in RLRunLoopTimerInvalidate(handle.pointer) }
            add(timer, forMode: mode)
        }
    }

    /// Suspends the calling task until `date`, as measured by a one-shot timer
    /// on this run loop.
    ///
    /// The task resumes (on its own executor) after the timer has fired on
    /// the loop's thread, so this orders the wake-up with the loop's other
    /// work. Cancelling the task invalidates the timer and resumes at once.
    /// The loop must run in `mode` (the common modes by default).
    public func sleep(until date: Date, forMode mode: RunLoop.Mode = .common) async {
        let once = OnceContinuation()
        let timer = Timer(fire: date, interval: 0, repeats: false) { _ in once.resume() }
        let handle = CObject(retaining: timer.ref)
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                once.set(continuation)
                add(timer, forMode: mode)
            }
        } onCancel: {
            RLRunLoopTimerInvalidate(handle.pointer)
            once.resume()
        }
    }
}

extension Timer {
    /// Suspends the calling task until the timer next fires, and returns the
    /// date it fired; `nil` when the timer is (or gets) invalidated first, or
    /// the task is cancelled.
    ///
    /// The block still runs; the task resumes after it. For a repeating timer
    /// call it in a loop (fires that happen while the task is not waiting are
    /// not queued). No Foundation equivalent.
    nonisolated(nonsending) public func nextFire() async -> Date? {
        let box = self.box
        let waiter = Locked(Waiter())
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Date?, Never>) in
                guard let id = box.addWaiter(continuation) else {
                    return continuation.resume(returning: nil)
                }
                let cancelled = waiter.withLock { waiter -> Bool in
                    waiter.id = id
                    return waiter.cancelled
                }
                if cancelled { box.removeWaiter(id)?.resume(returning: nil) }
            }
        } onCancel: {
            let id = waiter.withLock { waiter -> Int? in
                waiter.cancelled = true
                return waiter.id
            }
            if let id { box.removeWaiter(id)?.resume(returning: nil) }
        }
    }
}

/// The state `Timer.nextFire` shares with its cancellation handler.
private struct Waiter {
    var id: Int?
    var cancelled = false
}

/// A continuation resumed at most once, whichever of several paths gets there
/// first (and possibly before the continuation is stored).
private final class OnceContinuation: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, Never>?
        var resumed = false
    }
    private let state = Locked(State())

    func set(_ continuation: CheckedContinuation<Void, Never>) {
        let resumeNow = state.withLock { state -> Bool in
            if state.resumed { return true }
            state.continuation = continuation
            return false
        }
        if resumeNow { continuation.resume() }
    }

    func resume() {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.resumed { return nil }
            state.resumed = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume()
    }
}
