import CRunLoop

extension RunLoop {
    /// The name of a run-loop mode: the set of sources, timers and observers a
    /// run services.
    ///
    /// Equivalent to Foundation's `RunLoop.Mode` and CoreFoundation's
    /// `CFRunLoopMode`. Modes are equal when their names are; a mode exists in
    /// a run loop once something has named it there. Besides the two constants
    /// you may name any mode of your own, e.g. `RunLoop.Mode("myapp.modal")`,
    /// and make it one of the common modes with ``RunLoop/addCommonMode(_:)``.
    public struct Mode: RawRepresentable, Hashable, Sendable {
        /// The mode's name, e.g. `"kCFRunLoopDefaultMode"`.
        public let rawValue: String

        /// Makes a mode with the given name.
        ///
        /// Same as ``init(rawValue:)``; mirrors Foundation's `RunLoop.Mode(_:)`.
        public init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        /// Makes a mode with the given name.
        ///
        /// Mirrors Foundation's `RunLoop.Mode(rawValue:)`.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The mode that threads run in by default: `"kCFRunLoopDefaultMode"`.
        ///
        /// Foundation's `RunLoop.Mode.default`, CF's `kCFRunLoopDefaultMode`.
        /// It is always one of the common modes.
        public static let `default` = Mode("kCFRunLoopDefaultMode")

        /// The pseudo-mode standing for every common mode: `"kCFRunLoopCommonModes"`.
        ///
        /// Foundation's `RunLoop.Mode.common`, CF's `kCFRunLoopCommonModes`.
        /// An item added for `.common` is in every mode of the run loop's
        /// common set, including modes added to that set later. A loop never
        /// runs *in* `.common` itself: running it returns at once.
        public static let common = Mode("kCFRunLoopCommonModes")

        /// Calls `body` with the mode's name as a C string. The two constants
        /// are passed as the C core's own, which it recognises by address
        /// (no name lookup by string comparison on every call).
        func withCName<R>(_ body: (RLRunLoopMode) throws -> R) rethrows -> R {
            if let constant = ConstantMode(self) { return try body(constant.name) }
            return try rawValue.withCString(body)
        }
    }

    /// A mode whose C name is one of the core's constants: known once, it
    /// can be kept (a Sendable value, unlike the C pointer) and passed with
    /// no string comparison at all.
    enum ConstantMode {
        case defaultMode, common

        init?(_ mode: Mode) {
            if mode.rawValue == Mode.default.rawValue {
                self = .defaultMode
            } else if mode.rawValue == Mode.common.rawValue {
                self = .common
            } else {
                return nil
            }
        }

        var name: RLRunLoopMode { self == .common ? kRLRunLoopCommonModes : kRLRunLoopDefaultMode }
    }

    /// The result of a CoreFoundation-level run: why
    /// ``RunLoop/run(mode:seconds:returnAfterSourceHandled:)`` returned.
    ///
    /// CF's `CFRunLoopRunResult`; the raw values are CF's.
    public enum RunResult: Int, Sendable {
        /// The mode had no sources and no timers (nothing to wait for): CF's
        /// `kCFRunLoopRunFinished`.
        case finished = 1
        /// ``RunLoop/stop()`` ended the run: CF's `kCFRunLoopRunStopped`.
        case stopped = 2
        /// The time limit passed: CF's `kCFRunLoopRunTimedOut`.
        case timedOut = 3
        /// A source was handled and the run was asked to return after one:
        /// CF's `kCFRunLoopRunHandledSource`. Timers and performed blocks do
        /// not count as sources.
        case handledSource = 4
        /// Only a loop on a manual clock (``RunLoop/useManualClock(at:)``):
        /// the run had nothing left to do until the clock is advanced. Not in
        /// CF (`kRLRunLoopRunIdle`).
        case idle = 5

        init(_ result: RLRunLoopRunResult) {
            switch result {
            case kRLRunLoopRunStopped: self = .stopped
            case kRLRunLoopRunTimedOut: self = .timedOut
            case kRLRunLoopRunHandledSource: self = .handledSource
            case kRLRunLoopRunIdle: self = .idle
            default: self = .finished
            }
        }
    }

    /// The stages of a run loop's pass that an ``Observer`` can watch.
    ///
    /// CF's `CFRunLoopActivity`, with CF's raw values (1, 2, 4, 32, 64, 128),
    /// unlike the internal `RunLoop._Activity` of Foundation on Linux.
    public struct Activity: OptionSet, Hashable, Sendable {
        /// The activity bits, equal to CF's.
        public let rawValue: UInt

        /// Makes an activity set from CF's bits.
        public init(rawValue: UInt) {
            self.rawValue = rawValue
        }

        /// A run is starting (once per run, before the first pass): `kCFRunLoopEntry`.
        public static let entry = Activity(rawValue: 1 << 0)
        /// The loop is about to fire due timers: `kCFRunLoopBeforeTimers`.
        public static let beforeTimers = Activity(rawValue: 1 << 1)
        /// The loop is about to perform signalled sources: `kCFRunLoopBeforeSources`.
        public static let beforeSources = Activity(rawValue: 1 << 2)
        /// The loop is about to sleep: `kCFRunLoopBeforeWaiting`.
        public static let beforeWaiting = Activity(rawValue: 1 << 5)
        /// The loop has woken up: `kCFRunLoopAfterWaiting`.
        public static let afterWaiting = Activity(rawValue: 1 << 6)
        /// A run is ending: `kCFRunLoopExit`.
        public static let exit = Activity(rawValue: 1 << 7)
        /// Every activity: `kCFRunLoopAllActivities` (`0x0FFFFFFF`).
        public static let allActivities = Activity(rawValue: 0x0FFF_FFFF)
    }
}

extension RunLoop.Mode: CustomStringConvertible {
    /// The mode's name.
    public var description: String { rawValue }
}

extension RunLoop.Activity: CustomStringConvertible {
    /// The names of the activities in the set, e.g. `[entry, exit]`.
    public var description: String {
        if self == .allActivities { return "allActivities" }
        let names: [(RunLoop.Activity, String)] = [
            (.entry, "entry"), (.beforeTimers, "beforeTimers"), (.beforeSources, "beforeSources"),
            (.beforeWaiting, "beforeWaiting"), (.afterWaiting, "afterWaiting"), (.exit, "exit"),
        ]
        let present = names.filter { contains($0.0) }.map(\.1)
        let known = names.reduce(into: RunLoop.Activity()) { $0.formUnion($1.0) }
        let extra = subtracting(known).rawValue
        let all = present + (extra != 0 ? ["0x" + String(extra, radix: 16)] : [])
        return all.count == 1 ? all[0] : "[" + all.joined(separator: ", ") + "]"
    }
}
