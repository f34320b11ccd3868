// A file that imports Foundation and SwiftRunLoop together: the scoped
// imports make the unqualified names ours, as the README promises.

import Foundation
import XCTest
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer

final class FoundationInteropTests: XCTestCase {
    func test_scoped_imports_pick_swiftrunloop_types() {
        let loop: SwiftRunLoop.RunLoop = RunLoop.current
        XCTAssertTrue(loop === SwiftRunLoop.RunLoop.current)
        let timer: SwiftRunLoop.Timer = Timer(timeInterval: 1, repeats: false) { _ in }
        XCTAssertTrue(timer.isValid)
        timer.invalidate()
        // Foundation's types stay reachable by their qualified names.
        XCTAssertTrue(Foundation.RunLoop.current === Foundation.RunLoop.current)
    }

    func test_runs_on_a_foundation_thread() {
        let fired = Shared(0)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            Timer.scheduledTimer(withTimeInterval: 0.01, repeats: true) { timer in
                if fired.withLock({ c -> Int in
                    c += 1; return c
                }) == 2 {
                    timer.invalidate()
                }
            }
            RunLoop.current.run()  // ours: returns when the default mode is empty
            done.signal()
        }
        thread.start()
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success)
        XCTAssertEqual(fired.current, 2)
    }

    func test_foundation_dates_work_with_our_timers() {
        let date = Date(timeIntervalSinceNow: 3)
        let timer = Timer(fire: date, interval: 0, repeats: false) { _ in }
        XCTAssertEqual(timer.fireDate, date)
        timer.invalidate()
    }
}
