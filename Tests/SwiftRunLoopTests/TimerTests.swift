// Timer: Foundation's behaviours (macOS semantics), asserted with bounds loose
// enough for a loaded machine.

import XCTest
import FoundationEssentials
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer

final class TimerTests: XCTestCase {
    func test_init_keeps_the_fire_date_exactly() {
        let date = Date(timeIntervalSinceNow: 12.345678)
        let once = Timer(fire: date, interval: 0.3, repeats: false) { _ in }
        XCTAssertEqual(once.fireDate, date)
        XCTAssertEqual(once.timeInterval, 0)
        XCTAssertTrue(once.isValid)
        let repeating = Timer(fire: date, interval: 0.3, repeats: true) { _ in }
        XCTAssertEqual(repeating.fireDate, date)
        XCTAssertEqual(repeating.timeInterval, 0.3)
        let tiny = Timer(fire: date, interval: 0, repeats: true) { _ in }
        XCTAssertEqual(tiny.timeInterval, 0.0001)  // macOS: 0.1 ms for interval <= 0
    }

    func test_init_time_interval_first_fires_one_interval_from_now() {
        let before = Date()
        let timer = Timer(timeInterval: 5, repeats: false) { _ in }
        let after = Date()
        XCTAssertGreaterThanOrEqual(timer.fireDate, before.addingTimeInterval(5))
        XCTAssertLessThanOrEqual(timer.fireDate, after.addingTimeInterval(5))
    }

    func test_scheduled_timer_ticks_once() {
        onThread {
            let count = Shared(0)
            let timer = Timer.scheduledTimer(withTimeInterval: 0.01, repeats: false) { _ in
                count.withLock { $0 += 1 }
            }
            XCTAssertTrue(RunLoop.current.contains(timer, forMode: .default))
            RunLoop.current.run(until: Date(timeIntervalSinceNow: 0.3))
            XCTAssertEqual(count.current, 1)
            XCTAssertFalse(timer.isValid)  // one-shot: invalidated after firing
        }
    }

    func test_one_shot_timer_in_run_mode_before_returns_true() {
        onThread {
            let loop = RunLoop.current
            let mode = Shared<RunLoop.Mode?>(nil)
            Timer.scheduledTimer(withTimeInterval: 0.01, repeats: false) { _ in
                mode.withLock { $0 = RunLoop.current.currentMode }
            }
            // The timer fires, the mode becomes empty and the run ends; it did
            // run, so it returns true as on macOS.
            XCTAssertTrue(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 10)))
            XCTAssertEqual(mode.current, .default)
            XCTAssertFalse(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 10)))
        }
    }

    func test_run_until_with_a_repeating_timer_fires_about_the_expected_count() {
        onThread {
            let fires = Shared<[Double]>([])
            let timer = Timer.scheduledTimer(withTimeInterval: 0.05, repeats: true) { timer in
                XCTAssertEqual(timer.timeInterval, 0.05)
                fires.withLock { $0.append(monotonicNow()) }
            }
            let start = monotonicNow()
            RunLoop.current.run(until: Date(timeIntervalSinceNow: 0.5))
            let elapsed = monotonicNow() - start
            timer.invalidate()
            let times = fires.current
            // Nominally 10 (at 0.05, 0.10, ... 0.50 s). A late loop skips
            // missed grid points, it never bursts, so 10 is an upper bound.
            XCTAssertLessThanOrEqual(times.count, 10)
            XCTAssertGreaterThanOrEqual(times.count, 3)
            XCTAssertGreaterThanOrEqual(elapsed, 0.49)
            // Never early: fire k happens no sooner than k * interval.
            for (k, t) in times.enumerated() {
                XCTAssertGreaterThanOrEqual(t - start, 0.05 * Double(k + 1) - 0.005)
            }
        }
    }

    func test_timers_do_not_make_run_mode_before_return() {
        onThread {
            let count = Shared(0)
            let timer = Timer.scheduledTimer(withTimeInterval: 0.02, repeats: true) { _ in
                count.withLock { $0 += 1 }
            }
            let start = monotonicNow()
            XCTAssertTrue(RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.3)))
            XCTAssertGreaterThanOrEqual(monotonicNow() - start, 0.29)
            XCTAssertGreaterThanOrEqual(count.current, 2)
            timer.invalidate()
        }
    }

    func test_invalidate_inside_the_block() {
        onThread {
            let count = Shared(0)
            let validInside = Shared<[Bool]>([])
            Timer.scheduledTimer(withTimeInterval: 0.01, repeats: true) { timer in
                validInside.withLock { $0.append(timer.isValid) }
                count.withLock { $0 += 1 }
                timer.invalidate()
                validInside.withLock { $0.append(timer.isValid) }
            }
            RunLoop.current.run(until: Date(timeIntervalSinceNow: 0.2))
            XCTAssertEqual(count.current, 1)
            XCTAssertEqual(validInside.current, [true, false])
        }
    }

    func test_timer_fires_three_times_then_invalidates_itself() {
        onThread {
            let count = Shared(0)
            Timer.scheduledTimer(withTimeInterval: 0.05, repeats: true) { timer in
                let n = count.withLock { c -> Int in
                    c += 1; return c
                }
                if n == 3 { timer.invalidate() }
            }
            // run(until:) returns early once the mode is empty.
            RunLoop.current.run(until: Date(timeIntervalSinceNow: 20))
            XCTAssertEqual(count.current, 3)
        }
    }

    func test_timers_with_the_same_fire_date_fire_in_the_order_added() {
        onThread {
            let loop = RunLoop.current
            let order = Shared<[Int]>([])
            let date = Date(timeIntervalSinceNow: 0.02)
            for i in 0..<10 {
                loop.add(
                    Timer(fire: date, interval: 0, repeats: false) { _ in order.withLock { $0.append(i) } },
                    forMode: .default)
            }
            loop.run(until: Date(timeIntervalSinceNow: 10))
            XCTAssertEqual(order.current, Array(0..<10))
        }
    }

    func test_tolerance_round_trips_and_is_clamped() {
        let timer = Timer(timeInterval: 1, repeats: true) { _ in }
        XCTAssertEqual(timer.tolerance, 0)
        timer.tolerance = 0.1
        XCTAssertEqual(timer.tolerance, 0.1)
        timer.tolerance = -1
        XCTAssertEqual(timer.tolerance, 0)
        timer.tolerance = 10
        XCTAssertEqual(timer.tolerance, 0.5)  // half the interval for a repeating timer
    }

    func test_timer_with_tolerance_fires_within_it() {
        onThread {
            let fired = Shared<Double?>(nil)
            let timer = Timer(timeInterval: 0.05, repeats: false) { _ in fired.withLock { $0 = monotonicNow() } }
            timer.tolerance = 0.05
            let start = monotonicNow()
            RunLoop.current.add(timer, forMode: .default)
            RunLoop.current.run(until: Date(timeIntervalSinceNow: 5))
            let delay = fired.current.map { $0 - start }
            XCTAssertNotNil(delay)
            XCTAssertGreaterThanOrEqual(delay ?? 0, 0.045)
        }
    }

    func test_setting_fire_date_reschedules() {
        onThread {
            let loop = RunLoop.current
            let fired = Shared<Double?>(nil)
            let timer = Timer(timeInterval: 100, repeats: false) { _ in fired.withLock { $0 = monotonicNow() } }
            loop.add(timer, forMode: .default)
            let start = monotonicNow()
            let newDate = Date(timeIntervalSinceNow: 0.05)
            timer.fireDate = newDate
            XCTAssertEqual(timer.fireDate, newDate)
            XCTAssertEqual(loop.limitDate(forMode: .default), newDate)
            loop.run(until: Date(timeIntervalSinceNow: 10))
            let delay = fired.current.map { $0 - start }
            XCTAssertNotNil(delay)
            XCTAssertGreaterThanOrEqual(delay ?? 0, 0.045)
            XCTAssertLessThan(delay ?? 100, 9)
        }
    }

    func test_setting_fire_date_from_another_thread_wakes_a_sleeping_loop() {
        let timerBox = Shared<UncheckedSendable<Timer>?>(nil)
        let ready = Shared<RunLoop?>(nil)
        let fired = Shared(false)
        let join = startThread {
            let loop = RunLoop.current
            let timer = Timer(timeInterval: 100, repeats: false) { _ in fired.withLock { $0 = true } }
            loop.add(timer, forMode: .default)
            timerBox.withLock { $0 = UncheckedSendable(timer) }
            ready.withLock { $0 = loop }
            loop.run(mode: .default, before: Date(timeIntervalSinceNow: 30))
        }
        var loop: RunLoop?
        while loop == nil { loop = ready.current; usleep(1000) }
        while !loop!.isWaiting { usleep(1000) }
        let start = monotonicNow()
        timerBox.current!.value.fireDate = Date(timeIntervalSinceNow: 0.02)
        join()
        XCTAssertTrue(fired.current)
        XCTAssertLessThan(monotonicNow() - start, 20)
    }

    func test_fire_calls_the_block_and_invalidates_a_one_shot() {
        let count = Shared(0)
        let once = Timer(timeInterval: 100, repeats: false) { _ in count.withLock { $0 += 1 } }
        once.fire()
        XCTAssertEqual(count.current, 1)
        XCTAssertFalse(once.isValid)
        once.fire()
        XCTAssertEqual(count.current, 1)
        let date = Date(timeIntervalSinceNow: 100)
        let repeating = Timer(fire: date, interval: 1, repeats: true) { _ in count.withLock { $0 += 1 } }
        repeating.fire()
        XCTAssertEqual(count.current, 2)
        XCTAssertTrue(repeating.isValid)
        XCTAssertEqual(repeating.fireDate, date)
        repeating.invalidate()
    }

    func test_timer_in_common_modes_fires_in_a_custom_common_mode() {
        onThread {
            let loop = RunLoop.current
            let custom = RunLoop.Mode("test.common.timer")
            loop.addCommonMode(custom)
            let modes = Shared<[RunLoop.Mode?]>([])
            let timer = Timer(timeInterval: 0.01, repeats: false) { _ in
                modes.withLock { $0.append(RunLoop.current.currentMode) }
            }
            loop.add(timer, forMode: .common)
            XCTAssertTrue(loop.contains(timer, forMode: .common))
            XCTAssertTrue(loop.run(mode: custom, before: Date(timeIntervalSinceNow: 10)))
            XCTAssertEqual(modes.current, [custom])
        }
    }

    func test_timer_in_common_modes_fires_in_a_mode_made_common_later() {
        onThread {
            let loop = RunLoop.current
            let count = Shared(0)
            let timer = Timer(timeInterval: 0.01, repeats: false) { _ in count.withLock { $0 += 1 } }
            loop.add(timer, forMode: .common)
            let custom = RunLoop.Mode("test.common.later")
            XCTAssertFalse(loop.run(mode: custom, before: Date(timeIntervalSinceNow: 0.05)))
            loop.addCommonMode(custom)
            loop.run(mode: custom, before: Date(timeIntervalSinceNow: 10))
            XCTAssertEqual(count.current, 1)
        }
    }

    func test_timer_only_fires_in_its_modes() {
        onThread {
            let loop = RunLoop.current
            let count = Shared(0)
            let other = RunLoop.Mode("test.other")
            let keepAlive = RunLoop.Source {}
            loop.add(keepAlive, forMode: other)
            let timer = Timer(timeInterval: 0.01, repeats: false) { _ in count.withLock { $0 += 1 } }
            loop.add(timer, forMode: .default)
            loop.run(mode: other, before: Date(timeIntervalSinceNow: 0.1))
            XCTAssertEqual(count.current, 0)
            loop.run(mode: .default, before: Date(timeIntervalSinceNow: 10))
            XCTAssertEqual(count.current, 1)
            keepAlive.invalidate()
        }
    }

    func test_removed_timer_does_not_fire_but_stays_valid() {
        onThread {
            let loop = RunLoop.current
            let count = Shared(0)
            let timer = Timer(timeInterval: 0.01, repeats: true) { _ in count.withLock { $0 += 1 } }
            loop.add(timer, forMode: .default)
            loop.remove(timer, forMode: .default)
            XCTAssertFalse(loop.contains(timer, forMode: .default))
            XCTAssertFalse(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 0.1)))
            XCTAssertEqual(count.current, 0)
            XCTAssertTrue(timer.isValid)
            timer.invalidate()
        }
    }
}
