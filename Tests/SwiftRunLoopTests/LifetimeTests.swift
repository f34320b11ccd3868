// Closure lifetimes: nothing leaks, nothing is used after it is freed, and no
// retain cycle runs through a Timer's block.

import XCTest
import FoundationEssentials
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer

final class LifetimeTests: XCTestCase {
    func test_timer_block_released_after_invalidate() {
        weak var weakCanary: Canary?
        let timer: Timer
        do {
            let canary = Canary()
            weakCanary = canary
            timer = Timer(timeInterval: 100, repeats: true) { _ in _ = canary }
        }
        XCTAssertNotNil(weakCanary)
        timer.invalidate()
        XCTAssertNil(weakCanary)  // released although the Timer is still referenced
    }

    func test_one_shot_timer_block_released_after_it_fired() {
        onThread {
            weak var weakCanary: Canary?
            let timer: Timer
            do {
                let canary = Canary()
                weakCanary = canary
                timer = Timer.scheduledTimer(withTimeInterval: 0.01, repeats: false) { _ in _ = canary }
            }
            RunLoop.current.run(until: Date(timeIntervalSinceNow: 5))
            XCTAssertFalse(timer.isValid)
            XCTAssertNil(weakCanary)
        }
    }

    func test_unscheduled_timer_and_block_freed_with_last_reference() {
        weak var weakTimer: Timer?
        weak var weakCanary: Canary?
        do {
            let canary = Canary()
            weakCanary = canary
            let timer = Timer(timeInterval: 1, repeats: true) { _ in _ = canary }
            weakTimer = timer
        }
        XCTAssertNil(weakTimer)
        XCTAssertNil(weakCanary)
    }

    func test_scheduled_timer_without_references_keeps_firing_and_is_freed_after_invalidate() {
        onThread {
            weak var weakCanary: Canary?
            weak var weakTimer: Timer?
            let count = Shared(0)
            do {
                let canary = Canary()
                weakCanary = canary
                weakTimer = Timer.scheduledTimer(withTimeInterval: 0.01, repeats: true) { timer in
                    _ = canary
                    let n = count.withLock { c -> Int in
                        c += 1; return c
                    }
                    if n == 3 { timer.invalidate() }
                }
            }
            // The loop keeps the timer; the wrapper itself may go away.
            XCTAssertNil(weakTimer)
            RunLoop.current.run(until: Date(timeIntervalSinceNow: 20))
            XCTAssertEqual(count.current, 3)
            XCTAssertNil(weakCanary)
        }
    }

    func test_one_shot_timer_without_references_fires_once_with_a_working_timer() {
        onThread {
            weak var weakCanary: Canary?
            let seen = Shared<[Bool]>([])
            do {
                let canary = Canary()
                weakCanary = canary
                _ = Timer.scheduledTimer(withTimeInterval: 0.01, repeats: false) { timer in
                    _ = canary
                    seen.withLock { $0.append(timer.isValid && timer.timeInterval == 0) }
                }
            }
            RunLoop.current.run(until: Date(timeIntervalSinceNow: 5))
            XCTAssertEqual(seen.current, [true])
            XCTAssertNil(weakCanary)
        }
    }

    func test_repeating_timer_without_references_whose_block_keeps_it_gets_that_wrapper_again() {
        onThread {
            let kept = Shared<UncheckedSendable<Timer>?>(nil)
            let same = Shared<[Bool]>([])
            do {
                _ = Timer.scheduledTimer(withTimeInterval: 0.01, repeats: true) { timer in
                    let previous = kept.current?.value
                    if let previous { same.withLock { $0.append(previous === timer) } }
                    kept.withLock { $0 = UncheckedSendable(timer) }
                    if same.current.count == 3 { timer.invalidate() }
                }
            }
            RunLoop.current.run(until: Date(timeIntervalSinceNow: 20))
            XCTAssertEqual(same.current, [true, true, true])
            kept.withLock { $0 = nil }
        }
    }

    func test_block_capturing_its_timer_is_not_a_permanent_cycle() {
        onThread {
            weak var weakTimer: Timer?
            let count = Shared(0)
            do {
                // The cycle a user may write (block -> timer -> block) is
                // broken by invalidation, as with Foundation.
                let holder = Shared<UncheckedSendable<Timer>?>(nil)
                let timer = Timer(timeInterval: 0.01, repeats: true) { _ in
                    let n = count.withLock { c -> Int in
                        c += 1; return c
                    }
                    if n == 2 { holder.current?.value.invalidate() }
                }
                holder.withLock { $0 = UncheckedSendable(timer) }
                weakTimer = timer
                RunLoop.current.add(timer, forMode: .default)
                RunLoop.current.run(until: Date(timeIntervalSinceNow: 20))
                holder.withLock { $0 = nil }
            }
            XCTAssertEqual(count.current, 2)
            XCTAssertNil(weakTimer)
        }
    }

    func test_timer_in_the_block_is_the_scheduled_wrapper_while_referenced() {
        onThread {
            let same = Shared<[Bool]>([])
            let timerRef = Shared<ObjectIdentifier?>(nil)
            let timer = Timer(timeInterval: 0.01, repeats: false) { t in
                same.withLock { $0.append(ObjectIdentifier(t) == timerRef.current) }
            }
            timerRef.withLock { $0 = ObjectIdentifier(timer) }
            RunLoop.current.add(timer, forMode: .default)
            RunLoop.current.run(until: Date(timeIntervalSinceNow: 5))
            XCTAssertEqual(same.current, [true])
        }
    }

    func test_many_timers_sources_and_observers_leave_nothing_behind() {
        onThread {
            let loop = RunLoop.current
            var canaries: [WeakRef<Canary>] = []
            for i in 0..<200 {
                let canary = Canary()
                let weak = WeakRef<Canary>()
                weak.set(canary)
                canaries.append(weak)
                switch i % 3 {
                case 0:
                    let t = Timer(timeInterval: 0.001, repeats: i % 2 == 0) { t in
                        _ = canary; t.invalidate()
                    }
                    loop.add(t, forMode: .default)
                case 1:
                    let s = RunLoop.Source { _ = canary }
                    loop.add(s, forMode: .default)
                    s.signal()
                    loop.perform { s.invalidate() }
                default:
                    let o = RunLoop.Observer(activities: .beforeSources, repeats: false) { _ in _ = canary }
                    loop.add(o, forMode: .default)
                }
            }
            loop.run(until: Date(timeIntervalSinceNow: 20))
            XCTAssertEqual(canaries.filter { $0.get() != nil }.count, 0)
        }
    }

    func test_run_loop_of_an_exited_thread_and_its_items_are_freed() {
        let weakLoop = WeakRef<RunLoop>()
        let weakCanary = WeakRef<Canary>()
        onThread {
            let canary = Canary()
            weakLoop.set(RunLoop.current)
            weakCanary.set(canary)
            let timer = Timer(timeInterval: 100, repeats: true) { _ in _ = canary }
            RunLoop.current.add(timer, forMode: .default)
            let source = RunLoop.Source { _ = canary }
            RunLoop.current.add(source, forMode: .default)
        }
        // The thread's RunLoop object went with the thread; tearing the C loop
        // down released the timer and the source it still held, and so their
        // closures.
        XCTAssertNil(weakLoop.get())
        XCTAssertNil(weakCanary.get())
    }
}

/// A weak reference that threads can share.
final class WeakRef<T: AnyObject>: @unchecked Sendable {
    private let lock = Shared(())
    private weak var value: T?
    func set(_ object: T) { lock.withLock { _ in value = object } }
    func get() -> T? { lock.withLock { _ in value } }
}
