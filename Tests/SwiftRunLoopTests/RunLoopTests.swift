// RunLoop: identity, modes, the Foundation-level run methods and the CF level.

import XCTest
import FoundationEssentials
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer

final class RunLoopTests: XCTestCase {
    func test_mode_and_activity_constants_equal_cf() {
        XCTAssertEqual(RunLoop.Mode.default.rawValue, "kCFRunLoopDefaultMode")
        XCTAssertEqual(RunLoop.Mode.common.rawValue, "kCFRunLoopCommonModes")
        XCTAssertEqual(RunLoop.Mode("x"), RunLoop.Mode(rawValue: "x"))
        XCTAssertEqual(RunLoop.Activity.entry.rawValue, 1)
        XCTAssertEqual(RunLoop.Activity.beforeTimers.rawValue, 2)
        XCTAssertEqual(RunLoop.Activity.beforeSources.rawValue, 4)
        XCTAssertEqual(RunLoop.Activity.beforeWaiting.rawValue, 32)
        XCTAssertEqual(RunLoop.Activity.afterWaiting.rawValue, 64)
        XCTAssertEqual(RunLoop.Activity.exit.rawValue, 128)
        XCTAssertEqual(RunLoop.Activity.allActivities.rawValue, 0x0FFF_FFFF)
        XCTAssertEqual(RunLoop.RunResult.finished.rawValue, 1)
        XCTAssertEqual(RunLoop.RunResult.handledSource.rawValue, 4)
    }

    func test_current_is_one_object_per_thread_and_main_on_main_thread() {
        XCTAssertTrue(RunLoop.current === RunLoop.current)
        XCTAssertTrue(RunLoop.main === RunLoop.main)
        XCTAssertTrue(RunLoop.main === RunLoop.current)  // XCTest runs on the main thread
        XCTAssertTrue(RunLoop.main.isCurrent)
        let main = RunLoop.main
        let other = Shared<RunLoop?>(nil)
        onThread {
            XCTAssertTrue(RunLoop.current === RunLoop.current)
            XCTAssertFalse(RunLoop.current === main)
            XCTAssertFalse(main.isCurrent)
            XCTAssertTrue(RunLoop.current.isCurrent)
            other.withLock { $0 = RunLoop.current }
        }
        XCTAssertNotEqual(other.current, RunLoop.main)
        XCTAssertFalse(other.current!.isCurrent)
    }

    func test_run_mode_before_returns_false_for_an_empty_mode() {
        onThread {
            let loop = RunLoop.current
            let start = monotonicNow()
            XCTAssertFalse(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)))
            XCTAssertFalse(loop.run(mode: RunLoop.Mode("never.used"), before: Date(timeIntervalSinceNow: 5)))
            XCTAssertFalse(loop.run(mode: .common, before: Date(timeIntervalSinceNow: 5)))
            XCTAssertLessThan(monotonicNow() - start, 2.5)
            XCTAssertEqual(loop.run(mode: .default, seconds: 5, returnAfterSourceHandled: false), .finished)
            XCTAssertNil(loop.limitDate(forMode: .default))
            // Running a mode nobody named does not make it exist.
            XCTAssertFalse(loop.allModes.contains(RunLoop.Mode("never.used")))
        }
    }

    func test_run_mode_before_returns_after_one_source() {
        onThread {
            let loop = RunLoop.current
            let performed = Shared<[String]>([])
            let a = RunLoop.Source(order: 2) { performed.withLock { $0.append("a") } }
            let b = RunLoop.Source(order: 1) { performed.withLock { $0.append("b") } }
            loop.add(a, forMode: .default)
            loop.add(b, forMode: .default)
            a.signal()
            b.signal()
            XCTAssertTrue(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 10)))
            XCTAssertEqual(performed.current, ["b"])  // one source per run, lowest order first
            XCTAssertTrue(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 10)))
            XCTAssertEqual(performed.current, ["b", "a"])
            // Nothing signalled: the run waits for its limit date.
            let start = monotonicNow()
            XCTAssertTrue(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 0.1)))
            XCTAssertGreaterThanOrEqual(monotonicNow() - start, 0.09)
            XCTAssertEqual(performed.current, ["b", "a"])
            a.invalidate()
            b.invalidate()
        }
    }

    func test_cf_run_results() {
        onThread {
            let loop = RunLoop.current
            let source = RunLoop.Source {}
            loop.add(source, forMode: .default)
            XCTAssertEqual(loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: true), .timedOut)
            source.signal()
            XCTAssertEqual(loop.run(mode: .default, seconds: 10, returnAfterSourceHandled: true), .handledSource)
            let stopper = RunLoop.Source { RunLoop.current.stop() }
            loop.add(stopper, forMode: .default)
            stopper.signal()
            XCTAssertEqual(loop.run(mode: .default, seconds: 10, returnAfterSourceHandled: false), .stopped)
            XCTAssertEqual(loop.run(mode: .default, seconds: 0.05, returnAfterSourceHandled: false), .timedOut)
            source.invalidate()
            stopper.invalidate()
            XCTAssertEqual(loop.run(mode: .default, seconds: 10, returnAfterSourceHandled: false), .finished)
        }
    }

    func test_run_methods_do_nothing_off_the_loops_thread() {
        let loopBox = Shared<RunLoop?>(nil)
        onThread { loopBox.withLock { $0 = RunLoop.current } }
        let loop = loopBox.current!
        XCTAssertFalse(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)))
        XCTAssertEqual(loop.run(mode: .default, seconds: 5, returnAfterSourceHandled: false), .finished)
        XCTAssertNil(loop.limitDate(forMode: .default))
    }

    func test_current_mode_inside_a_callout() {
        onThread {
            let loop = RunLoop.current
            XCTAssertNil(loop.currentMode)
            let seen = Shared<[RunLoop.Mode?]>([])
            let custom = RunLoop.Mode("test.custom")
            let source = RunLoop.Source { seen.withLock { $0.append(RunLoop.current.currentMode) } }
            loop.add(source, forMode: .default)
            loop.add(source, forMode: custom)
            source.signal()
            loop.run(mode: custom, before: Date(timeIntervalSinceNow: 10))
            source.signal()
            loop.run(mode: .default, before: Date(timeIntervalSinceNow: 10))
            XCTAssertEqual(seen.current, [custom, .default])
            XCTAssertNil(loop.currentMode)
            XCTAssertTrue(loop.allModes.contains(custom))
            source.invalidate()
        }
    }

    func test_run_until_a_past_date_polls_and_returns() {
        onThread {
            let loop = RunLoop.current
            let timer = Timer(timeInterval: 60, repeats: false) { _ in }
            loop.add(timer, forMode: .default)
            let start = monotonicNow()
            loop.run(until: Date())
            loop.run(until: Date(timeIntervalSinceNow: -10))
            XCTAssertLessThan(monotonicNow() - start, 0.5)
            timer.invalidate()
        }
    }

    func test_limit_date_is_the_next_timer_fire_date() {
        onThread {
            let loop = RunLoop.current
            let date = Date(timeIntervalSinceNow: 30)
            let timer = Timer(fire: date, interval: 0, repeats: false) { _ in }
            loop.add(timer, forMode: .default)
            XCTAssertEqual(loop.limitDate(forMode: .default), date)
            XCTAssertTrue(timer.isValid)  // the poll did not fire it
            timer.invalidate()
            let source = RunLoop.Source {}
            loop.add(source, forMode: .default)
            XCTAssertEqual(loop.limitDate(forMode: .default), .distantFuture)
            source.invalidate()
            XCTAssertNil(loop.limitDate(forMode: .default))
        }
    }

    func test_accept_input_returns_after_a_source() {
        onThread {
            let loop = RunLoop.current
            let count = Shared(0)
            let source = addCountingSource(to: loop, counting: count)
            source.signal()
            let start = monotonicNow()
            loop.acceptInput(forMode: .default, before: Date(timeIntervalSinceNow: 10))
            XCTAssertEqual(count.current, 1)
            XCTAssertLessThan(monotonicNow() - start, 5)
            source.invalidate()
        }
    }

    func test_perform_runs_blocks_fifo_and_does_not_end_run_mode_before() {
        onThread {
            let loop = RunLoop.current
            let order = Shared<[Int]>([])
            for i in 0..<5 { loop.perform { order.withLock { $0.append(i) } } }
            // Pending blocks alone make the mode non-empty. As CF's, the
            // pass that ran them then sleeps to the limit date (short here).
            XCTAssertTrue(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 0.05)))
            XCTAssertEqual(order.current, [0, 1, 2, 3, 4])
            // With a source keeping the mode non-empty, the run does not
            // return after blocks (they are not sources) but at its limit date.
            let keepAlive = RunLoop.Source {}
            loop.add(keepAlive, forMode: .default)
            loop.perform { order.withLock { $0.append(5) } }
            let start = monotonicNow()
            XCTAssertTrue(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 0.1)))
            XCTAssertGreaterThanOrEqual(monotonicNow() - start, 0.09)
            XCTAssertEqual(order.current, [0, 1, 2, 3, 4, 5])
            keepAlive.invalidate()
        }
    }

    func test_perform_in_several_modes_runs_once() {
        onThread {
            let loop = RunLoop.current
            let custom = RunLoop.Mode("test.perform")
            let count = Shared(0)
            loop.perform(inModes: [custom, .default, custom]) { count.withLock { $0 += 1 } }
            loop.run(mode: custom, seconds: 0, returnAfterSourceHandled: false)
            loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
            XCTAssertEqual(count.current, 1)
            loop.perform(inModes: []) { count.withLock { $0 += 1 } }
            loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
            XCTAssertEqual(count.current, 1)
        }
    }

    func test_perform_in_common_modes_runs_in_a_custom_common_mode() {
        onThread {
            let loop = RunLoop.current
            let custom = RunLoop.Mode("test.common.perform")
            loop.addCommonMode(custom)
            let ran = Shared(false)
            loop.perform(inModes: [.common]) { ran.withLock { $0 = true } }
            loop.run(mode: custom, seconds: 0, returnAfterSourceHandled: false)
            XCTAssertTrue(ran.current)
        }
    }

    func test_perform_from_another_thread_wakes_the_loop() {
        let ready = Shared<RunLoop?>(nil)
        let ranAt = Shared<Double?>(nil)
        let join = startThread {
            let loop = RunLoop.current
            // A source that is never signalled keeps the mode from being empty.
            let keepAlive = RunLoop.Source {}
            loop.add(keepAlive, forMode: .default)
            ready.withLock { $0 = loop }
            // A performed block is not a source: the run goes on after it, so
            // the block stops the run itself.
            loop.run(mode: .default, seconds: 20, returnAfterSourceHandled: true)
            keepAlive.invalidate()
        }
        var loop: RunLoop?
        while loop == nil { loop = ready.current; usleep(1000) }
        while !loop!.isWaiting { usleep(1000) }
        let start = monotonicNow()
        loop!.perform {
            ranAt.withLock { $0 = monotonicNow() }
            RunLoop.current.stop()
        }
        join()
        let delay = ranAt.current.map { $0 - start }
        XCTAssertNotNil(delay)
        XCTAssertLessThan(delay ?? 100, 10)  // woken, not left to the 20 s limit
    }

    func test_stop_ends_the_innermost_run_only() {
        onThread {
            let loop = RunLoop.current
            let results = Shared<[RunLoop.RunResult]>([])
            let keepAlive = RunLoop.Source {}
            loop.add(keepAlive, forMode: .default)
            let inner = RunLoop.Mode("test.inner")
            let innerSource = RunLoop.Source { RunLoop.current.stop() }
            loop.add(innerSource, forMode: inner)
            let outer = RunLoop.Source {
                innerSource.signal()
                let r = RunLoop.current.run(mode: inner, seconds: 10, returnAfterSourceHandled: false)
                results.withLock { $0.append(r) }
            }
            loop.add(outer, forMode: .default)
            outer.signal()
            let r = loop.run(mode: .default, seconds: 0.1, returnAfterSourceHandled: false)
            results.withLock { $0.append(r) }
            XCTAssertEqual(results.current, [.stopped, .timedOut])
            loop.stop()  // not running: does nothing
            XCTAssertEqual(loop.run(mode: .default, seconds: 0.05, returnAfterSourceHandled: false), .timedOut)
            [keepAlive, innerSource, outer].forEach { $0.invalidate() }
        }
    }

    func test_is_waiting_while_sleeping() {
        let ready = Shared<RunLoop?>(nil)
        let join = startThread {
            let loop = RunLoop.current
            let stopper = RunLoop.Source { RunLoop.current.stop() }
            loop.add(stopper, forMode: .default)
            ready.withLock { $0 = loop }
            XCTAssertFalse(loop.isWaiting)
            loop.run(mode: .default, seconds: 30, returnAfterSourceHandled: false)
            XCTAssertFalse(loop.isWaiting)
            stopper.invalidate()
        }
        var loop: RunLoop?
        while loop == nil { loop = ready.current; usleep(1000) }
        let deadline = monotonicNow() + 20
        while !loop!.isWaiting && monotonicNow() < deadline { usleep(1000) }
        XCTAssertTrue(loop!.isWaiting)
        loop!.stop()
        join()
    }

    func test_description_shows_the_c_dump() {
        onThread {
            let loop = RunLoop.current
            let timer = Timer(timeInterval: 100, repeats: false) { _ in }
            loop.add(timer, forMode: RunLoop.Mode("test.description"))
            let text = loop.description
            XCTAssertTrue(text.contains("test.description"), text)
            XCTAssertFalse(timer.description.isEmpty)
            timer.invalidate()
        }
    }
}
