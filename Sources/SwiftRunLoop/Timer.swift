// Timer: Foundation's Timer over RLRunLoopTimer.
//
// Ownership: the Timer owns its C timer; the C timer's info is a TimerBox
// (one reference, handed over at creation and released once, at
// invalidation or when the C timer is freed) holding the block and only a
// *weak* reference back to the Timer. A run loop
// retains the C timers scheduled on it, so a scheduled timer keeps firing
// after its last Swift reference is gone: the box then makes a fresh wrapper
// for the callout. Invalidation makes the C side release the box, which drops
// the block (and what it captured) at once.

import CRunLoop
import FoundationEssentials

/// A timer that fires after a time interval, once or repeatedly, while it is
/// scheduled on a run loop.
///
/// The counterpart of Foundation's `Timer` (`NSTimer`), over CF's
/// `CFRunLoopTimer`, with macOS semantics:
/// - ``init(timeInterval:repeats:block:)-(TimeInterval,_,_)`` first fires
///   one interval from now (Foundation on Linux fires at once);
/// - a repeating timer stays on its grid (`fireDate + k * interval`): when the
///   loop was busy past several fire dates it fires once and resumes on the
///   grid, skipping the missed ones;
/// - a one-shot timer is invalidated after it fires;
/// - ``tolerance`` is honoured: the loop may fire the timer up to that late
///   to coalesce wake-ups;
/// - invalidating a timer releases its block at once.
///
/// A scheduled timer is kept alive by its run loop, so
/// `_ = Timer.scheduledTimer(...)` keeps firing. The timer never keeps itself
/// alive through its block: the block receives the timer as its argument,
/// so it need not capture it.
///
/// A timer fires on its run loop's thread. It is `Sendable`, as Foundation's
/// is: every method and property may be used from any thread (its state is
/// the thread-safe C timer), and its block is `@Sendable` because it runs on
/// the loop's thread, not necessarily the one that made it. Timers are
/// `Hashable` by identity, so they can be kept in a `Set`.
public final class Timer: @unchecked Sendable {
    /// The C timer (one reference owned).
    let ref: OpaquePointer
    /// The block's box, shared with the C timer's context.
    let box: TimerBox

    /// Wraps an existing C timer (for a callout whose wrapper is gone).
    init(retaining ref: OpaquePointer, box: TimerBox) {
        self.ref = ref
        self.box = box
        _ = RLRetain(UnsafeRawPointer(ref))
    }

    /// Makes a timer that first fires at `date` and then, if `repeats`, every
    /// `interval` seconds; schedule it with ``RunLoop/add(_:forMode:)-(Timer,_)``.
    ///
    /// ``init(fire:interval:repeats:userInfo:block:)-(_,TimeInterval,_,_,_)`` with no
    /// `userInfo`.
    ///
    /// - Parameters:
    ///   - date: The first fire date.
    ///   - interval: Seconds between fires of a repeating timer.
    ///   - repeats: Whether the timer fires again after its first fire.
    ///   - block: Called on the run loop's thread each time the timer fires,
    ///     with the timer.
    public convenience init(
        fire date: Date, interval: TimeInterval, repeats: Bool,
        block: @escaping @Sendable (Timer) -> Void
    ) {
        self.init(fire: date, interval: interval, repeats: repeats, userInfo: nil, block: consume block)
    }

    /// Makes a timer that first fires at `date` and then, if `repeats`, every
    /// `interval` seconds, keeping `userInfo`; schedule it with
    /// ``RunLoop/add(_:forMode:)-(Timer,_)``.
    ///
    /// Foundation's `Timer(fire:interval:repeats:block:)`, CF's
    /// `CFRunLoopTimerCreateWithHandler`. ``fireDate`` returns `date`
    /// exactly. For a repeating timer an `interval` of 0 or less (or NaN)
    /// becomes 0.1 ms, as on macOS; a non-repeating timer ignores it and its
    /// ``timeInterval`` is 0.
    ///
    /// - Parameters:
    ///   - date: The first fire date.
    ///   - interval: Seconds between fires of a repeating timer.
    ///   - repeats: Whether the timer fires again after its first fire.
    ///   - userInfo: Any value to keep with the timer (``userInfo``).
    ///   - block: Called on the run loop's thread each time the timer fires,
    ///     with the timer.
    public init(
        fire date: Date, interval: TimeInterval, repeats: Bool, userInfo: (any Sendable)?,
        block: @escaping @Sendable (Timer) -> Void
    ) {
        let interval = repeats ? (interval > 0 ? interval : 0.0001) : 0
        let box = TimerBox(consume block, userInfo: consume userInfo)
        // A release and no retain: the C timer takes this reference over and
        // releases it once, when invalidated or freed (after a callout under
        // way), so a fire needs no retain and release of its own.
        var context = RLRunLoopTimerContext(
            version: 0, info: Unmanaged.passRetained(box).toOpaque(), retain: nil,
            release: timerBoxRelease, copyDescription: nil)
        let ref =
            RLRunLoopTimerCreate(date.absoluteTime, interval, 0, 0, timerTrampoline, &context)
            ?? outOfResources("Timer")
        self.ref = ref
        self.box = box
        box.setWrapper(self)
    }

    /// Makes a timer that first fires `interval` seconds from now and then, if
    /// `repeats`, every `interval` seconds; schedule it with
    /// ``RunLoop/add(_:forMode:)-(Timer,_)``.
    ///
    /// ``init(timeInterval:repeats:userInfo:block:)-(TimeInterval,_,_,_)`` with no
    /// `userInfo`.
    ///
    /// - Parameters:
    ///   - timeInterval: Seconds until the first fire, and between fires.
    ///   - repeats: Whether the timer fires again after its first fire.
    ///   - block: Called on the run loop's thread each time the timer fires.
    public convenience init(timeInterval: TimeInterval, repeats: Bool, block: @escaping @Sendable (Timer) -> Void) {
        self.init(timeInterval: timeInterval, repeats: repeats, userInfo: nil, block: consume block)
    }

    /// Makes a timer that first fires `interval` seconds from now and then, if
    /// `repeats`, every `interval` seconds, keeping `userInfo`; schedule it with
    /// ``RunLoop/add(_:forMode:)-(Timer,_)``.
    ///
    /// Foundation's `Timer(timeInterval:repeats:block:)`, with macOS's first
    /// fire date (now + `interval`), not Foundation-on-Linux's (now).
    ///
    /// - Parameters:
    ///   - timeInterval: Seconds until the first fire, and between fires.
    ///   - repeats: Whether the timer fires again after its first fire.
    ///   - userInfo: Any value to keep with the timer (``userInfo``).
    ///   - block: Called on the run loop's thread each time the timer fires.
    public convenience init(
        timeInterval: TimeInterval, repeats: Bool, userInfo: (any Sendable)?,
        block: @escaping @Sendable (Timer) -> Void
    ) {
        let delay = timeInterval > 0 ? timeInterval : 0
        self.init(
            fire: Date(timeIntervalSinceNow: delay), interval: timeInterval, repeats: repeats,
            userInfo: consume userInfo, block: consume block)
    }

    /// Makes a timer that first fires `interval` seconds from now and
    /// schedules it in the default mode of the current thread's run loop.
    ///
    /// ``scheduledTimer(withTimeInterval:repeats:userInfo:block:)-(TimeInterval,_,_,_)``
    /// with no `userInfo`.
    ///
    /// - Parameters:
    ///   - interval: Seconds until the first fire, and between fires.
    ///   - repeats: Whether the timer fires again after its first fire.
    ///   - block: Called on the current thread's loop each time the timer fires.
    @discardableResult
    public class func scheduledTimer(
        withTimeInterval interval: TimeInterval, repeats: Bool,
        block: @escaping @Sendable (Timer) -> Void
    ) -> Timer {
        scheduledTimer(withTimeInterval: interval, repeats: repeats, userInfo: nil, block: block)
    }

    /// Makes a timer that first fires `interval` seconds from now, keeping
    /// `userInfo`, and schedules it in the default mode of the current
    /// thread's run loop.
    ///
    /// Foundation's `Timer.scheduledTimer(withTimeInterval:repeats:block:)`.
    /// The timer fires when that thread runs its loop in the default mode.
    /// "Now" is the loop's time (``RunLoop/currentDate``), so on a manual
    /// clock the timer fires once that clock has been advanced by `interval`.
    ///
    /// - Parameters:
    ///   - interval: Seconds until the first fire, and between fires.
    ///   - repeats: Whether the timer fires again after its first fire.
    ///   - userInfo: Any value to keep with the timer (``userInfo``).
    ///   - block: Called on the current thread's loop each time the timer fires.
    @discardableResult
    public class func scheduledTimer(
        withTimeInterval interval: TimeInterval, repeats: Bool,
        userInfo: (any Sendable)?,
        block: @escaping @Sendable (Timer) -> Void
    ) -> Timer {
        // From the loop's time: the wall clock, or its manual clock.
        let loop = RunLoop.current
        let timer = Timer(
            fire: loop.currentDate.addingTimeInterval(interval > 0 ? interval : 0), interval: interval,
            repeats: repeats, userInfo: userInfo, block: block)
        loop.add(timer, forMode: .default)
        return timer
    }

    deinit {
        RLRelease(UnsafeRawPointer(ref))
    }

    /// Calls the block now, on the calling thread, without changing the
    /// schedule; a non-repeating timer is then invalidated.
    ///
    /// Foundation's `Timer.fire()`. Does nothing to an invalidated timer.
    public func fire() {
        guard isValid else { return }
        box.call(self)
        if !RLRunLoopTimerDoesRepeat(ref) { invalidate() }
    }

    /// Stops the timer for good: it is removed from its run loop and its block
    /// is released.
    ///
    /// Foundation's `Timer.invalidate()`, CF's `CFRunLoopTimerInvalidate`. Safe
    /// from any thread and from inside the timer's own block (the block
    /// finishes running first). Idempotent.
    public func invalidate() {
        RLRunLoopTimerInvalidate(ref)
        box.dropCallbacks()
    }

    /// Whether the timer can still fire: `false` once it was invalidated (a
    /// one-shot timer is invalidated after it fires).
    ///
    /// Foundation's `Timer.isValid`.
    public var isValid: Bool {
        RLRunLoopTimerIsValid(ref)
    }

    /// The date the timer fires next; setting it reschedules the timer.
    ///
    /// Foundation's `Timer.fireDate`, CF's `CFRunLoopTimerGet/SetNextFireDate`.
    /// Reads exactly what was set (or given at creation), and for a repeating
    /// timer moves along its grid as it fires. Setting it from any thread
    /// takes effect at once, even on a sleeping loop; a repeating timer then
    /// continues from the new date. An invalidated timer reads as the
    /// reference date (2001-01-01) and ignores new dates, as in CF.
    public var fireDate: Date {
        get { Date(absoluteTime: RLRunLoopTimerGetNextFireDate(ref)) }
        set { RLRunLoopTimerSetNextFireDate(ref, newValue.absoluteTime) }
    }

    /// The value given at creation, kept for the timer's whole life (also after
    /// it is invalidated).
    ///
    /// Foundation's `Timer.userInfo`; `Sendable`, since the timer is.
    public var userInfo: (any Sendable)? {
        box.userInfo
    }

    /// The interval between fires of a repeating timer; 0 for a one-shot timer.
    ///
    /// Foundation's `Timer.timeInterval`.
    public var timeInterval: TimeInterval {
        RLRunLoopTimerGetInterval(ref)
    }

    /// How late after ``fireDate`` the loop may fire the timer, to coalesce
    /// wake-ups and save power; 0 by default.
    ///
    /// Foundation's `Timer.tolerance`. Negative or NaN values become 0; for a
    /// repeating timer the value is capped at half the interval, as on macOS.
    /// (Foundation on Linux ignores tolerance; this layer honours it.)
    public var tolerance: TimeInterval {
        get { RLRunLoopTimerGetTolerance(ref) }
        set { RLRunLoopTimerSetTolerance(ref, newValue) }
    }
}

extension Timer: Hashable {
    /// Whether two values are the same timer (identity, as for Foundation's
    /// `NSObject`-based timers).
    public static func == (lhs: Timer, rhs: Timer) -> Bool {
        lhs.ref == rhs.ref
    }

    /// Hashes the timer's identity.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ref)
    }
}

extension Timer: CustomStringConvertible {
    /// The C core's description of the timer (validity, next fire date,
    /// interval, tolerance, run loop).
    public var description: String { describe(ref) }
}

/// The C timer's info: the block, and a weak way back to a Swift wrapper.
final class TimerBox: CallbackBox, @unchecked Sendable {
    private var block: (@Sendable (Timer) -> Void)?
    /// The timer's userInfo: immutable, so read without the lock.
    let userInfo: (any Sendable)?
    private weak var wrapper: Timer?
    /// Tasks waiting in `Timer.nextFire()`, resumed after the next fire, or
    /// with `nil` when the block is dropped (invalidation).
    private var waiters = [Int: CheckedContinuation<Date?, Never>]()  // not a literal: an empty literal is a call
    private var nextWaiterID = 0

    init(_ block: @escaping @Sendable (Timer) -> Void, userInfo: consuming (any Sendable)?) {
        self.block = block
        self.userInfo = userInfo
    }

    /// Records the wrapper being initialised. No lock: the C timer is not in
    /// any run loop yet, and adding it to one (under the loop's lock) orders
    /// this store before any fire.
    func setWrapper(_ timer: Timer) {
        wrapper = timer
    }

    /// A fire from the C core: finds or makes the wrapper, calls the block.
    /// Reads the block between `lock()` and `unlock()` (see `Lock.lock()`)
    /// and copies the waiters only when there are some, so a fire with no
    /// waiter allocates nothing.
    func fire(_ ref: OpaquePointer) {
        let lock = self.lock
        lock.lock()
        let block = self.block
        let timer = wrapper ?? remakeWrapper(ref)
        let waiters = self.waiters.isEmpty ? [] : takeWaiters()
        lock.unlock()
        block?(timer)
        if waiters.isEmpty { return }
        let now = Date()
        for waiter in waiters { waiter.resume(returning: now) }
    }

    /// A wrapper for a fire after the user dropped theirs. Lock held. Kept
    /// (weakly) only for a repeating timer: a one-shot timer fires once, and
    /// a weak reference to a new object costs its side table's allocation.
    private func remakeWrapper(_ ref: OpaquePointer) -> Timer {
        let timer = Timer(retaining: ref, box: self)
        if RLRunLoopTimerDoesRepeat(ref) { wrapper = timer }
        return timer
    }

    /// The waiters of the fire under way, removed. Lock held.
    private func takeWaiters() -> [CheckedContinuation<Date?, Never>] {
        defer { waiters.removeAll() }
        return Array(waiters.values)
    }

    /// `Timer.fire()`: the block only.
    func call(_ timer: Timer) {
        let lock = self.lock
        lock.lock()
        let block = self.block
        lock.unlock()
        block?(timer)
    }

    override func dropCallbacks() {
        let lock = self.lock
        lock.lock()
        let block = self.block
        self.block = nil
        let waiters = self.waiters.isEmpty ? [] : takeWaiters()
        lock.unlock()
        for waiter in waiters { waiter.resume(returning: nil) }
        _ = block  // released here, outside the lock
    }

    /// Registers a waiter; returns nil (without keeping it) when the block was
    /// already dropped.
    func addWaiter(_ continuation: CheckedContinuation<Date?, Never>) -> Int? {
        lock.withLock {
            guard block != nil else { return nil }
            nextWaiterID += 1
            waiters[nextWaiterID] = continuation
            return nextWaiterID
        }
    }

    func removeWaiter(_ id: Int) -> CheckedContinuation<Date?, Never>? {
        lock.withLock { waiters.removeValue(forKey: id) }
    }
}

/// A fire: the C timer holds its box's reference until the callout ends.
private let timerTrampoline: RLRunLoopTimerCallBack = { ref, info in
    Unmanaged<TimerBox>.fromOpaque(info.unsafelyUnwrapped)._withUnsafeGuaranteedRef { $0.fire(ref.unsafelyUnwrapped) }
}

/// The C timer let go of its box (invalidated or freed): the block goes.
/// When no wrapper (and no `nextFire` task) holds the box any more, nothing
/// else can reach it, so its deinit drops the block without the lock.
private let timerBoxRelease: @convention(c) (UnsafeRawPointer?) -> Void = { info in
    var box = Unmanaged<TimerBox>.fromOpaque(info.unsafelyUnwrapped).takeRetainedValue()
    if !isKnownUniquelyReferenced(&box) { box.dropCallbacks() }
}
