// Perform requests from Swift: wait-until-done across threads and on the
// loop's own thread, timeouts, delayed requests in and out of their modes,
// cancellation by handle and by target (identity), ordering per sender.

import XCTest
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
#if canImport(Glibc)
import Glibc
#endif

final class PerformRequestTests: XCTestCase {
    func test_wait_until_done_from_another_thread() {
        let thread = RunLoopThread(name: "test.perform.wait")
        defer { thread.stop(); thread.waitUntilExited() }
        for _ in 0..<50 {
            let ranOn = Shared<RunLoop?>(nil)
            let status = thread.runLoop.perform(waitUntilDone: true) { ranOn.withLock { $0 = RunLoop.current } }
            XCTAssertEqual(status, .done)
            XCTAssertTrue(ranOn.current === thread.runLoop)
        }
    }

    func test_wait_until_done_on_own_thread_runs_inline() {
        onThread {
            let loop = RunLoop.current
            let ran = Shared(false)
            // The loop is not running and never runs this mode: still inline.
            let status = loop.perform(inModes: [RunLoop.Mode("never")], waitUntilDone: true) {
                ran.withLock { $0 = true }
            }
            XCTAssertEqual(status, .done)
            XCTAssertTrue(ran.current)
        }
    }

    func test_wait_times_out_when_the_loop_does_not_run() {
        onThread {
            let idleLoop = Shared<RunLoop?>(nil)
            let release = Semaphore()
            let join = startThread {
                idleLoop.withLock { $0 = RunLoop.current }
                release.wait()
            }
            while idleLoop.current == nil { usleep(1000) }
            let ran = Shared(false)
            let start = monotonicNow()
            let status = idleLoop.current!.perform(waitUntilDone: true, timeout: .milliseconds(50)) {
                ran.withLock { $0 = true }
            }
            XCTAssertEqual(status, .timedOut)
            XCTAssertGreaterThanOrEqual(monotonicNow() - start, 0.049)
            release.signal()
            join()
            XCTAssertFalse(ran.current)
            // The thread has exited: its loop drops requests.
            XCTAssertEqual(idleLoop.current!.perform(waitUntilDone: true) {}, .dropped)
        }
    }

    func test_delayed_request_fires_only_in_its_mode() {
        onThread {
            let loop = RunLoop.current
            let keep = RunLoop.Source {}
            loop.add(keep, forMode: .default)
            let other = RunLoop.Mode("test.delayed")
            let start = monotonicNow()
            let firedAt = Shared<Double?>(nil)
            let request = loop.perform(after: 0.02, inModes: [other]) {
                firedAt.withLock { $0 = monotonicNow() }
            }
            XCTAssertEqual(request.status, .pending)
            loop.run(mode: .default, seconds: 0.06, returnAfterSourceHandled: false)
            XCTAssertNil(firedAt.current)
            loop.run(mode: other, seconds: 5, returnAfterSourceHandled: false)  // finishes once it fired
            XCTAssertNotNil(firedAt.current)
            XCTAssertGreaterThanOrEqual((firedAt.current ?? 0) - start, 0.02)
            XCTAssertEqual(request.status, .done)
            XCTAssertFalse(request.cancel())
            keep.invalidate()
        }
    }

    func test_cancel_before_and_at_fire_time() {
        onThread {
            let loop = RunLoop.current
            let canary = Canary()
            let ran = Shared(false)
            let request = loop.perform(after: 0.01) { [canary] in
                _ = canary; ran.withLock { $0 = true }
            }
            XCTAssertTrue(request.cancel())
            XCTAssertEqual(request.status, .cancelled)
            XCTAssertFalse(request.cancel())
            loop.run(mode: .default, seconds: 0.05, returnAfterSourceHandled: false)
            XCTAssertFalse(ran.current)
            _ = canary
        }

        onThread {
            // Both due in one pass: the first cancels the second.
            let loop = RunLoop.current
            let secondRan = Shared(false)
            let second = Shared<PerformRequest?>(nil)
            let cancelled = Shared(false)
            loop.perform(after: 0.01) { cancelled.withLock { $0 = second.current!.cancel() } }
            second.withLock { $0 = loop.perform(after: 0.01) { secondRan.withLock { $0 = true } } }
            usleep(30_000)
            loop.run(mode: .default, seconds: 0.05, returnAfterSourceHandled: false)
            XCTAssertTrue(cancelled.current)
            XCTAssertFalse(secondRan.current)
            XCTAssertEqual(second.current!.status, .cancelled)
        }
    }

    func test_cancelled_closure_and_target_are_released() {
        let thread = RunLoopThread(name: "test.perform.release")
        defer { thread.stop(); thread.waitUntilExited() }
        weak var weakTarget: Canary?
        weak var weakCaptured: Canary?
        do {
            let target = Canary()
            let captured = Canary()
            weakTarget = target
            weakCaptured = captured
            let request = thread.runLoop.perform(after: 60, target: target) { _ = captured }
            XCTAssertNotNil(weakTarget)
            XCTAssertTrue(request.cancel())
        }
        XCTAssertNil(weakTarget)
        XCTAssertNil(weakCaptured)
    }

    func test_cancel_previous_perform_requests_by_identity() {
        let thread = RunLoopThread(name: "test.perform.target")
        defer { thread.stop(); thread.waitUntilExited() }
        let a = Canary(), b = Canary()
        let ran = Shared<[String]>([])
        let loop = thread.runLoop
        // Long delays for `a`, so a stalled test machine cannot fire them before the cancel.
        loop.perform(after: 60, target: a) { ran.withLock { $0.append("a1") } }
        loop.perform(after: 60, target: a) { ran.withLock { $0.append("a2") } }
        loop.perform(after: 0.05, target: b) { ran.withLock { $0.append("b") } }
        loop.perform(inModes: [RunLoop.Mode("later")], waitUntilDone: false, target: a) {
            ran.withLock { $0.append("a3") }
        }
        XCTAssertEqual(RunLoop.cancelPreviousPerformRequests(withTarget: a, in: RunLoop.current), 0)  // other loop
        XCTAssertEqual(RunLoop.cancelPreviousPerformRequests(withTarget: a), 3)
        XCTAssertEqual(RunLoop.cancelPreviousPerformRequests(withTarget: a, in: loop), 0)
        let deadline = monotonicNow() + 10
        while ran.current.isEmpty && monotonicNow() < deadline { usleep(1000) }
        loop.perform(waitUntilDone: true) {}
        XCTAssertEqual(ran.current, ["b"])
    }

    func test_requests_from_several_threads_keep_each_senders_order() {
        let thread = RunLoopThread(name: "test.perform.order")
        defer { thread.stop(); thread.waitUntilExited() }
        let loop = thread.runLoop
        let senders = 4, perSender = 2000
        let last = Shared([Int](repeating: 0, count: senders))
        let outOfOrder = Shared(0)
        let joins = (0..<senders).map { sender in
            startThread {
                for seq in 1...perSender {
                    let body: @Sendable () -> Void = {
                        last.withLock {
                            if $0[sender] + 1 != seq { outOfOrder.withLock { $0 += 1 } }
                            $0[sender] = seq
                        }
                    }
                    if seq % 100 == 0 {
                        loop.perform(waitUntilDone: true, body)
                    } else {
                        loop.perform(waitUntilDone: false, body)
                    }
                }
            }
        }
        joins.forEach { $0() }
        XCTAssertEqual(loop.perform(waitUntilDone: true) {}, .done)  // FIFO: after all of theirs
        XCTAssertEqual(outOfOrder.current, 0)
        XCTAssertEqual(last.current, [Int](repeating: perSender, count: senders))
    }

    func test_pending_requests_are_dropped_when_the_thread_exits() {
        let thread = RunLoopThread(name: "test.perform.drop")
        weak var weakCaptured: Canary?
        let request: PerformRequest
        do {
            let captured = Canary()
            weakCaptured = captured
            request = thread.runLoop.perform(after: 60) { _ = captured }
        }
        thread.stop()
        thread.waitUntilExited()
        let deadline = monotonicNow() + 10
        while request.status != .dropped && monotonicNow() < deadline { usleep(1000) }
        XCTAssertEqual(request.status, .dropped)
        XCTAssertNil(weakCaptured)
    }

    func test_empty_mode_name_is_invalid() {
        let thread = RunLoopThread(name: "test.perform.invalid")
        defer { thread.stop(); thread.waitUntilExited() }
        XCTAssertEqual(thread.runLoop.perform(inModes: [RunLoop.Mode("")], waitUntilDone: true) {}, .invalid)
        XCTAssertEqual(thread.runLoop.perform(after: 0, inModes: [RunLoop.Mode("")]) {}.status, .invalid)
        XCTAssertEqual(thread.runLoop.perform(inModes: [], waitUntilDone: true) {}, .done)  // common modes
    }
}
