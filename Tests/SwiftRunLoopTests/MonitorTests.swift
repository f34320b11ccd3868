// RunLoop.HangMonitor and RunLoop.IdleQueue: a stall is reported with its
// stack, a healthy loop reports nothing; idle tasks run in order, only when
// the loop is idle, and can be cancelled.

import XCTest
import FoundationEssentials
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer
#if canImport(Glibc)
import Glibc
#endif

private func sleepRestarting(_ seconds: Double) {
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 { request = remaining }
}

final class MonitorTests: XCTestCase {
    func test_hang_monitor_reports_a_stalled_timer_with_its_stack() {
        onThread {
            let loop = RunLoop.current
            let reports = Shared<[RunLoop.HangMonitor.Report]>([])
            guard
                let monitor = RunLoop.HangMonitor(
                    runLoop: loop, threshold: 0.1,
                    handler: { report in
                        reports.withLock { $0.append(report) }
                    })
            else { return XCTFail("no monitor") }
            XCTAssertEqual(monitor.threshold, 0.1, accuracy: 1e-9)
            XCTAssertTrue(monitor.start())
            XCTAssertTrue(monitor.isRunning)
            let stall = Timer(timeInterval: 0.02, repeats: false) { _ in sleepRestarting(0.35) }
            loop.add(stall, forMode: .default)
            XCTAssertEqual(loop.run(mode: .default, seconds: 10, returnAfterSourceHandled: false), .finished)
            monitor.invalidate()
            XCTAssertFalse(monitor.isValid)
            let seen = reports.current
            XCTAssertGreaterThanOrEqual(seen.count, 1)
            guard let first = seen.first else { return }
            XCTAssertGreaterThanOrEqual(first.duration, 0.1)
            XCTAssertEqual(first.stallNumber, 1)
            XCTAssertEqual(first.reportNumber, 1)
            XCTAssertEqual(first.activity, .afterWaiting)
            XCTAssertEqual(first.mode, .default)
            XCTAssertFalse(first.frames.isEmpty)
            XCTAssertTrue(first.frames.contains { $0.contains("nanosleep") }, first.description)
            // Frames of the test executable are named (from its .symtab) and
            // demangled, with no linker flag: the function that stalls, and
            // the closure calling it.
            XCTAssertTrue(first.frames.contains { $0.contains("sleepRestarting in") }, first.description)
            XCTAssertTrue(
                first.frames.contains { $0.contains("closure #") && $0.contains("SwiftRunLoopTests") },
                first.description)
            XCTAssertFalse(
                first.frames.contains { $0.contains("(+0x") && $0.contains("SwiftRunLoopPackageTests") },
                first.description)
            XCTAssertTrue(first.description.contains("after kRLRunLoopAfterWaiting"))
            // The loop's statistics come along: it slept until the stalling timer.
            XCTAssertEqual(first.statistics?.sleeps, 1)
            XCTAssertTrue(first.description.contains("  loop statistics:\n  passes "), first.description)
            XCTAssertEqual(monitor.stallCount, 1)
            XCTAssertEqual(monitor.reportCount, seen.count)
        }
    }

    func test_hang_monitor_reports_nothing_for_a_healthy_loop() {
        onThread {
            let loop = RunLoop.current
            let count = Shared(0)
            guard
                let monitor = RunLoop.HangMonitor(
                    runLoop: loop, threshold: 0.3,
                    handler: { _ in
                        count.withLock { $0 += 1 }
                    })
            else { return XCTFail("no monitor") }
            monitor.start()
            let ticks = Shared(0)
            let timer = Timer(timeInterval: 0.001, repeats: true) { _ in ticks.withLock { $0 += 1 } }
            loop.add(timer, forMode: .default)
            loop.run(until: Date(timeIntervalSinceNow: 0.6))
            timer.invalidate()
            monitor.stop()
            XCTAssertFalse(monitor.isRunning)
            XCTAssertGreaterThan(ticks.current, 10)
            XCTAssertEqual(count.current, 0)
            XCTAssertEqual(monitor.reportCount, 0)
        }
    }

    func test_monitor_queue_thread_and_request_describe_their_c_object() {
        let monitor = RunLoop.HangMonitor(runLoop: .current, threshold: 100)!
        XCTAssertTrue(monitor.description.contains("<RLHangMonitor "), monitor.description)
        XCTAssertTrue(monitor.description.contains("threshold = 100.000 s"), monitor.description)
        let queue = RunLoop.IdleQueue(runLoop: .current, mode: RunLoop.Mode("test.describe"))
        XCTAssertTrue(queue.description.contains("mode = \"test.describe\""), queue.description)
        let thread = RunLoopThread(name: "test.describe")
        XCTAssertTrue(thread.description.contains("<RLThread "), thread.description)
        XCTAssertTrue(thread.description.contains("\"test.describe\""), thread.description)
        let request = RunLoop.current.perform(after: 1000) {}
        XCTAssertTrue(request.description.contains("<RLPerformRequest "), request.description)
        XCTAssertTrue(request.description.contains("pending"), request.description)
        XCTAssertTrue(request.cancel())
        XCTAssertTrue(request.description.contains("cancelled"), request.description)
    }

    func test_hang_monitor_rejects_a_bad_threshold() {
        XCTAssertNil(RunLoop.HangMonitor(runLoop: .current, threshold: 0))
        XCTAssertNil(RunLoop.HangMonitor(runLoop: .current, threshold: -.infinity))
        XCTAssertNil(RunLoop.HangMonitor(runLoop: .current, threshold: .nan))
    }

    func test_idle_tasks_run_in_order_when_the_loop_is_idle() {
        onThread {
            let loop = RunLoop.current
            let queue = RunLoop.IdleQueue(runLoop: loop)
            let order = Shared<[Int]>([])
            var tokens: [RunLoop.IdleQueue.Token] = []
            for index in 1...5 {
                tokens.append(queue.submit { order.withLock { $0.append(index) } }!)
            }
            XCTAssertTrue(queue.cancel(tokens[1]))
            XCTAssertFalse(queue.cancel(tokens[1]))
            XCTAssertEqual(queue.pendingCount, 4)
            // The pending tasks keep the mode alive; the run finishes once they ran.
            XCTAssertEqual(loop.run(mode: .default, seconds: 10, returnAfterSourceHandled: false), .finished)
            XCTAssertEqual(order.current, [1, 3, 4, 5])
            XCTAssertEqual(queue.completedCount, 4)
            XCTAssertEqual(queue.pendingCount, 0)
        }
    }

    func test_idle_tasks_wait_for_a_busy_source() {
        onThread {
            let loop = RunLoop.current
            let queue = RunLoop.IdleQueue(runLoop: loop, slice: 0.005)
            XCTAssertEqual(queue.slice, 0.005, accuracy: 1e-9)
            let events = Shared<[String]>([])
            let busy = Shared(20)
            let sourceBox = Shared<RunLoop.Source?>(nil)
            let source = RunLoop.Source {
                events.withLock { $0.append("source") }
                let again = busy.withLock { value -> Bool in
                    value -= 1; return value > 0
                }
                if again { sourceBox.current?.signal() }
            }
            sourceBox.withLock { $0 = source }
            loop.add(source, forMode: .default)
            source.signal()
            queue.submit { events.withLock { $0.append("idle") } }
            queue.submit { RunLoop.current.stop() }
            XCTAssertEqual(loop.run(mode: .default, seconds: 10, returnAfterSourceHandled: false), .stopped)
            XCTAssertEqual(events.current, Array(repeating: "source", count: 20) + ["idle"])
            source.invalidate()
            sourceBox.withLock { $0 = nil }
        }
    }

    func test_idle_task_submitted_from_another_thread_wakes_the_loop() {
        onThread {
            let loop = RunLoop.current
            let queue = RunLoop.IdleQueue(runLoop: loop)
            let keep = RunLoop.Source {}
            loop.add(keep, forMode: .default)
            let ran = Shared(false)
            let join = startThread {
                sleepRestarting(0.05)
                queue.submit {
                    ran.withLock { $0 = true }
                    RunLoop.current.stop()
                }
            }
            XCTAssertEqual(loop.run(mode: .default, seconds: 10, returnAfterSourceHandled: false), .stopped)
            join()
            XCTAssertTrue(ran.current)
            keep.invalidate()
            queue.invalidate()
            XCTAssertFalse(queue.isValid)
            XCTAssertNil(queue.submit {})
        }
    }
}
