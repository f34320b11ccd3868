// RunLoop.statistics: a scripted run's counts are exact, the longest callout
// is the slow one, and a hang report carries the loop's statistics.

import XCTest
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer
#if canImport(Glibc)
import Glibc
#endif

final class StatisticsTests: XCTestCase {
    func test_a_polling_pass_counts_its_blocks_and_timers() {
        onThread {
            let loop = RunLoop.current
            XCTAssertEqual(loop.statistics.passes, 0)
            let ran = Shared(0)
            for _ in 0..<3 { loop.perform { ran.withLock { $0 += 1 } } }
            let timer = Timer(timeInterval: 0, repeats: false) { _ in ran.withLock { $0 += 10 } }
            loop.add(timer, forMode: .default)
            _ = loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
            let statistics = loop.statistics
            XCTAssertEqual(ran.current, 13)
            XCTAssertEqual(statistics.passes, 1)
            XCTAssertEqual(statistics.sleeps, 0)
            XCTAssertEqual(statistics.callouts[.block], 3)
            XCTAssertEqual(statistics.callouts[.timer], 1)
            XCTAssertEqual(statistics.callouts[.observer], 0)
            XCTAssertEqual(statistics.timersFired, 1)
            XCTAssertEqual(statistics.wakeUps.values.reduce(0, +), 0)
            XCTAssertTrue(statistics.description.hasPrefix("passes 1, sleeps 0;"), statistics.description)
        }
    }

    func test_a_sleep_ended_by_a_timer_is_counted() {
        onThread {
            let loop = RunLoop.current
            let timer = Timer(timeInterval: 0.02, repeats: false) { _ in RunLoop.current.stop() }
            loop.add(timer, forMode: .default)
            XCTAssertEqual(loop.run(mode: .default, seconds: 10, returnAfterSourceHandled: false), .stopped)
            let statistics = loop.statistics
            XCTAssertEqual(statistics.sleeps, 1)
            XCTAssertEqual(statistics.wakeUps[.timer], 1)
            XCTAssertEqual(statistics.timersFired, 1)
        }
    }

    func test_the_longest_callout_is_the_slow_one() {
        onThread {
            let loop = RunLoop.current
            loop.perform {}
            loop.perform {
                var request = timespec(tv_sec: 0, tv_nsec: 30_000_000)
                var remaining = timespec()
                while nanosleep(&request, &remaining) != 0 { request = remaining }
            }
            _ = loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
            guard let longest = loop.statistics.longestCallout else { return XCTFail("no longest callout") }
            // The coarse clock is at most a tick (10 ms) behind at either end.
            XCTAssertGreaterThanOrEqual(longest.duration, 0.02)
            XCTAssertEqual(longest.kind, .block)
            XCTAssertEqual(longest.span, 1)
            XCTAssertNotEqual(longest.functionAddress, 0)
            XCTAssertTrue(loop.statistics.description.contains("longest callout: "))
        }
    }
}
