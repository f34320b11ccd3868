// RunLoop.statistics: what a loop has done since it was made (passes,
// sleeps, why it woke, callouts of each kind, the longest callout, late
// timers), from the C core's RLRunLoopCopyStatistics.

import CRunLoop

extension RunLoop {
    /// A snapshot of what a run loop has done since it was made: its passes,
    /// its sleeps and why each ended, its callouts of each kind, the longest
    /// callout, and how late its timers fired.
    ///
    /// The loop counts as it goes, always, at the cost of a few instructions
    /// per callout; reading the counts costs no lock. Beyond Foundation and
    /// CoreFoundation, which keep no such counts (on macOS one traces the
    /// loop instead; here its USDT probes serve that, see the repository's
    /// `docs/PROBES.md`).
    ///
    /// Read on the loop's own thread (in a callout, or between runs) the
    /// snapshot is exact. Read from another thread while the loop runs, each
    /// count is one the loop had during the read, but two counts may come
    /// from moments a little apart, and the callouts of a long batch of
    /// queued blocks still running may lag by up to 64.
    public struct Statistics: Sendable, Hashable, CustomStringConvertible {
        /// What ended a sleep of the loop (when several things were ready,
        /// the first of timer or timeout, descriptor, wake-up).
        public enum WakeReason: Int, Sendable, Hashable, CaseIterable {
            /// One of the running mode's timers was due.
            case timer
            /// A file descriptor the mode watches was ready (a file-descriptor
            /// source, a message port, a signal source).
            case descriptor
            /// ``RunLoop/wakeUp()`` (or `perform` from another thread, which wakes the loop).
            case wakeUp
            /// A signal handled on the loop's thread interrupted the sleep,
            /// which then resumed.
            case signal
            /// The run's own time limit, with no timer due.
            case timeout
        }

        /// The kinds of callout into your code.
        public enum CalloutKind: Int, Sendable, Hashable, CaseIterable {
            /// An observer's handler.
            case observer
            /// A timer's handler.
            case timer
            /// A version-0 source's perform.
            case source0
            /// A version-1 (file-descriptor) source's perform.
            case source1
            /// A block or function queued with `perform`.
            case block
            /// The main dispatch queue's drain (the main loop only; it runs
            /// inside its version-1 source's perform and counts as both).
            case mainQueue
        }

        /// The longest callout measured.
        public struct Callout: Sendable, Hashable {
            /// How long it took, in seconds, on the coarse monotonic clock:
            /// whole kernel ticks (1 to 10 ms, 4 ms on most distributions),
            /// so that measuring every callout stays cheap.
            public var duration: Double
            /// Its kind.
            public var kind: CalloutKind
            /// The address of the function called (a handler's thunk for a
            /// Swift closure).
            public var functionAddress: UInt
            /// How many callouts the measurement covered: 1 for this callout
            /// alone; more deep in a long batch of callouts, which is timed
            /// in groups (the group that ended with this one took
            /// ``duration``).
            public var span: Int

            /// Whether the function is this module's trampoline into a
            /// Swift closure (a `Timer`'s, an observer's, a `perform` block):
            /// the same for every closure, so it does not tell which one
            /// (the USDT probes' stacks do).
            public var callsSwiftHandler: Bool {
                functionName?.contains("SwiftRunLoop") ?? false
            }

            /// The function's name, from the symbol tables (demangled), or
            /// `nil` when it has none.
            public var functionName: String? {
                guard let address = UnsafeRawPointer(bitPattern: functionAddress) else { return nil }
                return symbolName(at: address)
            }
        }

        /// Passes begun, in every mode, nested runs included.
        public var passes: Int
        /// Times the loop went to sleep (not counting polls, or a wake-up
        /// answered before it slept).
        public var sleeps: Int
        /// Why the loop woke, by reason. A sleep that a signal interrupted,
        /// and that resumed, counts once in ``sleeps`` and once per wake-up here.
        public var wakeUps: [WakeReason: Int]
        /// Callouts made, by kind.
        public var callouts: [CalloutKind: Int]
        /// The longest callout measured, or `nil` while none has lasted a
        /// clock tick.
        public var longestCallout: Callout?
        /// Timer callouts made.
        public var timersFired: Int
        /// Timers that fired more than their tolerance (or 1 ms, if more)
        /// after their fire date, measured at the start of the pass that
        /// fired them.
        public var timersFiredLate: Int
        /// The greatest lateness of a timer, in seconds (as above).
        public var latestTimerLateness: Double

        init(_ s: RLRunLoopStatistics) {
            let wakeCounts = withUnsafeBytes(of: s.wakeUps) { Array($0.bindMemory(to: UInt64.self)) }
            let calloutCounts = withUnsafeBytes(of: s.callouts) { Array($0.bindMemory(to: UInt64.self)) }
            passes = Int(s.passes)
            sleeps = Int(s.sleeps)
            wakeUps = Dictionary(uniqueKeysWithValues: WakeReason.allCases.map { ($0, Int(wakeCounts[$0.rawValue])) })
            callouts = Dictionary(
                uniqueKeysWithValues: CalloutKind.allCases.map { ($0, Int(calloutCounts[$0.rawValue])) })
            longestCallout =
                s.longestCalloutNanoseconds == 0
                ? nil
                : Callout(
                    duration: Double(s.longestCalloutNanoseconds) * 1e-9,
                    kind: CalloutKind(rawValue: Int(s.longestCalloutKind)) ?? .block,
                    functionAddress: UInt(bitPattern: s.longestCalloutFunction),
                    span: Int(s.longestCalloutSpan))
            timersFired = Int(s.timersFired)
            timersFiredLate = Int(s.timersFiredLate)
            latestTimerLateness = Double(s.latestTimerNanoseconds) * 1e-9
        }

        /// A few lines with every count, the longest callout named.
        public var description: String {
            let reasons = WakeReason.allCases.map { "\($0) \(wakeUps[$0] ?? 0)" }.joined(separator: ", ")
            let kinds = CalloutKind.allCases.map { "\($0) \(callouts[$0] ?? 0)" }.joined(separator: ", ")
            var text = "passes \(passes), sleeps \(sleeps); woken by \(reasons)\ncallouts: \(kinds)\n"
            if let longest = longestCallout {
                let name =
                    longest.callsSwiftHandler
                    ? "(a Swift handler)" : longest.functionName ?? "0x" + String(longest.functionAddress, radix: 16)
                let span = longest.span > 1 ? " (with the \(longest.span - 1) callouts before it)" : ""
                text += "longest callout: \(milliseconds(longest.duration)) ms, \(longest.kind) \(name)\(span)\n"
            } else {
                text += "longest callout: none of a clock tick or more\n"
            }
            text +=
                "timers: \(timersFired) fired, \(timersFiredLate) later than their tolerance "
                + "(latest \(milliseconds(latestTimerLateness)) ms after its date)\n"
            return text
        }
    }

    /// What this loop has done since it was made: passes, sleeps and why they
    /// ended, callouts by kind, the longest callout, late timers. Any thread.
    public var statistics: Statistics {
        var raw = RLRunLoopStatistics()
        raw.size = MemoryLayout<RLRunLoopStatistics>.size
        _ = RLRunLoopCopyStatistics(ref, &raw)
        return Statistics(raw)
    }
}

/// Milliseconds with three decimals, for the descriptions.
private func milliseconds(_ seconds: Double) -> String {
    let micro = Int((seconds * 1e6).rounded())
    let fraction = String(micro % 1000)
    return "\(micro / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
}
