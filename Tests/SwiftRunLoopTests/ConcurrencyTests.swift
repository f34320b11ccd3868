// Swift concurrency: actors pinned to a run-loop thread, assumeIsolated from
// plain callouts, async timer conveniences.

import XCTest
import FoundationEssentials
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer

/// An actor whose jobs run on a run loop's thread.
actor PinnedCounter {
    let executor: RunLoopSerialExecutor
    private(set) var count = 0

    nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    init(executor: RunLoopSerialExecutor) {
        self.executor = executor
    }

    /// Increments and tells whether it ran on the loop's thread.
    func increment() -> (Int, Bool) {
        count += 1
        return (count, executor.runLoop.isCurrent)
    }

    func bump() { count += 1 }
}

final class ConcurrencyTests: XCTestCase {
    func test_actor_pinned_to_a_run_loop_thread() async {
        let thread = RunLoopThread(name: "test.actor")
        let counter = PinnedCounter(executor: thread.executor)
        var results: [(Int, Bool)] = []
        for _ in 0..<3 { results.append(await counter.increment()) }
        XCTAssertEqual(results.map(\.0), [1, 2, 3])
        XCTAssertEqual(results.map(\.1), [true, true, true])
        // Many concurrent callers: serial, nothing lost.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<100 { group.addTask { await counter.bump() } }
        }
        let final = await counter.count
        XCTAssertEqual(final, 103)
        thread.stop()
        thread.waitUntilExited()
        XCTAssertTrue(thread.hasExited)
    }

    func test_assume_isolated_from_a_timer_callout() {
        let thread = RunLoopThread(name: "test.assume")
        let counter = PinnedCounter(executor: RunLoopSerialExecutor(runLoop: thread.runLoop))
        let seen = Shared<Int?>(nil)
        let done = Semaphore()
        thread.runLoop.perform {
            // A plain callout on the loop's thread, not an actor job.
            let timer = Timer(timeInterval: 0.01, repeats: false) { _ in
                let n = counter.assumeIsolated { counter in
                    counter.bump()
                    return counter.count
                }
                seen.withLock { $0 = n }
                done.signal()
            }
            RunLoop.current.add(timer, forMode: .default)
        }
        done.wait()
        XCTAssertEqual(seen.current, 1)
        XCTAssertTrue(thread.executor.isIsolatingCurrentContext() == false)
        thread.stop()
        thread.waitUntilExited()
    }

    func test_task_executor_preference_runs_on_the_loop_thread() async {
        let thread = RunLoopThread(name: "test.taskexec")
        let loop = thread.runLoop
        let onLoop = await Task(executorPreference: thread.executor) {
            loop.isCurrent
        }.value
        XCTAssertTrue(onLoop)
        thread.stop()
    }

    func test_ticks_stream() async {
        let thread = RunLoopThread(name: "test.ticks")
        var dates: [Date] = []
        for await date in thread.runLoop.ticks(every: 0.02) {
            dates.append(date)
            if dates.count == 3 { break }
        }
        XCTAssertEqual(dates.count, 3)
        XCTAssertEqual(dates, dates.sorted())
        // Breaking out invalidated the timer: the thread's modes hold only its
        // own stop source again, so a short poll sees no timer.
        let next = Shared<Date?>(nil)
        let done = Semaphore()
        let loop = thread.runLoop
        loop.perform {
            next.withLock { $0 = loop.limitDate(forMode: .default) }
            done.signal()
        }
        done.wait()
        XCTAssertEqual(next.current, .distantFuture)
        thread.stop()
    }

    func test_sleep_until_on_a_run_loop() async {
        let thread = RunLoopThread(name: "test.sleep")
        let start = monotonicNow()
        await thread.runLoop.sleep(until: Date(timeIntervalSinceNow: 0.05))
        XCTAssertGreaterThanOrEqual(monotonicNow() - start, 0.045)
        // Cancellation resumes at once.
        let task = Task { await thread.runLoop.sleep(until: Date(timeIntervalSinceNow: 100)) }
        let cancelStart = monotonicNow()
        task.cancel()
        await task.value
        XCTAssertLessThan(monotonicNow() - cancelStart, 50)
        thread.stop()
    }

    func test_await_next_fire_of_a_timer() async {
        let thread = RunLoopThread(name: "test.nextfire")
        let timer = Timer(timeInterval: 0.02, repeats: true) { _ in }
        thread.runLoop.add(timer, forMode: .default)
        let first = await timer.nextFire()
        let second = await timer.nextFire()
        XCTAssertNotNil(first)
        XCTAssertNotNil(second)
        if let first, let second { XCTAssertGreaterThan(second, first) }
        timer.invalidate()
        let afterInvalidate = await timer.nextFire()
        XCTAssertNil(afterInvalidate)
        thread.stop()
    }

    /// Jobs run only when the loop runs one of the executor's modes: one
    /// custom mode, the common modes (the default), or several modes (a job
    /// queued in each runs once).
    func test_jobs_run_only_in_the_executors_modes() {
        let custom = RunLoop.Mode("test.executor.custom")
        let other = RunLoop.Mode("test.executor.other")
        onThread {
            let loop = RunLoop.current
            for modes in [[custom], [RunLoop.Mode.common], [custom, other]] {
                let executor = RunLoopSerialExecutor(runLoop: loop, modes: modes)
                let runs = Shared(0)
                for _ in 0..<3 {
                    Task(executorPreference: executor) {
                        precondition(loop.isCurrent)
                        runs.withLock { $0 += 1 }
                    }
                }
                // The jobs are queued: a mode they are not in never runs them.
                _ = loop.run(mode: .init("test.executor.none"), before: Date(timeIntervalSinceNow: 0.01))
                if modes != [.common] { _ = loop.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01)) }
                XCTAssertEqual(runs.current, 0, "\(modes)")
                let mode = modes == [.common] ? RunLoop.Mode.default : modes.last!
                while runs.current < 3 { _ = loop.run(mode: mode, before: Date(timeIntervalSinceNow: 0.01)) }
                // Each ran once, also where it was queued twice.
                for mode in [RunLoop.Mode.default, custom, other] {
                    _ = loop.run(mode: mode, before: Date(timeIntervalSinceNow: 0.001))
                }
                XCTAssertEqual(runs.current, 3, "\(modes)")
            }
        }
    }

    func test_run_loop_thread_stop_right_after_start_is_not_lost() {
        for _ in 0..<50 {
            let thread = RunLoopThread(name: "test.quickstop")
            thread.stop()
            thread.waitUntilExited()
            XCTAssertTrue(thread.hasExited)
        }
    }

    func test_run_loop_thread_stops_from_its_own_thread() {
        let thread = RunLoopThread(name: "test.selfstop")
        let done = Semaphore()
        thread.runLoop.perform {
            thread.stop()
            thread.waitUntilExited()  // returns at once on its own thread
            done.signal()
        }
        done.wait()
        thread.waitUntilExited()
        XCTAssertTrue(thread.hasExited)
    }
}

/// A counting semaphore for the tests.
final class Semaphore: @unchecked Sendable {
    private let state = Shared(0)
    func signal() { state.withLock { $0 += 1 } }
    func wait() {
        while true {
            let got = state.withLock { value -> Bool in
                if value > 0 { value -= 1; return true }
                return false
            }
            if got { return }
            usleep(500)
        }
    }
}
