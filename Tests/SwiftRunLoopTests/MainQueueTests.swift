// The main run loop drains DispatchQueue.main, and so @MainActor work, without
// dispatchMain(): libdispatch's main-queue eventfd is a version-1 source in the
// main loop's common modes (Sources/CRunLoop/core/rl_main_queue.c).
//
// These tests run the main thread's loop, so they need XCTest to call them on
// the process's main thread (it does for synchronous tests); elsewhere they
// are skipped.

import XCTest
import Dispatch
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
#if canImport(Glibc)
import Glibc
#endif

@_silgen_name("gettid") private func systemThreadID() -> Int32

private func onProcessMainThread() -> Bool {
    systemThreadID() == getpid()
}

final class MainQueueTests: XCTestCase {
    private func requireMainThread() throws {
        guard onProcessMainThread() else { throw XCTSkip("not on the process main thread") }
    }

    /// Runs the main loop (this thread's) until `done` or the time limit.
    private func runMainLoop(until done: () -> Bool, seconds: Double = 5) {
        XCTAssertTrue(RunLoop.current === RunLoop.main)
        var waited = 0.0
        while !done() && waited < seconds {
            _ = RunLoop.main.run(mode: .default, seconds: 0.1, returnAfterSourceHandled: true)
            waited += 0.1
        }
    }

    func test_dispatch_main_async_runs_on_the_main_run_loop_in_order() throws {
        try requireMainThread()
        let order = Shared<[Int]>([])
        let offMain = Shared<Int>(0)
        for i in 0..<20 {
            DispatchQueue.main.async {
                if !onProcessMainThread() { offMain.withLock { $0 += 1 } }
                order.withLock { $0.append(i) }
            }
        }
        runMainLoop(until: { order.current.count == 20 })
        XCTAssertEqual(order.current, Array(0..<20))
        XCTAssertEqual(offMain.current, 0)
    }

    func test_a_main_queue_wake_up_counts_as_a_handled_source() throws {
        try requireMainThread()
        // Let anything queued by earlier tests run first.
        _ = RunLoop.main.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
        let ran = Shared<Bool>(false)
        DispatchQueue.main.async { ran.withLock { $0 = true } }
        let result = RunLoop.main.run(mode: .default, seconds: 5, returnAfterSourceHandled: true)
        XCTAssertEqual(result, .handledSource)
        XCTAssertTrue(ran.current)
    }

    func test_work_sent_from_a_background_queue_wakes_the_sleeping_main_loop() throws {
        try requireMainThread()
        let ranOnMain = Shared<Bool?>(nil)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
            DispatchQueue.main.async { ranOnMain.withLock { $0 = onProcessMainThread() } }
        }
        runMainLoop(until: { ranOnMain.current != nil })
        XCTAssertEqual(ranOnMain.current, true)
    }

    func test_main_actor_tasks_run_on_the_main_run_loop() throws {
        try requireMainThread()
        let seen = Shared<[String]>([])
        Task { @MainActor in
            seen.withLock { $0.append("task:\(onProcessMainThread())") }
        }
        Task.detached {
            let onMain = await MainActor.run { onProcessMainThread() }
            seen.withLock { $0.append("run:\(onMain)") }
        }
        runMainLoop(until: { seen.current.count == 2 })
        XCTAssertEqual(Set(seen.current), ["task:true", "run:true"])
    }

    func test_main_queue_is_not_drained_in_a_private_mode() throws {
        try requireMainThread()
        _ = RunLoop.main.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
        let ran = Shared<Bool>(false)
        let keepAlive = RunLoop.Source {}
        let privateMode = RunLoop.Mode("MainQueueTests.private")
        RunLoop.main.add(keepAlive, forMode: privateMode)
        DispatchQueue.main.async { ran.withLock { $0 = true } }
        _ = RunLoop.main.run(mode: privateMode, seconds: 0.2, returnAfterSourceHandled: false)
        XCTAssertFalse(ran.current)
        runMainLoop(until: { ran.current })
        XCTAssertTrue(ran.current)
        keepAlive.invalidate()
    }
}
