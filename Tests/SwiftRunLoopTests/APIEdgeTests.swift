// The Swift API's edges: a perform that returns its block's value and
// rethrows, spans of time as Duration next to every TimeInterval parameter
// (and a TimeInterval timeout where only a Duration was), and an actor
// pinned to a run-loop thread by one stored property.

import XCTest
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer
#if canImport(Glibc)
import Glibc
#endif

private struct Refused: Error, Equatable {
    let code: Int
}

/// An actor pinned to its own run-loop thread by its one stored property.
private actor Pinned: RunLoopActor {
    let runLoopExecutor = RunLoopThread(name: "test.pinned").executor
    var count = 0

    func increment() -> Int {
        count += 1
        return count
    }

    func runsOnItsLoop() -> Bool { runLoopExecutor.runLoop.isCurrent }
}

/// Two actors sharing one thread.
private actor Sharing: RunLoopActor {
    let runLoopExecutor: RunLoopSerialExecutor
    init(thread: RunLoopThread) { runLoopExecutor = thread.executor }
    func loop() -> RunLoop { RunLoop.current }
}

final class APIEdgeTests: XCTestCase {
    // MARK: perform(waitUntilDone:) with a value

    func test_perform_wait_returns_the_blocks_value_computed_on_the_loops_thread() {
        let thread = RunLoopThread(name: "test.perform.value")
        defer { thread.stop() }
        let onLoop: Bool = thread.runLoop.perform(waitUntilDone: true) { RunLoop.current === thread.runLoop }
        XCTAssertTrue(onLoop)
        // A non-throwing block needs no `try`; the value's type is inferred.
        let mode = thread.runLoop.perform(waitUntilDone: true) { RunLoop.current.currentMode }
        XCTAssertEqual(mode, .default)
        let sum = thread.runLoop.perform(inModes: [.default], waitUntilDone: true) { (1...10).reduce(0, +) }
        XCTAssertEqual(sum, 55)
    }

    func test_perform_wait_rethrows_the_blocks_error() {
        let thread = RunLoopThread(name: "test.perform.throws")
        defer { thread.stop() }
        XCTAssertThrowsError(
            try thread.runLoop.perform(waitUntilDone: true) { () throws -> Int in throw Refused(code: 7) }
        ) {
            XCTAssertEqual($0 as? Refused, Refused(code: 7))
        }
        // Typed: the error keeps its type, no cast needed.
        do {
            _ = try thread.runLoop.perform(waitUntilDone: true) { () throws(Refused) -> Int in throw Refused(code: 8) }
            XCTFail("no error")
        } catch {
            XCTAssertEqual(error.code, 8)
        }
        XCTAssertEqual(try thread.runLoop.perform(waitUntilDone: true) { () throws -> Int in 3 }, 3)
    }

    func test_perform_wait_with_a_value_runs_inline_on_the_loops_own_thread() {
        onThread {
            // The loop is not running and never runs this mode: still inline.
            let value = RunLoop.current.perform(inModes: [RunLoop.Mode("never")], waitUntilDone: true) { 42 }
            XCTAssertEqual(value, 42)
        }
    }

    func test_perform_wait_without_a_value_still_returns_its_status() {
        let thread = RunLoopThread(name: "test.perform.status")
        defer { thread.stop() }
        let ran = Shared(false)
        // A Void block keeps the status-returning overload.
        let status = thread.runLoop.perform(waitUntilDone: true) { ran.withLock { $0 = true } }
        XCTAssertEqual(status, .done)
        XCTAssertTrue(ran.current)
        XCTAssertEqual(thread.runLoop.perform(waitUntilDone: false) {}, .pending)
    }

    // MARK: TimeInterval and Duration

    func test_perform_wait_takes_a_timeout_in_seconds_too() {
        onThread {
            let idleLoop = Shared<RunLoop?>(nil)
            let release = Semaphore()
            let join = startThread {
                idleLoop.withLock { $0 = RunLoop.current }
                release.wait()
            }
            while idleLoop.current == nil { usleep(1000) }
            let status = idleLoop.current!.perform(waitUntilDone: true, timeout: 0.02) {}
            XCTAssertEqual(status, .timedOut)
            XCTAssertEqual(idleLoop.current!.perform(waitUntilDone: true, timeout: .milliseconds(20)) {}, .timedOut)
            release.signal()
            join()
            // `nil` still means no limit (the Duration overload).
            XCTAssertEqual(idleLoop.current!.perform(waitUntilDone: true, timeout: nil) {}, .dropped)
        }
    }

    func test_delayed_perform_takes_a_duration() {
        onThread {
            let loop = RunLoop.current
            let ran = Shared(false)
            let request = loop.perform(after: .milliseconds(10)) { ran.withLock { $0 = true } }
            XCTAssertEqual(request.status, .pending)
            loop.run(mode: .default, for: .seconds(10), returnAfterSourceHandled: false)  // finishes once it ran
            XCTAssertTrue(ran.current)
            XCTAssertEqual(request.status, .done)
        }
    }

    func test_run_for_a_duration_times_out() {
        onThread {
            let loop = RunLoop.current
            let keep = RunLoop.Source {}
            loop.add(keep, forMode: .default)
            XCTAssertEqual(loop.run(mode: .default, for: .milliseconds(5), returnAfterSourceHandled: false), .timedOut)
            XCTAssertEqual(loop.run(mode: .default, for: .zero, returnAfterSourceHandled: false), .timedOut)
            keep.invalidate()
            XCTAssertEqual(loop.run(mode: .default, for: .seconds(1), returnAfterSourceHandled: false), .finished)
        }
    }

    func test_timers_take_durations() {
        onThread {
            let noop: @Sendable (Timer) -> Void = { _ in }
            XCTAssertEqual(Timer(timeInterval: .milliseconds(250), repeats: true, block: noop).timeInterval, 0.25)
            let start = Date(timeIntervalSinceNow: 100)
            let gridded = Timer(fire: start, interval: .microseconds(1500), repeats: true, block: noop)
            XCTAssertEqual(gridded.timeInterval, 0.0015, accuracy: 1e-12)
            XCTAssertEqual(gridded.fireDate, start)
            let kept = Timer(fire: start, interval: .seconds(2), repeats: true, userInfo: "a", block: noop)
            XCTAssertEqual([kept.timeInterval], [2])
            XCTAssertEqual(kept.userInfo as? String, "a")
            let tagged = Timer(timeInterval: .seconds(3), repeats: true, userInfo: 7, block: noop)
            XCTAssertEqual(tagged.timeInterval, 3)
            XCTAssertEqual(tagged.userInfo as? Int, 7)
            let far = Timer.scheduledTimer(withTimeInterval: .seconds(100), repeats: false, userInfo: 1, block: noop)
            XCTAssertEqual(far.userInfo as? Int, 1)
            XCTAssertGreaterThan(far.fireDate.timeIntervalSinceNow, 50)
            far.invalidate()
            let fired = Shared(0)
            let scheduled = Timer.scheduledTimer(withTimeInterval: .milliseconds(5), repeats: false) { _ in
                fired.withLock { $0 += 1 }
            }
            XCTAssertTrue(RunLoop.current.contains(scheduled, forMode: .default))
            RunLoop.current.run(until: Date(timeIntervalSinceNow: 10))  // returns once the one-shot fired
            XCTAssertEqual(fired.current, 1)
        }
    }

    func test_ticks_and_sleep_take_durations() async {
        let thread = RunLoopThread(name: "test.durations.async")
        defer { thread.stop() }
        var count = 0
        for await _ in thread.runLoop.ticks(every: .milliseconds(2), tolerance: .microseconds(100)) {
            count += 1
            if count == 3 { break }
        }
        XCTAssertEqual(count, 3)
        let start = Date()
        await thread.runLoop.sleep(for: .milliseconds(10))
        await thread.runLoop.sleep(for: 0.01)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.019)
    }

    func test_monitor_and_idle_queue_take_durations() {
        let thread = RunLoopThread(name: "test.durations.extras")
        defer { thread.stop() }
        let monitor = RunLoop.HangMonitor(runLoop: thread.runLoop, threshold: .milliseconds(250)) { _ in }
        XCTAssertEqual(monitor?.threshold ?? 0, 0.25, accuracy: 1e-9)
        XCTAssertNil(RunLoop.HangMonitor(runLoop: thread.runLoop, threshold: .zero))
        let queue = RunLoop.IdleQueue(runLoop: thread.runLoop, slice: .milliseconds(5))
        XCTAssertEqual(queue.slice, 0.005, accuracy: 1e-9)
        queue.invalidate()
        monitor?.invalidate()
    }

    // MARK: RunLoopActor

    func test_run_loop_actor_runs_on_its_thread() async {
        let pinned = Pinned()
        let onLoop = await pinned.runsOnItsLoop()
        XCTAssertTrue(onLoop)
        let first = await pinned.increment()
        let second = await pinned.increment()
        XCTAssertEqual([first, second], [1, 2])
    }

    func test_run_loop_actor_is_entered_synchronously_from_a_callout_on_its_thread() async {
        let pinned = Pinned()
        let loop = pinned.runLoopExecutor.runLoop
        let counted = loop.perform(waitUntilDone: true) { pinned.assumeIsolated { $0.increment() } }
        XCTAssertEqual(counted, 1)
        let after = await pinned.increment()
        XCTAssertEqual(after, 2)
    }

    func test_run_loop_actors_can_share_a_thread() async {
        let thread = RunLoopThread(name: "test.shared.actors")
        defer { thread.stop() }
        let first = Sharing(thread: thread)
        let second = Sharing(thread: thread)
        let loops = (await first.loop(), await second.loop())
        XCTAssertTrue(loops.0 === thread.runLoop)
        XCTAssertTrue(loops.1 === thread.runLoop)
    }
}
