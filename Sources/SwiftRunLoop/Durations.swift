// Spans of time as Swift's `Duration`, next to Foundation's `TimeInterval`.
//
// The rule the public API follows: a date is a `Date`; a span of time is a
// `TimeInterval` (seconds), as in Foundation and CF, and every parameter that
// takes a span also takes a `Duration`, under the same label (`for:` where
// the `TimeInterval` label names its unit, `seconds:`). Properties stay
// `TimeInterval`, as Foundation's are. Each overload here converts and calls
// the `TimeInterval` one, so both behave alike.

extension Duration {
    /// The duration in seconds, as Foundation counts time.
    var timeInterval: TimeInterval {
        let (whole, attoseconds) = components
        return TimeInterval(whole) + TimeInterval(attoseconds) * 1e-18
    }
}

extension RunLoop {
    /// Runs the loop in `mode` for up to `duration` and tells why it returned.
    ///
    /// ``run(mode:seconds:returnAfterSourceHandled:)`` with a `Duration`.
    ///
    /// - Parameters:
    ///   - mode: The mode to run in.
    ///   - duration: The longest run; zero or less runs one polling pass.
    ///   - returnAfterSourceHandled: Whether to return after the first
    ///     source handled.
    /// - Returns: Why the run returned.
    @discardableResult
    public func run(mode: RunLoop.Mode, for duration: Duration, returnAfterSourceHandled: Bool) -> RunLoop.RunResult {
        run(mode: mode, seconds: duration.timeInterval, returnAfterSourceHandled: returnAfterSourceHandled)
    }

    /// Runs `block` once on this loop's thread after `delay`, when the loop
    /// runs in one of `modes`; returns a request that can cancel it.
    ///
    /// ``perform(after:inModes:target:_:)-(TimeInterval,_,_,_)`` with a
    /// `Duration`.
    ///
    /// - Parameters:
    ///   - delay: The time from now; negative means now.
    ///   - modes: The modes the timer is in (default: the default mode).
    ///   - target: An object to cancel the request by.
    ///   - block: The closure, run on the loop's thread.
    /// - Returns: The request.
    @discardableResult
    public func perform(
        after delay: Duration, inModes modes: [RunLoop.Mode] = [.default],
        target: AnyObject? = nil, _ block: @escaping @Sendable () -> Void
    ) -> PerformRequest {
        perform(after: delay.timeInterval, inModes: modes, target: target, block)
    }

    /// A stream of the fires of a repeating timer on this run loop.
    ///
    /// ``ticks(every:tolerance:forMode:)-(TimeInterval,_,_)`` with `Duration`s.
    ///
    /// - Parameters:
    ///   - interval: The time between fires.
    ///   - tolerance: How late a fire may be; see ``Timer/tolerance``.
    ///   - mode: The mode the timer is scheduled in; the common modes by default.
    /// - Returns: The fire dates.
    public func ticks(
        every interval: Duration, tolerance: Duration = .zero,
        forMode mode: RunLoop.Mode = .common
    ) -> AsyncStream<Date> {
        ticks(every: interval.timeInterval, tolerance: tolerance.timeInterval, forMode: mode)
    }

    /// Suspends the calling task for `seconds`, as measured by a one-shot
    /// timer on this run loop.
    ///
    /// ``sleep(until:forMode:)`` with a date `seconds` from now.
    ///
    /// - Parameters:
    ///   - seconds: How long to sleep.
    ///   - mode: The mode the timer is in; the common modes by default.
    public func sleep(for seconds: TimeInterval, forMode mode: RunLoop.Mode = .common) async {
        await sleep(until: Date(timeIntervalSinceNow: seconds), forMode: mode)
    }

    /// Suspends the calling task for `duration`, as measured by a one-shot
    /// timer on this run loop.
    ///
    /// ``sleep(until:forMode:)`` with a date `duration` from now.
    ///
    /// - Parameters:
    ///   - duration: How long to sleep.
    ///   - mode: The mode the timer is in; the common modes by default.
    public func sleep(for duration: Duration, forMode mode: RunLoop.Mode = .common) async {
        await sleep(until: Date(timeIntervalSinceNow: duration.timeInterval), forMode: mode)
    }
}

extension Timer {
    /// Makes a timer that first fires at `date` and then, if `repeats`, every
    /// `interval`.
    ///
    /// ``init(fire:interval:repeats:block:)-(_,TimeInterval,_,_)`` with a `Duration`.
    ///
    /// - Parameters:
    ///   - date: The first fire date.
    ///   - interval: The time between fires of a repeating timer.
    ///   - repeats: Whether the timer fires again after its first fire.
    ///   - block: Called on the run loop's thread each time the timer fires.
    public convenience init(
        fire date: Date, interval: Duration, repeats: Bool,
        block: @escaping @Sendable (Timer) -> Void
    ) {
        self.init(fire: date, interval: interval.timeInterval, repeats: repeats, userInfo: nil, block: block)
    }

    /// Makes a timer that first fires `timeInterval` from now and then, if
    /// `repeats`, every `timeInterval`.
    ///
    /// ``init(timeInterval:repeats:block:)-(TimeInterval,_,_)`` with a `Duration`.
    ///
    /// - Parameters:
    ///   - timeInterval: The time until the first fire, and between fires.
    ///   - repeats: Whether the timer fires again after its first fire.
    ///   - block: Called on the run loop's thread each time the timer fires.
    public convenience init(timeInterval: Duration, repeats: Bool, block: @escaping @Sendable (Timer) -> Void) {
        self.init(timeInterval: timeInterval.timeInterval, repeats: repeats, userInfo: nil, block: block)
    }

    /// Makes a timer that first fires `interval` from now and schedules it in
    /// the default mode of the current thread's run loop.
    ///
    /// ``scheduledTimer(withTimeInterval:repeats:block:)-(TimeInterval,_,_)``
    /// with a `Duration`.
    ///
    /// - Parameters:
    ///   - interval: The time until the first fire, and between fires.
    ///   - repeats: Whether the timer fires again after its first fire.
    ///   - block: Called on the current thread's loop each time the timer fires.
    /// - Returns: The scheduled timer.
    @discardableResult
    public class func scheduledTimer(
        withTimeInterval interval: Duration, repeats: Bool,
        block: @escaping @Sendable (Timer) -> Void
    ) -> Timer {
        scheduledTimer(withTimeInterval: interval.timeInterval, repeats: repeats, userInfo: nil, block: block)
    }
}

extension Timer {
    /// Makes a timer that first fires at `date` and then, if `repeats`, every
    /// `interval`, keeping `userInfo`.
    ///
    /// ``init(fire:interval:repeats:userInfo:block:)-(_,TimeInterval,_,_,_)``
    /// with a `Duration`.
    ///
    /// - Parameters:
    ///   - date: The first fire date.
    ///   - interval: The time between fires of a repeating timer.
    ///   - repeats: Whether the timer fires again after its first fire.
    ///   - userInfo: Any value to keep with the timer (``userInfo``).
    ///   - block: Called on the run loop's thread each time the timer fires.
    public convenience init(
        fire date: Date, interval: Duration, repeats: Bool, userInfo: (any Sendable)?,
        block: @escaping @Sendable (Timer) -> Void
    ) {
        self.init(fire: date, interval: interval.timeInterval, repeats: repeats, userInfo: userInfo, block: block)
    }

    /// Makes a timer that first fires `timeInterval` from now and then, if
    /// `repeats`, every `timeInterval`, keeping `userInfo`.
    ///
    /// ``init(timeInterval:repeats:userInfo:block:)-(TimeInterval,_,_,_)`` with a `Duration`.
    ///
    /// - Parameters:
    ///   - timeInterval: The time until the first fire, and between fires.
    ///   - repeats: Whether the timer fires again after its first fire.
    ///   - userInfo: Any value to keep with the timer (``userInfo``).
    ///   - block: Called on the run loop's thread each time the timer fires.
    public convenience init(
        timeInterval: Duration, repeats: Bool, userInfo: (any Sendable)?,
        block: @escaping @Sendable (Timer) -> Void
    ) {
        self.init(timeInterval: timeInterval.timeInterval, repeats: repeats, userInfo: userInfo, block: block)
    }

    /// Makes a timer that first fires `interval` from now, keeping
    /// `userInfo`, and schedules it in the default mode of the current
    /// thread's run loop.
    ///
    /// ``scheduledTimer(withTimeInterval:repeats:userInfo:block:)-(TimeInterval,_,_,_)``
    /// with a `Duration`.
    ///
    /// - Parameters:
    ///   - interval: The time until the first fire, and between fires.
    ///   - repeats: Whether the timer fires again after its first fire.
    ///   - userInfo: Any value to keep with the timer (``userInfo``).
    ///   - block: Called on the current thread's loop each time the timer fires.
    /// - Returns: The scheduled timer.
    @discardableResult
    public class func scheduledTimer(
        withTimeInterval interval: Duration, repeats: Bool, userInfo: (any Sendable)?,
        block: @escaping @Sendable (Timer) -> Void
    ) -> Timer {
        scheduledTimer(withTimeInterval: interval.timeInterval, repeats: repeats, userInfo: userInfo, block: block)
    }
}

extension RunLoop.HangMonitor {
    /// Makes a stopped monitor of `runLoop` that reports stalls longer than
    /// `threshold`.
    ///
    /// ``init(runLoop:threshold:handler:)-(_,TimeInterval,_)`` with a `Duration`.
    ///
    /// - Parameters:
    ///   - runLoop: The loop to watch.
    ///   - threshold: Time awake without an activity that makes a stall.
    ///   - handler: Called on the monitor's own thread for each report; `nil`
    ///     writes each report to standard error.
    /// - Returns: `nil` when `threshold` is not positive.
    public convenience init?(
        runLoop: RunLoop, threshold: Duration, handler: (@Sendable (Report) -> Void)? = nil
    ) {
        self.init(runLoop: runLoop, threshold: threshold.timeInterval, handler: handler)
    }
}

extension RunLoop.IdleQueue {
    /// Makes a queue whose tasks run on `runLoop`'s thread when it is idle in
    /// `mode`, for up to `slice` per idle pass.
    ///
    /// ``init(runLoop:mode:slice:)-(_,_,TimeInterval)`` with a `Duration`.
    ///
    /// - Parameters:
    ///   - runLoop: The loop that runs the tasks.
    ///   - mode: The mode whose idle passes run them.
    ///   - slice: Time of tasks per idle pass; zero runs one task per pass.
    public convenience init(runLoop: RunLoop, mode: RunLoop.Mode = .default, slice: Duration) {
        self.init(runLoop: runLoop, mode: mode, slice: slice.timeInterval)
    }
}
