// Perform requests: closures handed to another thread's run loop, optionally
// waited for, delayed, or cancelled by target (Cocoa's performSelector:
// onThread:withObject:waitUntilDone:modes:, performSelector:withObject:
// afterDelay:inModes:, cancelPreviousPerformRequestsWithTarget:).
//
// Invariants: each request's closure lives in a `PerformBox` whose one
// retained reference the C request owns; the C side calls the closure at most
// once and releases the box exactly once (after the call, or when the request
// is cancelled, times out, is dropped or refused). A box also holds its
// target strongly until then, so a target's identity (its address, the C
// target key) cannot be reused by another object while a request for it is
// pending.

import CRunLoop
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension RunLoop {
    /// The state of a perform request, and what
    /// ``perform(inModes:waitUntilDone:timeout:target:_:)-(_,_,Duration?,_,_)`` reports.
    ///
    /// The C core's `RLPerformRequestStatus`. A request runs at most once;
    /// every state after ``running`` is final.
    public enum PerformStatus: Int, Sendable {
        /// The request could not be made (an empty mode name): nothing was queued.
        case invalid = -1
        /// Queued (or its timer armed); it has not started.
        case pending = 0
        /// The closure is running on the loop's thread.
        case running = 1
        /// The closure ran and returned.
        case done = 2
        /// Cancelled before it started; it never runs.
        case cancelled = 3
        /// The waiter's timeout passed before the loop started it; it was
        /// withdrawn and never runs.
        case timedOut = 4
        /// The loop's thread exited before running it; it never ran.
        case dropped = 5

        init(_ status: RLPerformRequestStatus) {
            self = PerformStatus(rawValue: Int(status.rawValue)) ?? .invalid
        }
    }

    /// Runs `block` once on this loop's thread, the first time the loop runs
    /// its queued work in one of `modes`, waking the loop; optionally waits
    /// until it has run.
    ///
    /// Cocoa's `performSelector:onThread:withObject:waitUntilDone:modes:` for
    /// a closure. Requests made by one thread to one loop run in the order
    /// they were made.
    ///
    /// - When `waitUntilDone` is `true` and this is the calling thread's own
    ///   loop, `block` runs at once, inline, whatever the modes (as in Cocoa),
    ///   so it never deadlocks; the result is ``PerformStatus/done``.
    /// - When `waitUntilDone` is `true` otherwise, the call returns once the
    ///   request is settled: ``PerformStatus/done`` after `block` returned,
    ///   ``PerformStatus/dropped`` if the loop's thread exited first (or had
    ///   exited), ``PerformStatus/cancelled`` if
    ///   ``cancelPreviousPerformRequests(withTarget:in:)`` cancelled it, or
    ///   ``PerformStatus/timedOut`` if the loop had not started it within
    ///   `timeout` (it is then withdrawn and never runs). The timeout bounds
    ///   the wait for the loop to *start* the block; once started, the call
    ///   waits for it to return.
    /// - When `waitUntilDone` is `false`, the result is
    ///   ``PerformStatus/pending`` (or ``PerformStatus/dropped`` when the
    ///   loop's thread has exited).
    ///
    /// - Parameters:
    ///   - modes: The modes the block may run in (default: the common modes,
    ///     Cocoa's default). An empty list means the common modes; a mode
    ///     with an empty name makes the request ``PerformStatus/invalid``.
    ///   - waitUntilDone: Whether to block until the request is settled.
    ///   - timeout: The longest wait for the loop to start the block; `nil`
    ///     waits with no limit. Ignored when not waiting.
    ///   - target: An object to cancel the request by; the request keeps it
    ///     alive until it is settled.
    ///   - block: The closure, run on the loop's thread.
    /// - Returns: How the request stands when the call returns.
    @discardableResult
    public func perform(
        inModes modes: [RunLoop.Mode] = [.common], waitUntilDone: Bool,
        timeout: Duration? = nil, target: AnyObject? = nil,
        _ block: @escaping @Sendable () -> Void
    ) -> PerformStatus {
        performRequest(modes, waitUntilDone, timeout.map(\.timeInterval) ?? .infinity, target, block)
    }

    /// Runs `block` once on this loop's thread when the loop runs in one of
    /// `modes`, waiting at most `timeout` seconds for the loop to start it
    /// when `waitUntilDone` is `true`.
    ///
    /// ``perform(inModes:waitUntilDone:timeout:target:_:)-(_,_,Duration?,_,_)``
    /// with the timeout in seconds, as Foundation counts time.
    ///
    /// - Parameters:
    ///   - modes: The modes the block may run in (default: the common modes).
    ///   - waitUntilDone: Whether to block until the request is settled.
    ///   - timeout: The longest wait, in seconds, for the loop to start the
    ///     block; `.infinity` waits with no limit. Ignored when not waiting.
    ///   - target: An object to cancel the request by; the request keeps it
    ///     alive until it is settled.
    ///   - block: The closure, run on the loop's thread.
    /// - Returns: How the request stands when the call returns.
    @discardableResult
    public func perform(
        inModes modes: [RunLoop.Mode] = [.common], waitUntilDone: Bool,
        timeout: TimeInterval, target: AnyObject? = nil,
        _ block: @escaping @Sendable () -> Void
    ) -> PerformStatus {
        performRequest(modes, waitUntilDone, timeout, target, block)
    }

    /// Runs `body` on this loop's thread, waits for it, and returns what it
    /// returned or throws what it threw.
    ///
    /// ``perform(inModes:waitUntilDone:timeout:target:_:)-(_,_,Duration?,_,_)``
    /// for a block with a result: the calling thread blocks until the loop
    /// has run `body` (in one of `modes`, the common modes by default), then
    /// gets its value. A `body` that cannot throw needs no `try`. On the
    /// loop's own thread `body` runs at once, inline, whatever the modes.
    ///
    /// ```swift
    /// import SwiftRunLoop
    ///
    /// let worker = RunLoopThread(name: "worker")
    /// let name = worker.runLoop.perform(waitUntilDone: true) { RunLoop.current.currentMode?.rawValue }
    /// print(name ?? "not running")   // kCFRunLoopDefaultMode
    /// ```
    ///
    /// It waits with no limit; for a timeout or a target to cancel by, use
    /// the overload that returns a ``PerformStatus``.
    ///
    /// - Parameters:
    ///   - modes: The modes `body` may run in (default: the common modes).
    ///   - waitUntilDone: Must be `true`: there is a value only once `body`
    ///     has run.
    ///   - body: The closure, run on the loop's thread.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw.
    /// - Precondition: `waitUntilDone` is `true`, no mode name is empty, and
    ///   the loop's thread has not exited (nor exits before running `body`):
    ///   there would be no value to return.
    public func perform<Value: Sendable, Failure: Error>(
        inModes modes: [RunLoop.Mode] = [.common], waitUntilDone: Bool,
        _ body: @escaping @Sendable () throws(Failure) -> Value
    ) throws(Failure) -> Value {
        precondition(waitUntilDone, "RunLoop.perform returns the block's value only with waitUntilDone: true")
        let outcome = Locked<Result<Value, Failure>?>(nil)
        let status = performRequest(modes, true, .infinity, nil) {
            let result: Result<Value, Failure>
            do throws(Failure) { result = .success(try body()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
        }
        guard status == .done, let result = outcome.withLock({ $0 }) else {
            preconditionFailure(
                "RunLoop.perform(waitUntilDone: true): the block did not run (\(status)): "
                    + (status == .dropped ? "the loop's thread has exited" : "a mode name is empty"))
        }
        return try result.get()
    }

    /// Makes a perform request: `timeout` in seconds (infinite: no limit).
    private func performRequest(
        _ modes: [RunLoop.Mode], _ waitUntilDone: Bool, _ timeout: TimeInterval, _ target: AnyObject?,
        _ block: @escaping @Sendable () -> Void
    ) -> PerformStatus {
        let box = PerformBox(block, target: target)
        let info = Unmanaged.passRetained(box).toOpaque()
        let status = withCModes(modes) { names, count in
            RLRunLoopPerformRequest(
                ref, names, count, box.key, performBoxRun, info, performBoxRelease,
                waitUntilDone, timeout)
        }
        return PerformStatus(status)
    }

    /// Runs `block` once on this loop's thread after `delay`, when the loop
    /// runs in one of `modes`; returns a request that can cancel it.
    ///
    /// Cocoa's `performSelector:withObject:afterDelay:inModes:` for a
    /// closure, on any loop (not only the calling thread's). A one-shot timer
    /// is armed in each mode; as with any timer, the block waits while the
    /// loop runs in other modes. Requests to one loop with equal delays run
    /// in the order they were made. Keeping the returned request is optional:
    /// dropping it does not cancel. A request still pending when the loop's
    /// thread exits is dropped (its closure released unrun).
    ///
    /// - Parameters:
    ///   - delay: Seconds from now (the loop's time, ``RunLoop/currentDate``:
    ///     on a manual clock the block runs once that clock has been advanced
    ///     by `delay`); negative or NaN means now.
    ///   - modes: The modes the timer is in (default: the default mode,
    ///     Cocoa's default). An empty list means the common modes.
    ///   - target: An object to cancel the request by (see
    ///     ``cancelPreviousPerformRequests(withTarget:in:)``); kept alive
    ///     until the request is settled.
    ///   - block: The closure, run on the loop's thread.
    /// - Returns: The request; its ``PerformRequest/status`` is
    ///   ``PerformStatus/invalid`` when a mode name was empty, and
    ///   ``PerformStatus/dropped`` when the loop's thread had exited.
    @discardableResult
    public func perform(
        after delay: TimeInterval, inModes modes: [RunLoop.Mode] = [.default],
        target: AnyObject? = nil, _ block: @escaping @Sendable () -> Void
    ) -> PerformRequest {
        let box = PerformBox(block, target: target)
        let info = Unmanaged.passRetained(box).toOpaque()
        let request = withCModes(modes) { names, count in
            RLRunLoopPerformRequestAfterDelay(
                ref, delay, names, count, box.key, performBoxRun, info,
                performBoxRelease)
        }
        noteTimerAdded()
        return PerformRequest(adopting: request)
    }

    /// Cancels every pending perform request made with `target` (compared
    /// by identity), immediate or delayed, on `runLoop` or on every loop.
    ///
    /// Cocoa's `cancelPreviousPerformRequestsWithTarget:`, which works on the
    /// calling thread's loop only: pass `RunLoop.current` for exactly that.
    /// Requests already running are not affected. Each cancelled closure is
    /// released, unrun, before this returns.
    ///
    /// - Parameters:
    ///   - target: The object the requests were made with.
    ///   - runLoop: The loop whose requests to cancel; `nil` for every loop.
    /// - Returns: How many requests were cancelled.
    @discardableResult
    public static func cancelPreviousPerformRequests(withTarget target: AnyObject, in runLoop: RunLoop? = nil) -> Int {
        let key = UnsafeRawPointer(Unmanaged.passUnretained(target).toOpaque())
        return RLPerformRequestCancelWithTarget(key, runLoop?.ref)
    }

    /// Calls `body` with `modes` as a C array of names (NULL and 0 for an
    /// empty list, which the C side reads as the common modes).
    private func withCModes<R>(_ modes: [RunLoop.Mode], _ body: (UnsafePointer<RLRunLoopMode?>?, RLIndex) -> R) -> R {
        if modes.isEmpty { return body(nil, 0) }
        let names = modes.map { strdup($0.rawValue) }
        defer { names.forEach { free($0) } }
        let cNames: [RLRunLoopMode?] = names.map { $0.map { UnsafePointer($0) } }
        return cNames.withUnsafeBufferPointer { body($0.baseAddress, RLIndex($0.count)) }
    }
}

/// A delayed perform request made with ``RunLoop/perform(after:inModes:target:_:)-(TimeInterval,_,_,_)``:
/// a handle to cancel it and to read its state.
///
/// Releasing the handle does not cancel the request. Sendable: the C request
/// is thread-safe.
public final class PerformRequest: Sendable {
    /// The C request (one reference owned), or nil when it was refused.
    private let request: CObject?

    init(adopting pointer: OpaquePointer?) {
        request = pointer.map(CObject.init(adopting:))
    }

    /// Cancels the request if it has not started: it will never run and its
    /// closure is released before this returns.
    ///
    /// - Returns: `true` if this call cancelled it; `false` if it had already
    ///   started or finished, or been cancelled or dropped (cancelling from
    ///   inside its own closure returns `false`).
    @discardableResult
    public func cancel() -> Bool {
        guard let request else { return false }
        return RLPerformRequestCancel(request.pointer)
    }

    /// The request's state now (a snapshot, from any thread).
    public var status: RunLoop.PerformStatus {
        guard let request else { return .invalid }
        return RunLoop.PerformStatus(RLPerformRequestGetStatus(request.pointer))
    }
}

extension PerformRequest: CustomStringConvertible {
    /// The C core's description (status, loop, delayed or immediate).
    public var description: String { request.map { describe($0.pointer) } ?? "(refused perform request)" }
}

/// The closure (and target) of one request; the C request owns one reference.
private final class PerformBox: @unchecked Sendable {
    private var block: (@Sendable () -> Void)?
    private let target: AnyObject?

    init(_ block: @escaping @Sendable () -> Void, target: AnyObject?) {
        self.block = block
        self.target = target
    }

    /// The C target key: the target's address, or nil.
    var key: UnsafeRawPointer? {
        target.map { UnsafeRawPointer(Unmanaged.passUnretained($0).toOpaque()) }
    }

    /// Runs the closure (once: the C side calls it at most once).
    func run() {
        let body = block
        block = nil
        body?()
    }
}

private let performBoxRun: @convention(c) (UnsafeMutableRawPointer?) -> Void = { info in
    Unmanaged<PerformBox>.fromOpaque(info!).takeUnretainedValue().run()
}

private let performBoxRelease: @convention(c) (UnsafeMutableRawPointer?) -> Void = { info in
    Unmanaged<PerformBox>.fromOpaque(info!).release()
}
