// A one-time hint for a common mistake in tests: a timer added to
// RunLoop.main while XCTest's wait(for:timeout:) runs the main thread with
// Foundation's RunLoop, which knows nothing of ours, so the timer never
// fires and the wait times out. FoundationBridge.install()
// (SwiftRunLoopFoundation) is the fix.
//
// How it is noticed, cheaply: in a process with XCTest loaded, a timer added
// to RunLoop.main on the main thread queues one check on the main dispatch
// queue (at most one at a time). Our main loop drains that queue when it
// runs, and so does Foundation's. So a check that runs while our main loop
// is not running was run by another loop (Foundation's, or dispatchMain):
// if our main loop still has a timer in its default mode and the bridge
// does not carry it, the hint is written once to standard error. Timers
// only: whether blocks or sources wait cannot be asked without cost (the
// main loop always holds the main queue's own source). In a process without
// XCTest, adding a timer costs one atomic load more, and nothing else.

import CRunLoop
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension RunLoop {
    /// Notes a timer added to this loop, for the hint above: one atomic
    /// load, unless XCTest is in the process (nor is the main loop made for it).
    @inline(__always)
    func noteTimerAdded() {
        if ForeignRunHint.state.load(ordering: .relaxed) < ForeignRunHint.armed {
            ForeignRunHint.noteTimerAdded(to: self)
        }
    }

    /// Tells SwiftRunLoop that Foundation's run loop now carries (or no
    /// longer carries) the calling thread's loop; for SwiftRunLoopFoundation.
    @_spi(Bridging)
    public static func noteFoundationBridge(installed: Bool) {
        guard RunLoop.main.isCurrent else { return }
        ForeignRunHint.bridged.store(installed, ordering: .relaxed)
    }

    /// Lets the hint be written again, and tells whether it was written
    /// since the last call; for tests.
    @_spi(Testing)
    public static func resetForeignRunHint() -> Bool {
        ForeignRunHint.state.exchange(ForeignRunHint.unknown, ordering: .relaxed) == ForeignRunHint.reported
    }
}

enum ForeignRunHint {
    /// XCTest not looked for yet.
    static let unknown: UInt8 = 0
    /// XCTest is loaded; no check is queued.
    static let idle: UInt8 = 1
    /// A check is queued on the main dispatch queue.
    static let armed: UInt8 = 2
    /// Written already, or no XCTest in the process: nothing more to do.
    static let off: UInt8 = 3
    /// Written (and so off).
    static let reported: UInt8 = 4

    static let state = Atomic<UInt8>(unknown)
    /// The main thread's bridge to Foundation is installed.
    static let bridged = Atomic<Bool>(false)

    static func noteTimerAdded(to loop: RunLoop) {
        var current = state.load(ordering: .relaxed)
        if current == unknown {
            let next = xctestIsLoaded() ? idle : off
            current = state.compareExchange(expected: unknown, desired: next, ordering: .relaxed).original
            if current == unknown { current = next }
        }
        guard current == idle, loop === RunLoop.main, loop.isCurrent,
            state.compareExchange(expected: idle, desired: armed, ordering: .relaxed).exchanged
        else { return }
        if !enqueueOnMainQueue(check) { state.store(off, ordering: .relaxed) }
    }

    /// Runs on the main thread, from the main dispatch queue.
    private static let check: @convention(c) (UnsafeMutableRawPointer?) -> Void = { _ in
        guard state.compareExchange(expected: armed, desired: idle, ordering: .relaxed).exchanged else { return }
        let main = RunLoop.main
        guard !bridged.load(ordering: .relaxed), main.currentMode == nil,
            RLRunLoopGetNextTimerFireDate(main.ref, kRLRunLoopDefaultMode) != 0,
            state.compareExchange(expected: idle, desired: reported, ordering: .relaxed).exchanged
        else { return }
        let message =
            "SwiftRunLoop: another run loop (Foundation's RunLoop, as XCTest's wait(for:timeout:) runs it, "
            + "or dispatchMain) is running the main thread while SwiftRunLoop's RunLoop.main, which has timers "
            + "to fire, does not run: they wait until it does. To have Foundation's RunLoop "
            + "run them, call FoundationBridge.install() (product SwiftRunLoopFoundation) on this thread first, "
            + "e.g. in setUp(); or run SwiftRunLoop's loop yourself. (Written once.)\n"
        var bytes = Array(message.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }

    private static func xctestIsLoaded() -> Bool {
        for name in ["libXCTest.so", "libXCTest.so.0"] {
            if let handle = dlopen(name, RTLD_NOLOAD | RTLD_LAZY) {
                dlclose(handle)
                return true
            }
        }
        return false
    }

    /// `dispatch_async_f(dispatch_get_main_queue(), nil, body)`, looked up at
    /// run time as the C core looks up libdispatch, so this module does not
    /// link Dispatch. False when libdispatch is not in the process.
    private static func enqueueOnMainQueue(_ body: @convention(c) (UnsafeMutableRawPointer?) -> Void) -> Bool {
        typealias AsyncF =
            @convention(c) (
                UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, @convention(c) (UnsafeMutableRawPointer?) -> Void
            ) -> Void
        guard let asyncF = dlsym(nil, "dispatch_async_f"), let mainQueue = dlsym(nil, "_dispatch_main_q") else {
            return false
        }
        unsafeBitCast(asyncF, to: AsyncF.self)(mainQueue, nil, body)
        return true
    }
}
