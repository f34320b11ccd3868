// A GTK-style program from Swift: the process's main thread runs
// g_main_loop_run with RunLoop.main hosted in GLib's default context, and
// main-actor work, DispatchQueue.main blocks and a Timer of RunLoop.main,
// all sent from another thread, run there. XCTest, because its test methods
// run on the main thread (Swift Testing's do not).

import CGLib
import Dispatch
import SwiftRunLoop
import SwiftRunLoopGLib
import Synchronization
import XCTest
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer
import class Foundation.Thread
#if canImport(Glibc)
import Glibc
#endif

/// True on the process's main thread (Foundation records it at load time).
private func onMainThread() -> Bool { Thread.isMainThread }

/// What ran, and where; the last of the three quits the GLib loop.
private final class Arrivals: Sendable {
    struct State { var ran: Set<String> = []; var offMain: [String] = [] }
    let state = Mutex(State())
    nonisolated(unsafe) let mainLoop: OpaquePointer?
    init(_ mainLoop: OpaquePointer?) { self.mainLoop = mainLoop }

    func arrived(_ what: String) {
        let onMain = onMainThread()
        let all = state.withLock { s -> Bool in
            s.ran.insert(what)
            if !onMain { s.offMain.append(what) }
            return s.ran.count == 3
        }
        if all { g_main_loop_quit(mainLoop) }
    }
}

private let timedOut = Atomic<Bool>(false)

final class GLibMainThreadTests: XCTestCase {
    func test_main_actor_main_queue_and_main_timer_run_inside_g_main_loop_run() throws {
        try XCTSkipUnless(onMainThread(), "XCTest did not run this on the main thread")
        let mainLoop = g_main_loop_new(nil, 0)  // GLib's global default context
        let hosted = GLibHostedRunLoop()  // RunLoop.main, default mode
        XCTAssertNotNil(hosted)
        let arrivals = Arrivals(mainLoop)

        // A generous bound, so a lost wake-up fails instead of hanging.
        timedOut.store(false, ordering: .relaxed)
        let guardID = g_timeout_add(
            30_000,
            { loop in
                timedOut.store(true, ordering: .relaxed)
                g_main_loop_quit(OpaquePointer(loop))
                return 0  // G_SOURCE_REMOVE
            }, UnsafeMutableRawPointer(mainLoop))

        // Everything is sent from another thread while the main thread sleeps
        // in GLib's poll.
        Task.detached {
            await MainActor.run { arrivals.arrived("main actor") }
        }
        DispatchQueue.global().async {
            DispatchQueue.main.async { arrivals.arrived("main queue") }
            let timer = Timer(timeInterval: 0.01, repeats: false) { _ in arrivals.arrived("main timer") }
            RunLoop.main.add(timer, forMode: .default)
        }

        g_main_loop_run(mainLoop)

        if timedOut.load(ordering: .relaxed) {
            XCTFail("GLib's loop quit on the 30 s bound")
        } else {
            g_source_remove(guardID)
        }
        let state = arrivals.state.withLock { $0 }
        XCTAssertEqual(state.ran, ["main actor", "main queue", "main timer"])
        XCTAssertEqual(state.offMain, [], "ran off the main thread")
        hosted?.invalidate()
        g_main_loop_unref(mainLoop)
    }
}
