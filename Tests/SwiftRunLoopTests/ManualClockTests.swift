// A run loop on a manual clock: timers fire only as the test advances the
// clock, each at its own time, and a run with nothing left returns .idle
// instead of sleeping. No test here waits for real time.

import XCTest
import FoundationEssentials
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer

final class ManualClockTests: XCTestCase {
    func test_the_clock_reads_its_date_and_moves_only_when_advanced() {
        onThread {
            let loop = RunLoop.current
            XCTAssertFalse(loop.hasManualClock)
            XCTAssertFalse(loop.advance(by: 1))  // real time: refused
            XCTAssertTrue(loop.useManualClock(at: Date(timeIntervalSinceReferenceDate: 100)))
            XCTAssertTrue(loop.hasManualClock)
            XCTAssertEqual(loop.currentDate, Date(timeIntervalSinceReferenceDate: 100))
            XCTAssertTrue(loop.advance(by: 2.5))
            XCTAssertEqual(loop.clockDate, Date(timeIntervalSinceReferenceDate: 102.5))
            XCTAssertFalse(loop.advance(to: Date(timeIntervalSinceReferenceDate: 101)))  // never back
            XCTAssertFalse(loop.advance(by: -1))
            XCTAssertTrue(loop.useRealClock())
            XCTAssertFalse(loop.hasManualClock)
        }
    }

    /// A search box's 300 ms debounce: each keystroke puts the search off.
    func test_debounce_is_tested_without_waiting() {
        onThread {
            let loop = RunLoop.current
            loop.useManualClock()
            let searches = Shared<[Double]>([])
            var pending: Timer?
            func keystroke() {
                pending?.invalidate()
                pending = Timer.scheduledTimer(withTimeInterval: 0.3, repeats: false) { _ in
                    let at = RunLoop.current.currentDate.timeIntervalSinceReferenceDate
                    searches.withLock { $0.append(at) }
                }
            }
            keystroke()
            loop.advance(by: 0.1)
            XCTAssertEqual(loop.runUntilIdle(), .idle)
            keystroke()
            loop.advance(by: 0.299)
            XCTAssertEqual(loop.runUntilIdle(), .idle)
            XCTAssertEqual(searches.current, [])
            loop.advance(by: 0.001)
            XCTAssertEqual(loop.runUntilIdle(), .finished)  // fired; nothing left in the mode
            XCTAssertEqual(searches.current.count, 1)
            XCTAssertEqual(searches.current.first ?? 0, 0.4, accuracy: 1e-9)
        }
    }

    /// Ten seconds over a timer repeating every second: ten fires, each on
    /// its grid point, seen by the block as the loop's time.
    func test_repeating_timer_fires_on_every_grid_point() {
        onThread {
            let loop = RunLoop.current
            loop.useManualClock()
            let seen = Shared<[Double]>([])
            let timer = Timer(fire: loop.currentDate.addingTimeInterval(1), interval: 1, repeats: true) { _ in
                let at = RunLoop.current.currentDate.timeIntervalSinceReferenceDate
                seen.withLock { $0.append(at) }
            }
            loop.add(timer, forMode: .default)
            loop.advance(by: 10.5)
            XCTAssertEqual(loop.runUntilIdle(), .idle)
            XCTAssertEqual(seen.current, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
            XCTAssertEqual(timer.fireDate, Date(timeIntervalSinceReferenceDate: 11))
            timer.invalidate()
        }
    }

    /// run(until:) measures its limit on the loop's time, and returns once
    /// the loop is idle rather than spinning until the wall clock gets there.
    func test_run_until_uses_the_loop_time() {
        onThread {
            let loop = RunLoop.current
            loop.useManualClock()
            let fires = Shared(0)
            let timer = Timer(fire: loop.currentDate.addingTimeInterval(1), interval: 1, repeats: true) { _ in
                fires.withLock { $0 += 1 }
            }
            loop.add(timer, forMode: .default)
            loop.advance(by: 100)
            loop.run(until: loop.currentDate.addingTimeInterval(5))
            XCTAssertEqual(fires.current, 5)
            XCTAssertEqual(loop.currentDate, Date(timeIntervalSinceReferenceDate: 5))
            // A limit beyond the clock: it catches up (95 more) and returns idle.
            loop.run(until: Date.distantFuture)
            XCTAssertEqual(fires.current, 100)
            timer.invalidate()
        }
    }

    func test_perform_after_a_delay_runs_when_the_clock_gets_there() {
        onThread {
            let loop = RunLoop.current
            loop.useManualClock()
            let ran = Shared(false)
            loop.perform(after: 30) { ran.withLock { $0 = true } }
            loop.advance(by: 29.9)
            loop.runUntilIdle()
            XCTAssertFalse(ran.current)
            loop.advance(by: 0.1)
            loop.runUntilIdle()
            XCTAssertTrue(ran.current)
        }
    }
}
