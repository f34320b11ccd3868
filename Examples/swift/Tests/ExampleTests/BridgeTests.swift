// Testing code that uses SwiftRunLoop with XCTest: XCTest's waits run
// Foundation's RunLoop on the test's thread (the main thread), so the test
// installs FoundationBridge in setUp; without it, the timers below would
// never fire during the wait (and SwiftRunLoop says so once on standard
// error).

import XCTest
import SwiftRunLoop
import SwiftRunLoopFoundation
import Synchronization
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer

/// Code under test: calls back after a delay, on the loop it was given.
struct Reminder {
    let runLoop: RunLoop

    func remind(after seconds: TimeInterval, _ body: @escaping @Sendable () -> Void) {
        let timer = Timer(timeInterval: seconds, repeats: false) { _ in body() }
        runLoop.add(timer, forMode: .default)
    }
}

final class BridgeTests: XCTestCase {
    override func setUp() {
        super.setUp()
        FoundationBridge.install()
    }

    override func tearDown() {
        FoundationBridge.uninstall()
        super.tearDown()
    }

    func testReminderFiresWhileXCTestWaits() {
        let reminded = expectation(description: "reminded")
        Reminder(runLoop: RunLoop.current).remind(after: 0.05) { reminded.fulfill() }
        wait(for: [reminded], timeout: 5)
    }

    func testBlocksQueuedFromAnotherThreadRunDuringTheWait() {
        let ran = expectation(description: "block ran")
        let loop = RunLoop.current
        let keepAlive = RunLoop.Source {}  // the default mode is not empty between blocks
        loop.add(keepAlive, forMode: .default)
        Thread.detachNewThread { loop.perform { ran.fulfill() } }
        wait(for: [ran], timeout: 5)
        keepAlive.invalidate()
    }

    /// Without Foundation in the way: the test runs our loop itself.
    func testRunningTheLoopDirectly() {
        let done = Atomic(false)
        Reminder(runLoop: RunLoop.current).remind(after: 0.01) { done.store(true, ordering: .relaxed) }
        let limit = Date(timeIntervalSinceNow: 5)
        while !done.load(ordering: .relaxed) && Date() < limit {
            RunLoop.current.run(mode: .default, before: limit)
        }
        XCTAssertTrue(done.load(ordering: .relaxed))
    }
}
