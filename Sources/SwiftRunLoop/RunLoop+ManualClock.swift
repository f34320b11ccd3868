// A run loop on a manual clock: timers fire only as the program advances the
// clock, for tests that never wait (the C API is CRunLoopClock.h, whose
// header states the rules in full).

import CRunLoop
import FoundationEssentials

extension RunLoop {
    /// Puts this loop on a manual clock reading `date`: from then on its
    /// timers fire only as far as ``advance(by:)`` moves that clock, and a
    /// run with nothing left to do returns ``RunResult/idle`` instead of
    /// sleeping.
    ///
    /// Everything else behaves as on real time: modes, sources, observers,
    /// queued blocks, nested runs. Timers keep their dates (their deadlines
    /// are taken again on the new clock). Where a real loop would sleep, a
    /// loop on a manual clock moves its time (``currentDate``) toward the
    /// clock's (``clockDate``) one timer wake-up at a time, so timers fire in
    /// date order, each at its own time, and a repeating timer on every grid
    /// point it passes. ``perform(after:inModes:target:_:)-(Duration,_,_,_)``, idle tasks
    /// and the hang monitor measure on the same clock. Not in Foundation or
    /// CF.
    ///
    /// Only on the loop's own thread while it is not running (not from a
    /// callout); calling it again restarts the clock at another date.
    ///
    /// - Parameter date: What the clock reads; the reference date (2001) by
    ///   default, where dates are exact to the nanosecond.
    /// - Returns: `false`, with nothing changed, on another thread, inside a
    ///   run of this loop, or out of memory.
    @discardableResult
    public func useManualClock(at date: Date = Date(timeIntervalSinceReferenceDate: 0)) -> Bool {
        RLRunLoopUseManualClock(ref, date.absoluteTime)
    }

    /// Puts this loop back on real time; its timers keep their dates.
    ///
    /// - Returns: `false` on another thread or inside a run of this loop.
    @discardableResult
    public func useRealClock() -> Bool {
        RLRunLoopUseRealClock(ref)
    }

    /// Whether this loop runs on a manual clock (``useManualClock(at:)``).
    public var hasManualClock: Bool {
        RLRunLoopHasManualClock(ref)
    }

    /// The loop's time: what its timers and runs are measured against.
    ///
    /// On real time, now. On a manual clock, how far the loop has caught up
    /// with ``clockDate``: inside a timer's block, the time of the wake-up
    /// that fires it. Date timers on it (`loop.currentDate + delay`) rather
    /// than on `Date()`, which is always the wall clock. From any thread.
    public var currentDate: Date {
        Date(absoluteTime: RLRunLoopGetCurrentTime(ref))
    }

    /// The manual clock's time: where ``advance(by:)`` has moved it (never
    /// behind ``currentDate``); on real time, now. From any thread.
    public var clockDate: Date {
        Date(absoluteTime: RLRunLoopClockGetTime(ref))
    }

    /// Moves the manual clock `seconds` forward, from any thread.
    ///
    /// The loop catches up when it next runs (``runUntilIdle(in:)``), firing
    /// what comes due on the way. Called from one of the loop's own
    /// callouts, the time passes at once, as if that callout's work took it:
    /// timers that come due fire late, as on real time. From another thread
    /// it also wakes the loop.
    ///
    /// - Returns: `false`, with nothing done, on real time or for a negative,
    ///   infinite or NaN interval.
    @discardableResult
    public func advance(by seconds: TimeInterval) -> Bool {
        RLRunLoopClockAdvance(ref, seconds)
    }

    /// ``advance(by:)`` up to `date`; `false` for a date before
    /// ``clockDate`` (a manual clock never goes back) or on real time.
    @discardableResult
    public func advance(to date: Date) -> Bool {
        RLRunLoopClockSetTime(ref, date.absoluteTime)
    }

    /// Runs the loop in `mode` until it has done everything the manual
    /// clock allows: it catches up with ``clockDate``, firing timers on the
    /// way, and returns ``RunResult/idle`` (or ``RunResult/finished`` once
    /// the mode is empty, ``RunResult/stopped`` after ``stop()``).
    ///
    /// On real time it runs one polling pass (what is due now) and returns
    /// ``RunResult/timedOut``. Does nothing off the loop's thread
    /// (``RunResult/finished``).
    @discardableResult
    public func runUntilIdle(in mode: RunLoop.Mode = .default) -> RunResult {
        run(mode: mode, seconds: hasManualClock ? .infinity : 0, returnAfterSourceHandled: false)
    }
}
