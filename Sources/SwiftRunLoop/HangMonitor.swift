// RunLoop.HangMonitor: the C core's RLHangMonitor with a closure.
//
// Ownership as for the other wrappers (see Internal.swift): the wrapper owns
// the C monitor (released in deinit, which also invalidates it); the C side's
// info is a HandlerBox whose closure is dropped when the monitor is
// invalidated, so a handler that captures the monitor makes no lasting cycle
// once invalidate() is called.

import CRunLoop
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension RunLoop {
    /// Watches a run loop from a thread of its own and reports when the loop
    /// stalls: when it has been awake longer than a threshold since its last
    /// activity.
    ///
    /// The stall monitor of the CFRunLoop articles ("卡顿监测"), built on
    /// observers and a watchdog thread. One segment of a pass (after
    /// ``Activity/beforeSources`` or ``Activity/afterWaiting``, until the
    /// loop sleeps or reaches its next activity) that lasts longer than
    /// ``threshold`` is a stall; time asleep, or outside every run of the
    /// loop, never is. A stall is reported once the threshold has passed and
    /// again every ``threshold`` seconds while it lasts, each ``Report``
    /// carrying the duration so far, the mode, the activity the loop is stuck
    /// after and the stalled thread's stack.
    ///
    /// When nothing stalls it costs one clock read and one atomic store per
    /// activity; the watchdog thread sleeps. To capture the stack it briefly
    /// interrupts the stalled thread with a real-time signal
    /// (`SIGRTMIN + 6`): a system call that is never restarted after a signal
    /// handler (such as `nanosleep` or `poll`) returns early with `EINTR` in
    /// that thread. Do not use that signal for anything else while a monitor
    /// runs.
    ///
    /// Modes: ``start()`` watches every mode the loop has at that moment and
    /// the default mode; call ``watch(_:)`` for modes made later.
    public final class HangMonitor: @unchecked Sendable {
        /// One report of a stall.
        public struct Report: Sendable, CustomStringConvertible {
            /// How long the loop has been awake since ``activity``, so far.
            public let duration: TimeInterval
            /// The monitor's threshold.
            public let threshold: TimeInterval
            /// The last activity the loop reached before it stalled.
            public let activity: RunLoop.Activity
            /// The mode of that activity.
            public let mode: RunLoop.Mode
            /// Which stall this is: 1 for the first stall the monitor saw, then 2, ...
            public let stallNumber: Int
            /// Which report of this stall: 1 for the first, then 2, ... as it lasts.
            public let reportNumber: Int
            /// The stalled thread's stack, innermost frame first, as
            /// `backtrace_symbols` writes frames (`module(symbol+offset) [address]`),
            /// with Swift symbols demangled; empty when the stack could not be
            /// captured.
            ///
            /// Frames inside an executable are named too, although
            /// `backtrace_symbols` sees only exported symbols: the monitor
            /// reads the file's static symbol table (`.symtab`), so no linker
            /// flag is needed. A stripped executable (`strip`, or
            /// `-Xlinker -s`) has none, and its frames read `app(+0x47ecd)`.
            public let frames: [String]
            /// The loop's statistics when the report was made (read while the
            /// loop is stalled: the stalling callout is not in them yet), or
            /// `nil` if they could not be read.
            public let statistics: RunLoop.Statistics?
            /// The report as the default handler writes it to standard error.
            public let description: String
        }

        let ref: OpaquePointer
        let box: HandlerBox<Report>

        /// Makes a stopped monitor of `runLoop` that reports stalls longer
        /// than `threshold` seconds to `handler`.
        ///
        /// - Parameters:
        ///   - runLoop: The loop to watch; it may belong to any thread.
        ///   - threshold: Seconds awake without an activity that make a stall;
        ///     raised to at least 0.001.
        ///   - handler: Called on the monitor's own thread (never the loop's)
        ///     for each report; `nil` writes each report to standard error.
        /// - Returns: `nil` when `threshold` is not a positive number.
        public init?(runLoop: RunLoop, threshold: TimeInterval, handler: (@Sendable (Report) -> Void)? = nil) {
            let handlerBox = HandlerBox<Report>(handler ?? writeToStandardError)
            var context = RLHangMonitorContext(
                version: 0, info: handlerBox.info, retain: callbackBoxRetain,
                release: callbackBoxRelease, copyDescription: nil)
            let made = withExtendedLifetime(handlerBox) {
                RLHangMonitorCreate(runLoop.ref, threshold, hangTrampoline, &context)
            }
            guard let made else { return nil }
            self.ref = made
            self.box = handlerBox
        }

        deinit {
            RLHangMonitorRelease(ref)
        }

        /// Starts watching the loop.
        ///
        /// Adds the monitor's observers to every mode the loop has now and to
        /// the default mode, and starts the watchdog thread on first use.
        /// Starting a running monitor does nothing.
        ///
        /// - Returns: `false` when the monitor was invalidated or its thread
        ///   could not be started.
        @discardableResult
        public func start() -> Bool {
            RLHangMonitorStart(ref)
        }

        /// Also watches `mode` (for modes the loop made after ``start()``).
        ///
        /// ``RunLoop/Mode/common`` watches every mode the loop has now.
        public func watch(_ mode: RunLoop.Mode) {
            mode.withCName { RLHangMonitorAddMode(ref, $0) }
        }

        /// Stops watching; ``start()`` resumes. A report being made is still
        /// delivered. Safe from any thread, including the handler.
        public func stop() {
            RLHangMonitorStop(ref)
        }

        /// Stops the monitor for good, ends its thread and releases the handler.
        ///
        /// Waits for a handler call in progress unless called from the handler
        /// itself. Idempotent; safe from any thread.
        public func invalidate() {
            RLHangMonitorInvalidate(ref)
            box.dropCallbacks()
        }

        /// Whether the monitor is watching (started, not stopped).
        public var isRunning: Bool { RLHangMonitorIsRunning(ref) }

        /// Whether the monitor can still be started (`false` once invalidated).
        public var isValid: Bool { RLHangMonitorIsValid(ref) }

        /// The threshold in seconds, after clamping.
        public var threshold: TimeInterval { RLHangMonitorGetThreshold(ref) }

        /// The number of stalls seen so far (each once, however many reports it had).
        public var stallCount: Int { Int(RLHangMonitorGetStallCount(ref)) }

        /// The number of reports delivered so far.
        public var reportCount: Int { Int(RLHangMonitorGetReportCount(ref)) }
    }
}

private let hangTrampoline: RLHangMonitorCallBack = { _, report, info in
    guard let report = report?.pointee, let info else { return }
    let box = Unmanaged<HandlerBox<RunLoop.HangMonitor.Report>>.fromOpaque(info).takeUnretainedValue()
    var frames: [String] = []
    if let symbols = report.frames {
        for index in 0..<Int(max(report.frameCount, 0)) {
            let text = symbols[index].map { String(cString: $0) } ?? "?"
            frames.append(readableFrame(text, address: report.addresses.flatMap { UnsafeRawPointer($0[index]) }))
        }
    }
    let mode = report.mode.map { String(cString: $0) } ?? ""
    let activity = RunLoop.Activity(rawValue: UInt(report.activity.rawValue))
    var description =
        "RLHangMonitor: stalled \(milliseconds(report.duration)) ms (threshold "
        + "\(milliseconds(report.threshold)) ms, stall \(report.stallNumber), report \(report.reportNumber))\n"
    description += "  in mode \"\(mode)\" after \(String(cString: RLRunLoopActivityGetName(report.activity))); stack:\n"
    for (index, frame) in frames.enumerated() { description += "  #\(index) \(frame)\n" }
    let statistics = report.statistics.map { RunLoop.Statistics($0.pointee) }
    if let statistics {
        description += "  loop statistics:\n"
        for line in statistics.description.split(separator: "\n") { description += "  \(line)\n" }
    }
    let value = RunLoop.HangMonitor.Report(
        duration: report.duration, threshold: report.threshold, activity: activity,
        mode: RunLoop.Mode(mode), stallNumber: Int(report.stallNumber),
        reportNumber: Int(report.reportNumber), frames: frames, statistics: statistics,
        description: description)
    withExtendedLifetime(box) { box.call(value) }
}

/// The default handler: the report's text on standard error.
private let writeToStandardError: @Sendable (RunLoop.HangMonitor.Report) -> Void = { report in
    var bytes = Array(report.description.utf8)
    _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
}

/// Whole milliseconds of `seconds`, for the report text.
private func milliseconds(_ seconds: Double) -> Int {
    seconds.isFinite ? Int((seconds * 1000).rounded()) : 0
}

extension RunLoop.HangMonitor: CustomStringConvertible {
    /// The C core's description (state, loop, threshold, stalls and reports).
    public var description: String { describe(ref) }
}
