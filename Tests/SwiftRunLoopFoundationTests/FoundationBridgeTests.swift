// Foundation's RunLoop (driven here by XCTest's own waits) and SwiftRunLoop's
// loop sharing the test thread through FoundationBridge.

import Foundation
import XCTest
import SwiftRunLoop
import SwiftRunLoopFoundation
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer

/// A counter the loop's thread bumps and the test reads.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func bump() { lock.lock(); value += 1; lock.unlock() }
    var current: Int { lock.lock(); defer { lock.unlock() }; return value }
}

final class FoundationBridgeTests: XCTestCase {
    override func setUp() {
        super.setUp()
        XCTAssertTrue(FoundationBridge.install())
    }

    // The other test classes share this process and its main thread.
    override func tearDown() {
        FoundationBridge.uninstall()
        super.tearDown()
    }

    // MARK: Foundation hosts ours

    func test_xctest_wait_fires_our_timer() {
        let fired = expectation(description: "our timer fired")
        Timer.scheduledTimer(withTimeInterval: 0.05, repeats: false) { _ in fired.fulfill() }
        wait(for: [fired], timeout: 30)
    }

    @MainActor
    func test_wait_for_expectations_fires_our_repeating_timer() {
        let ticks = Counter()
        let done = expectation(description: "three ticks")
        let timer = Timer.scheduledTimer(withTimeInterval: 0.02, repeats: true) { timer in
            ticks.bump()
            if ticks.current == 3 {
                timer.invalidate()
                done.fulfill()
            }
        }
        waitForExpectations(timeout: 30)
        XCTAssertFalse(timer.isValid)
        XCTAssertEqual(ticks.current, 3)
    }

    func test_our_source_signalled_from_another_thread_runs_during_a_wait() {
        let performed = expectation(description: "our source performed")
        let source = RunLoop.Source { performed.fulfill() }
        let loop = RunLoop.current
        loop.add(source, forMode: .default)
        let signaller = source.signaller
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { signaller.signal(andWakeUp: loop) }
        wait(for: [performed], timeout: 30)
        source.invalidate()
    }

    func test_our_perform_block_runs_during_a_wait() {
        let ran = expectation(description: "our block ran")
        let keep = RunLoop.Source {}
        RunLoop.current.add(keep, forMode: .default)
        RunLoop.current.perform { ran.fulfill() }
        wait(for: [ran], timeout: 30)
        keep.invalidate()
    }

    func test_our_observers_run_during_a_wait() {
        let seen = Counter()
        let observer = RunLoop.Observer(activities: [.beforeTimers]) { _ in seen.bump() }
        RunLoop.current.add(observer, forMode: .default)
        let fired = expectation(description: "our timer fired")
        Timer.scheduledTimer(withTimeInterval: 0.05, repeats: false) { _ in fired.fulfill() }
        wait(for: [fired], timeout: 30)
        observer.invalidate()
        XCTAssertGreaterThanOrEqual(seen.current, 1)
    }

    /// A callout of ours that waits for Foundation (an XCTest wait inside one
    /// of our timers) still sees our other timers fire: the runs nest.
    func test_a_wait_inside_our_timer_sees_our_other_timers() {
        let outerDone = expectation(description: "outer timer finished its wait")
        let innerResult = Counter()
        Timer.scheduledTimer(withTimeInterval: 0.02, repeats: false) { _ in
            let inner = XCTestExpectation(description: "inner timer fired")
            Timer.scheduledTimer(withTimeInterval: 0.02, repeats: false) { _ in inner.fulfill() }
            if XCTWaiter.wait(for: [inner], timeout: 20) == .completed { innerResult.bump() }
            outerDone.fulfill()
        }
        wait(for: [outerDone], timeout: 30)
        XCTAssertEqual(innerResult.current, 1)
    }

    func test_our_modes_run_only_when_foundation_runs_the_same_mode() {
        let custom = RunLoop.Mode("BridgeTestMode")
        FoundationBridge.bridge(mode: custom)
        let fired = Counter()
        let timer = Timer(timeInterval: 0.02, repeats: false) { _ in fired.bump() }
        RunLoop.current.add(timer, forMode: custom)
        // XCTest waits in the default mode: our custom-mode timer stays put.
        let nothing = expectation(description: "nothing")
        nothing.isInverted = true
        wait(for: [nothing], timeout: 0.3)
        XCTAssertEqual(fired.current, 0)
        // Foundation running the custom mode runs ours.
        let limit = Date(timeIntervalSinceNow: 30)
        while fired.current == 0 && Date() < limit {
            _ = Foundation.RunLoop.current.run(mode: Foundation.RunLoop.Mode("BridgeTestMode"), before: limit)
        }
        XCTAssertEqual(fired.current, 1)
    }

    /// An idle loop of ours (a timer far away, a source never signalled)
    /// never wakes Foundation: no pass of ours runs during a quiet wait.
    func test_idle_loop_costs_foundation_no_wake_up() {
        let passes = Counter()
        let observer = RunLoop.Observer(activities: [.entry]) { _ in passes.bump() }
        RunLoop.current.add(observer, forMode: .default)
        let keep = RunLoop.Source {}
        RunLoop.current.add(keep, forMode: .default)
        let far = Timer.scheduledTimer(withTimeInterval: 1000, repeats: false) { _ in }
        // Let whatever earlier tests left behind settle first.
        let settle = expectation(description: "settle")
        settle.isInverted = true
        wait(for: [settle], timeout: 0.2)
        let before = passes.current
        let quiet = expectation(description: "quiet")
        quiet.isInverted = true
        wait(for: [quiet], timeout: 0.5)
        XCTAssertEqual(passes.current - before, 0)
        far.invalidate()
        keep.invalidate()
        observer.invalidate()
    }

    // MARK: Ours hosts Foundation's

    func test_foundation_timer_fires_while_our_loop_runs() {
        let keep = RunLoop.Source {}
        RunLoop.current.add(keep, forMode: .default)
        let fired = Counter()
        // (Foundation's Timer(timeInterval:) fires at once on Linux; a date
        // makes our loop sleep until it is due.)
        let timer = Foundation.Timer(fire: Date(timeIntervalSinceNow: 0.1), interval: 0, repeats: false) { _ in
            fired.bump()
            RunLoop.current.stop()
        }
        Foundation.RunLoop.current.add(timer, forMode: .default)
        let start = Date()
        RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 20))
        XCTAssertEqual(fired.current, 1)
        XCTAssertLessThan(Date().timeIntervalSince(start), 15)
        keep.invalidate()
    }

    func test_foundation_perform_block_runs_while_our_loop_runs() {
        let keep = RunLoop.Source {}
        RunLoop.current.add(keep, forMode: .default)
        let ran = Counter()
        Foundation.RunLoop.current.perform {
            ran.bump()
            RunLoop.current.stop()
        }
        let start = Date()
        RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 20))
        XCTAssertEqual(ran.current, 1)
        XCTAssertLessThan(Date().timeIntervalSince(start), 15)
        keep.invalidate()
    }

    func test_install_is_idempotent_and_uninstall_switches_off() {
        XCTAssertTrue(FoundationBridge.isInstalled)
        XCTAssertTrue(FoundationBridge.install())
        FoundationBridge.uninstall()
        XCTAssertFalse(FoundationBridge.isInstalled)
        XCTAssertTrue(FoundationBridge.install())
        XCTAssertTrue(FoundationBridge.isInstalled)
    }

    func test_bridge_on_a_thread_of_its_own() {
        let fired = Counter()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            FoundationBridge.install()
            Timer.scheduledTimer(withTimeInterval: 0.02, repeats: false) { _ in fired.bump() }
            let limit = Date(timeIntervalSinceNow: 20)
            while fired.current == 0 && Date() < limit {
                _ = Foundation.RunLoop.current.run(mode: .default, before: limit)
            }
            FoundationBridge.uninstall()
            done.signal()
        }
        thread.start()
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(fired.current, 1)
    }
}
