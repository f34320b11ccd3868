// RunLoop: Foundation's RunLoop API (and CFRunLoop's) over the C core.
//
// One Swift object per C run loop: `current` caches the calling thread's
// wrapper in thread-local storage (released at thread exit), and the main
// thread's wrapper is `main`, so `RunLoop.current === RunLoop.current` and, on
// the main thread, `RunLoop.main === RunLoop.current`.

import CRunLoop
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A thread's event loop: it waits for and dispatches timers, sources,
/// observers and queued blocks, one mode at a time.
///
/// The counterpart of Foundation's `RunLoop` (`NSRunLoop`) and of
/// CoreFoundation's `CFRunLoop`, with macOS semantics. Every thread has
/// exactly one run loop, made the first time it is asked for
/// (``RunLoop/current``) and torn down when the thread exits.
///
/// ## Threads
/// The run methods (``run()``, ``run(until:)``, ``run(mode:before:)``,
/// ``acceptInput(forMode:before:)``, ``limitDate(forMode:)`` and
/// ``run(mode:seconds:returnAfterSourceHandled:)``) run the loop on the
/// calling thread, so they only act when called on the loop's own thread
/// (``isCurrent``); called on another thread they return at once without
/// running (`false`, `nil` or ``RunResult/finished``), as Foundation on Linux
/// does. Every other method is safe from any thread at any time, including
/// from inside a callout of this loop: ``wakeUp()``, ``stop()``, adding and
/// removing items, ``perform(_:)``.
///
/// That is why `RunLoop` is `Sendable`: its only state is the C run loop,
/// whose API is thread-safe, and the thread-bound operations check their
/// thread. Closures you hand it (blocks, timer and source handlers) run on
/// the loop's thread, which is usually not the thread that made them, so
/// they are `@Sendable`, as in Foundation: in Swift 6 mode the compiler
/// rejects a block that mutates a captured variable or captures a
/// non-`Sendable` value. Share state through `Sendable` values (a `Mutex`,
/// an `Atomic`, an actor), or keep it on the loop's thread with an actor
/// pinned to it (``RunLoopSerialExecutor``) and `assumeIsolated` in the
/// callouts.
///
/// ``RunLoop/main`` is the exception to running off its thread quietly: its
/// run methods called on another thread still return at once, but the first
/// such call writes a diagnostic to standard error, because it is always a
/// mistake, typically code after an `await` in an `async` main (which runs on
/// a dispatch thread; see ``RunLoop/runMain(_:)``).
///
/// ## Names
/// The type's name equals Foundation's. In a file that also imports
/// Foundation (or XCTest, which re-exports it on Linux), add
/// `import class SwiftRunLoop.RunLoop` (and `import class SwiftRunLoop.Timer`)
/// next to `import SwiftRunLoop`, or write `SwiftRunLoop.RunLoop`.
public final class RunLoop: @unchecked Sendable {
    /// The C run loop (one reference owned).
    let ref: OpaquePointer

    private init(retaining ref: OpaquePointer) {
        self.ref = ref
        _ = RLRetain(UnsafeRawPointer(ref))
    }

    deinit {
        RLRelease(UnsafeRawPointer(ref))
    }

    // MARK: Getting run loops

    /// The run loop of the calling thread, made on first use.
    ///
    /// Foundation's `RunLoop.current`, CF's `CFRunLoopGetCurrent()`. Reading it
    /// twice on a thread returns the same object; on the main thread it is
    /// ``main``. If the loop cannot be made (out of memory or file
    /// descriptors) the process stops with a message, as when an allocation
    /// fails (the C API returns NULL instead).
    public static var current: RunLoop {
        if let cached = pthread_getspecific(currentRunLoopKey) {
            return Unmanaged<RunLoop>.fromOpaque(cached).takeUnretainedValue()
        }
        let ref = RLRunLoopGetCurrent() ?? outOfResources("RunLoop.current")
        let loop = ref == main.ref ? main : RunLoop(retaining: ref)
        pthread_setspecific(currentRunLoopKey, Unmanaged.passRetained(loop).toOpaque())
        return loop
    }

    /// The run loop of the process's main thread, from any thread.
    ///
    /// Foundation's `RunLoop.main`, CF's `CFRunLoopGetMain()`. When the main
    /// loop runs on the main thread in a common mode it also drains
    /// `DispatchQueue.main`, and so runs `@MainActor` jobs (use a synchronous
    /// `main`: an `async` main hands the main thread to `dispatchMain()`).
    public static let main = RunLoop(retaining: RLRunLoopGetMain() ?? outOfResources("RunLoop.main"))

    /// The wrapper `RunLoop.current` returns on the thread of `ref`, a loop
    /// whose thread is running it (asked of that thread, so that identity
    /// holds: `thread.runLoop === RunLoop.current` there).
    static func wrapper(forLoopOf ref: OpaquePointer) -> RunLoop {
        let found = Mutex<RunLoop?>(nil)
        let other = RunLoop(retaining: ref)
        other.perform(waitUntilDone: true) { found.withLock { $0 = RunLoop.current } }
        return found.withLock { $0 } ?? other
    }

    /// Whether this is the calling thread's run loop.
    ///
    /// The run methods act only when this is `true`. (No Foundation equivalent;
    /// CF has the private `_CFRunLoopIsCurrent`.)
    public var isCurrent: Bool {
        RLRunLoopGetCurrent() == ref
    }

    /// The mode the loop is running in (its innermost run), or `nil` when it
    /// is not running.
    ///
    /// Foundation's `RunLoop.currentMode`, CF's `CFRunLoopCopyCurrentMode`.
    public var currentMode: RunLoop.Mode? {
        takeCString(RLRunLoopCopyCurrentMode(ref)).map(Mode.init(rawValue:))
    }

    /// Every mode the loop knows (a mode exists once something named it).
    ///
    /// CF's `CFRunLoopCopyAllModes`; Foundation has no equivalent.
    public var allModes: [RunLoop.Mode] {
        guard let list = RLRunLoopCopyAllModes(ref) else { return [] }
        defer { free(list) }
        var modes: [Mode] = []
        var index = 0
        while let name = list[index] {
            modes.append(Mode(rawValue: String(cString: name)))
            free(name)
            index += 1
        }
        return modes
    }

    // MARK: Running (Foundation level)

    /// Runs the loop in the default mode for as long as it has timers or sources.
    ///
    /// Foundation's `RunLoop.run()`: it calls ``run(mode:before:)`` with
    /// `Date.distantFuture` repeatedly, so it returns only once the default
    /// mode is empty. As on macOS, ``stop()`` ends only the current inner run,
    /// after which the next one starts; to run until told to stop, loop over
    /// ``run(mode:seconds:returnAfterSourceHandled:)`` yourself, or use a
    /// ``RunLoopThread``. Does nothing off the loop's thread.
    public func run() {
        while runOnce(.default, before: .distantFuture).map({ $0 != .idle }) ?? false {}
    }

    /// Runs the loop in the default mode until `limitDate`, or until it has
    /// no timers or sources left.
    ///
    /// Foundation's `RunLoop.run(until:)`: it calls ``run(mode:before:)``
    /// repeatedly until the date has passed or the mode is empty. A date in
    /// the past runs one polling pass. Does nothing off the loop's thread.
    /// On a manual clock (``useManualClock(at:)``) the date is the loop's
    /// (``currentDate``), and the run also returns once the loop is idle.
    public func run(until limitDate: Date) {
        while let result = runOnce(.default, before: limitDate), result != .idle,
            limitDate.timeIntervalSince(currentDate) > 0
        {}
    }

    /// Runs the loop once in `mode`: until a source has been handled, the
    /// loop is stopped, or `limitDate` passes.
    ///
    /// Foundation's `RunLoop.run(mode:before:)` (`-runMode:beforeDate:`), i.e.
    /// CF's `CFRunLoopRunInMode(mode, limitDate - now, true)`. Timers fire
    /// during the run but, as in CF, do not end it; blocks queued with
    /// ``perform(_:)`` run but do not end it either. The run also ends when
    /// the mode is left empty (say, after its last one-shot timer fired) or
    /// ``stop()`` is called. As on macOS, a mode whose only content was
    /// queued blocks sleeps after running them, until `limitDate`, a wake-up
    /// or a timer added meanwhile.
    ///
    /// - Returns: `false` when the run could not start because `mode` has no
    ///   timers, sources or queued blocks (or is ``Mode/common``, or this is
    ///   not the calling thread's loop); `true` otherwise, as on macOS, also
    ///   when the mode became empty during the run.
    @discardableResult
    public func run(mode: RunLoop.Mode, before limitDate: Date) -> Bool {
        runOnce(mode, before: limitDate) != nil
    }

    /// Runs one polling pass of the loop in `mode` and returns when its next
    /// timer fires.
    ///
    /// Foundation's `RunLoop.limitDate(forMode:)`: the pass fires timers that
    /// are due and performs signalled sources.
    ///
    /// - Returns: The next fire date of the mode's timers; `Date.distantFuture`
    ///   when it has sources but no timers; `nil` when the mode is empty or
    ///   this is not the calling thread's loop.
    public func limitDate(forMode mode: RunLoop.Mode) -> Date? {
        guard isCurrentOrReport(), !isEmpty(mode) else { return nil }
        if run(mode, seconds: 0) == .finished { return nil }
        let next = mode.withCName { RLRunLoopGetNextTimerFireDate(ref, $0) }
        return next == 0 ? .distantFuture : Date(absoluteTime: next)
    }

    /// Runs the loop once in `mode` until a source has been handled or
    /// `limitDate` passes.
    ///
    /// Foundation's `RunLoop.acceptInput(forMode:before:)`, i.e.
    /// `CFRunLoopRunInMode(mode, limitDate - now, true)`. Does nothing off the
    /// loop's thread or when the mode is empty.
    public func acceptInput(forMode mode: RunLoop.Mode, before limitDate: Date) {
        guard isCurrentOrReport() else { return }
        _ = run(mode, seconds: limitDate.timeIntervalSince(currentDate))
    }

    // MARK: Running (CoreFoundation level)

    /// Runs the loop in `mode` for up to `seconds` and tells why it returned.
    ///
    /// CF's `CFRunLoopRunInMode`. `seconds <= 0` runs exactly one polling
    /// pass; with `returnAfterSourceHandled` the run returns after the first
    /// source it handles (a timer or a performed block does not count). Runs
    /// may nest: calling this from a callout runs the loop again inside it.
    ///
    /// - Returns: ``RunResult/finished`` at once (no Entry or Exit callouts)
    ///   when `mode` has no sources, timers or queued blocks, is
    ///   ``Mode/common``, or this is not the calling thread's loop; otherwise
    ///   ``RunResult/stopped``, ``RunResult/timedOut`` or
    ///   ``RunResult/handledSource`` (or, on a manual clock,
    ///   ``RunResult/idle``).
    @discardableResult
    public func run(mode: RunLoop.Mode, seconds: TimeInterval, returnAfterSourceHandled: Bool) -> RunLoop.RunResult {
        guard isCurrentOrReport() else { return .finished }
        let result = mode.withCName { RLRunLoopRunInMode($0, seconds, returnAfterSourceHandled) }
        return RunResult(result)
    }

    /// Makes the innermost active run of the loop return ``RunResult/stopped``.
    ///
    /// CF's `CFRunLoopStop` (Foundation has it only as private API). It does
    /// nothing to a loop that is not running. From any thread.
    public func stop() {
        RLRunLoopStop(ref)
    }

    /// Wakes the loop if it is sleeping, so it services queued blocks and
    /// signalled sources now.
    ///
    /// CF's `CFRunLoopWakeUp`. Cheap when the loop is awake. From any thread.
    public func wakeUp() {
        RLRunLoopWakeUp(ref)
    }

    /// Whether the loop is sleeping, waiting for an event.
    ///
    /// CF's `CFRunLoopIsWaiting`. A snapshot, from any thread.
    public var isWaiting: Bool {
        RLRunLoopIsWaiting(ref)
    }

    /// Adds `mode` to the loop's common modes, so everything added for
    /// ``Mode/common`` is serviced in it too.
    ///
    /// CF's `CFRunLoopAddCommonMode`. A mode never leaves the set; adding
    /// ``Mode/common`` itself or an empty name is ignored.
    public func addCommonMode(_ mode: RunLoop.Mode) {
        mode.withCName { RLRunLoopAddCommonMode(ref, $0) }
    }

    // MARK: Blocks

    /// Queues `block` to run once on the loop's thread the next time the loop
    /// runs in the default mode, and wakes the loop.
    ///
    /// Foundation's `RunLoop.perform(_:)` (CF's `CFRunLoopPerformBlock` with
    /// `kCFRunLoopDefaultMode`). Unlike Foundation's, it also wakes the loop
    /// (``wakeUp()``), so a block queued from another thread runs promptly
    /// instead of waiting for an unrelated event. Blocks run in FIFO order; a
    /// queued block counts as work, so the mode is not empty while it waits.
    /// A block queued while blocks run waits for the next point where the
    /// loop runs blocks. Blocks still queued when the loop's thread exits are
    /// dropped without being run, and released.
    public func perform(_ block: consuming @escaping @Sendable () -> Void) {
        enqueuePayload(QueuedBlock(body: block), inMode: kRLRunLoopDefaultMode, call: queuedBlockCall)
        RLRunLoopWakeUp(ref)
    }

    /// Queues `block` to run once on the loop's thread the next time the loop
    /// runs in any of `modes`, and wakes the loop.
    ///
    /// Foundation's `RunLoop.perform(inModes:block:)`. The block runs once, in
    /// whichever of the modes the loop runs first (``Mode/common`` matches any
    /// common mode). An empty list does nothing. Wakes the loop, like
    /// ``perform(_:)``.
    public func perform(inModes modes: [RunLoop.Mode], block: consuming @escaping @Sendable () -> Void) {
        if modes.count == 1 {
            guard !modes[0].rawValue.isEmpty else { return }
            var queued: QueuedBlock? = QueuedBlock(body: block)
            modes[0].withCName { enqueuePayload(queued.take()!, inMode: $0, call: queuedBlockCall) }
            RLRunLoopWakeUp(ref)
        } else {
            enqueue(BlockItem(block), inModes: modes)
        }
    }

    /// Queues `payload` for one mode, held in the C item itself (at most
    /// two words), so queueing allocates nothing in Swift; does not wake the
    /// loop. `call` gets the item's copy once, to move the payload out: with
    /// `run` true to run it, false when the item was dropped. The payload is
    /// moved, never copied (`consuming` parameters and `Optional.take()`
    /// through the closures), so queueing retains nothing and the caller
    /// releases nothing.
    @inline(__always)
    func enqueuePayload<Payload>(
        _ payload: consuming Payload, inMode mode: RLRunLoopMode,
        call: @convention(c) (UnsafeMutableRawPointer?, Bool) -> Void
    ) {
        precondition(MemoryLayout<Payload>.size <= 2 * MemoryLayout<UnsafeRawPointer>.size)  // folded away
        var queued: Payload? = consume payload
        withUnsafeTemporaryAllocation(of: Payload.self, capacity: 1) { slot in
            // The item takes this value over (C copies its bytes).
            slot.initializeElement(at: 0, to: queued.take()!)
            RLRunLoopPerformPayload(ref, mode, call, slot.baseAddress)
        }
    }

    /// Queues `item` once per distinct, non-empty mode of `modes` (it runs at
    /// most once) and wakes the loop if anything was queued.
    func enqueue(_ item: PerformItem, inModes modes: [RunLoop.Mode]) {
        if modes.count == 1 {
            guard !modes[0].rawValue.isEmpty else { return }
            let info = Unmanaged.passRetained(item).toOpaque()
            modes[0].withCName { RLRunLoopPerformFunctionWithRelease(ref, $0, performTrampoline, info, performRelease) }
            RLRunLoopWakeUp(ref)
            return
        }
        var queued = false
        for (index, mode) in modes.enumerated() where !mode.rawValue.isEmpty && !modes[..<index].contains(mode) {
            let info = Unmanaged.passRetained(item).toOpaque()
            mode.withCName { RLRunLoopPerformFunctionWithRelease(ref, $0, performTrampoline, info, performRelease) }
            queued = true
        }
        if queued { RLRunLoopWakeUp(ref) }
    }

    // MARK: Timers

    /// Schedules `timer` on this loop in `mode`.
    ///
    /// Foundation's `RunLoop.add(_:forMode:)`, CF's `CFRunLoopAddTimer`. The
    /// loop keeps the timer alive while it is scheduled, so you need not keep
    /// a reference. A timer belongs to at most one run loop (adding it to a
    /// second one is ignored) but may be in several of its modes; adding it
    /// again to the same mode does nothing; an invalidated timer is ignored.
    public func add(_ timer: Timer, forMode mode: RunLoop.Mode) {
        mode.withCName { RLRunLoopAddTimer(ref, timer.ref, $0) }
        if !isCurrent { wakeUp() }
        noteTimerAdded()
    }

    /// Removes `timer` from `mode` of this loop, without invalidating it.
    ///
    /// CF's `CFRunLoopRemoveTimer` (Foundation has no public equivalent).
    public func remove(_ timer: Timer, forMode mode: RunLoop.Mode) {
        mode.withCName { RLRunLoopRemoveTimer(ref, timer.ref, $0) }
    }

    /// Whether `timer` is scheduled in `mode` of this loop.
    ///
    /// CF's `CFRunLoopContainsTimer`; for ``Mode/common`` it tells whether the
    /// timer was added for the common modes as such.
    public func contains(_ timer: Timer, forMode mode: RunLoop.Mode) -> Bool {
        mode.withCName { RLRunLoopContainsTimer(ref, timer.ref, $0) }
    }

    // MARK: Sources

    /// Adds `source` to `mode` of this loop.
    ///
    /// CF's `CFRunLoopAddSource`. A source may be in several modes and
    /// several loops; the loop keeps it alive while it is added.
    public func add(_ source: RunLoop.Source, forMode mode: RunLoop.Mode) {
        mode.withCName { RLRunLoopAddSource(ref, source.object.pointer, $0) }
    }

    /// Removes `source` from `mode` of this loop, without invalidating it.
    ///
    /// CF's `CFRunLoopRemoveSource`.
    public func remove(_ source: RunLoop.Source, forMode mode: RunLoop.Mode) {
        mode.withCName { RLRunLoopRemoveSource(ref, source.object.pointer, $0) }
    }

    /// Whether `source` is in `mode` of this loop.
    ///
    /// CF's `CFRunLoopContainsSource`.
    public func contains(_ source: RunLoop.Source, forMode mode: RunLoop.Mode) -> Bool {
        mode.withCName { RLRunLoopContainsSource(ref, source.object.pointer, $0) }
    }

    /// Adds, removes and finds an object that reaches the loop through a
    /// run-loop source of its own (a file descriptor, a message port): what
    /// their `add`, `remove` and `contains` do.
    func addSource(of object: some SourceBacked, forMode mode: RunLoop.Mode) {
        guard let source = object.runLoopSource() else { return }
        mode.withCName { RLRunLoopAddSource(ref, source.pointer, $0) }
    }

    func removeSource(of object: some SourceBacked, forMode mode: RunLoop.Mode) {
        guard let source = object.runLoopSource() else { return }
        mode.withCName { RLRunLoopRemoveSource(ref, source.pointer, $0) }
    }

    func containsSource(of object: some SourceBacked, forMode mode: RunLoop.Mode) -> Bool {
        guard let source = object.runLoopSource() else { return false }
        return mode.withCName { RLRunLoopContainsSource(ref, source.pointer, $0) }
    }

    // MARK: Observers

    /// Adds `observer` to `mode` of this loop.
    ///
    /// CF's `CFRunLoopAddObserver`. An observer belongs to at most one run
    /// loop (adding it to a second one is ignored); the loop keeps it alive
    /// while it is added. Observers do not keep a mode from being empty.
    public func add(_ observer: RunLoop.Observer, forMode mode: RunLoop.Mode) {
        mode.withCName { RLRunLoopAddObserver(ref, observer.object.pointer, $0) }
    }

    /// Removes `observer` from `mode` of this loop, without invalidating it.
    ///
    /// CF's `CFRunLoopRemoveObserver`.
    public func remove(_ observer: RunLoop.Observer, forMode mode: RunLoop.Mode) {
        mode.withCName { RLRunLoopRemoveObserver(ref, observer.object.pointer, $0) }
    }

    /// Whether `observer` is in `mode` of this loop.
    ///
    /// CF's `CFRunLoopContainsObserver`.
    public func contains(_ observer: RunLoop.Observer, forMode mode: RunLoop.Mode) -> Bool {
        mode.withCName { RLRunLoopContainsObserver(ref, observer.object.pointer, $0) }
    }

    // MARK: Private

    /// Whether running `mode` now would finish at once (CF's `_CFRunLoopFinished`).
    private func isEmpty(_ mode: Mode) -> Bool {
        mode.withCName { RLRunLoopModeIsEmpty(ref, $0) }
    }

    /// One `CFRunLoopRunInMode(mode, seconds, true)`, as Foundation's run methods do.
    private func run(_ mode: Mode, seconds: TimeInterval) -> RunResult {
        RunResult(mode.withCName { RLRunLoopRunInMode($0, seconds, true) })
    }

    /// ``run(mode:before:)``, saying why it returned; `nil` when it could
    /// not start. The limit is on the loop's own time (``currentDate``: the
    /// wall clock, or its manual clock).
    private func runOnce(_ mode: Mode, before limitDate: Date) -> RunResult? {
        guard isCurrentOrReport(), !isEmpty(mode) else { return nil }
        return run(mode, seconds: limitDate.timeIntervalSince(currentDate))
    }
}

extension RunLoop: Hashable {
    /// Whether two values are the same run loop.
    ///
    /// There is one `RunLoop` object per run loop, so this is identity, as
    /// Foundation's `NSObject` equality is for run loops.
    public static func == (lhs: RunLoop, rhs: RunLoop) -> Bool {
        lhs.ref == rhs.ref
    }

    /// Hashes the run loop's identity.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ref)
    }
}

extension RunLoop: CustomStringConvertible {
    /// The C core's dump of the loop: every mode with its sources, observers
    /// and timers (with their next fire dates).
    ///
    /// Like `po RunLoop.current` on macOS (CF's `CFCopyDescription`).
    public var description: String { describe(ref) }
}

/// Thread-local slot holding the calling thread's `RunLoop` (+1), released at thread exit.
private let currentRunLoopKey: pthread_key_t = {
    var key = pthread_key_t()
    let rc = pthread_key_create(&key) { value in
        guard let value else { return }
        Unmanaged<RunLoop>.fromOpaque(value).release()
    }
    precondition(rc == 0, "pthread_key_create failed")
    return key
}()

/// Work queued with `enqueue`; queued once per mode, run at most once.
/// Every queued copy holds a reference; only the loop's thread calls `run`.
class PerformItem: @unchecked Sendable {
    /// Runs the work, the first time it is called.
    func run() {}
}

/// A block queued with `perform`.
private final class BlockItem: PerformItem, @unchecked Sendable {
    private var block: (@Sendable () -> Void)?
    init(_ block: @escaping @Sendable () -> Void) { self.block = block }

    override func run() {
        guard let block else { return }
        self.block = nil
        block()
    }
}

/// A block queued with `perform` for a single mode: the C item holds it as
/// its payload (two words, bitwise-movable like every Swift closure). A
/// struct, not the bare function type: memory typed as a function type
/// holds the function reabstracted, which allocates a thunk context.
private struct QueuedBlock {
    let body: @Sendable () -> Void
}

/// Takes a queued block out of the item's payload and runs it, or only
/// releases it when the item was dropped (the loop's thread exited); the C
/// side calls this once per item.
private let queuedBlockCall: @convention(c) (UnsafeMutableRawPointer?, Bool) -> Void = { payload, run in
    let block = payload.unsafelyUnwrapped.bindMemory(to: QueuedBlock.self, capacity: 1).move().body
    if run { block() }
}

private let performTrampoline: @convention(c) (UnsafeMutableRawPointer?) -> Void = { info in
    Unmanaged<PerformItem>.fromOpaque(info!).takeUnretainedValue().run()
}

/// Drops the reference one queued copy held, whether it ran or was dropped.
private let performRelease: @convention(c) (UnsafeMutableRawPointer?) -> Void = { info in
    Unmanaged<PerformItem>.fromOpaque(info!).release()
}

/// An object that a loop watches through a run-loop source it owns (the C
/// object makes the source once and keeps it).
protocol SourceBacked {
    func runLoopSource() -> CObject?
}
