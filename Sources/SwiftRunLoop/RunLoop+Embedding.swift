import CRunLoop

extension RunLoop {
    /// What a host event loop needs to know before it sleeps: see
    /// ``RunLoop/prepareForEmbedding(in:)``.
    public struct EmbeddingWait: Sendable, Equatable {
        /// The loop knows of work now (a due timer, a signalled source, a
        /// queued block, a wake-up): the descriptor is already readable.
        public let hasWork: Bool
        /// Milliseconds until the mode's next timer, rounded up; `nil` when
        /// it has none; `0` when ``hasWork``. The descriptor alone is enough
        /// (the loop's timer is inside it); use this if your host wants a
        /// timeout anyway.
        public let timeoutMilliseconds: Int?
    }

    /// The loop's embedding descriptor: readable exactly when a pass of the
    /// loop, in the mode last given to ``prepareForEmbedding(in:)``, has work.
    ///
    /// For running this loop inside another event loop (GLib, libuv, a
    /// `poll()` loop of your own) on the loop's thread, with no thread and no
    /// polling: watch the descriptor for readability, call
    /// ``prepareForEmbedding(in:)`` before every sleep of the host, and
    /// ``runEmbeddedPass(in:)`` when it is readable. The same number for the
    /// loop's whole life; never read, write or close it. `nil` when the
    /// loop's thread has exited or descriptors ran out.
    ///
    /// ```swift
    /// import SwiftRunLoop
    /// import Glibc
    ///
    /// let loop = RunLoop.current
    /// if let fd = loop.embeddingFileDescriptor {
    ///     for _ in 0..<3 {
    ///         let wait = loop.prepareForEmbedding(in: .default)
    ///         var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    ///         _ = poll(&p, 1, Int32(wait.timeoutMilliseconds ?? 100))
    ///         loop.runEmbeddedPass(in: .default)
    ///     }
    /// }
    /// ```
    ///
    /// The C API: `RLRunLoopEmbedGetFD` in `CRunLoopEmbed.h`.
    public var embeddingFileDescriptor: Int32? {
        let fd = RLRunLoopEmbedGetFD(ref)
        return fd >= 0 ? fd : nil
    }

    /// Aims ``embeddingFileDescriptor`` at `mode` before the host sleeps, and
    /// tells how long the host may sleep.
    ///
    /// Call it on the loop's thread before every sleep of the host. Other
    /// modes' timers and sources never make the descriptor readable. Calls
    /// no callbacks. Off the loop's thread, or for ``Mode/common``: returns
    /// no work and no timeout, and does nothing.
    ///
    /// Unlike a pass of the loop sleeping by itself, the passes a host runs
    /// never call `beforeWaiting` and `afterWaiting` observers (as CF's
    /// `CFRunLoopRunInMode(mode, 0, ...)`).
    @discardableResult
    public func prepareForEmbedding(in mode: RunLoop.Mode) -> EmbeddingWait {
        var timeout: Int32 = -1
        let work = mode.withCName { RLRunLoopEmbedPrepare(ref, $0, &timeout) }
        return EmbeddingWait(hasWork: work, timeoutMilliseconds: timeout < 0 ? nil : Int(timeout))
    }

    /// Runs one pass of the loop in `mode` that never blocks: what a host
    /// does when ``embeddingFileDescriptor`` is readable.
    ///
    /// Same as ``run(mode:seconds:returnAfterSourceHandled:)`` with
    /// `seconds: 0`. Does nothing off the loop's thread.
    @discardableResult
    public func runEmbeddedPass(in mode: RunLoop.Mode) -> RunLoop.RunResult {
        run(mode: mode, seconds: 0, returnAfterSourceHandled: false)
    }

    /// The host stops sleeping on ``embeddingFileDescriptor``: wake-ups stop
    /// writing to it. Optional; ``prepareForEmbedding(in:)`` starts again.
    /// On the loop's thread.
    public func cancelEmbedding() {
        RLRunLoopEmbedCancel(ref)
    }
}
