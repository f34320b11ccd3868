// RunLoop.Observer: activity order, filtering, ordering, lifetime.

import XCTest
import FoundationEssentials
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer

final class ObserverTests: XCTestCase {
    func test_observer_sees_the_activities_of_a_pass_in_order() {
        onThread {
            let loop = RunLoop.current
            let seen = Shared<[RunLoop.Activity]>([])
            let observer = RunLoop.Observer(activities: .allActivities) { activity in
                seen.withLock { $0.append(activity) }
            }
            XCTAssertEqual(observer.activities, .allActivities)
            XCTAssertTrue(observer.repeats)
            loop.add(observer, forMode: .default)
            let timer = Timer(timeInterval: 0.02, repeats: false) { _ in
                seen.withLock { $0.append(RunLoop.Activity(rawValue: 1 << 20)) }  // marks the timer
            }
            loop.add(timer, forMode: .default)
            XCTAssertEqual(loop.run(mode: .default, seconds: 10, returnAfterSourceHandled: false), .finished)
            let timerMark = RunLoop.Activity(rawValue: 1 << 20)
            // Entry; a pass that sleeps until the timer; the timer fires; the
            // mode is then empty and the run exits.
            XCTAssertEqual(
                Array(seen.current.prefix(5)),
                [.entry, .beforeTimers, .beforeSources, .beforeWaiting, .afterWaiting])
            XCTAssertEqual(seen.current.last, .exit)
            XCTAssertEqual(seen.current.filter { $0 == .entry }.count, 1)
            let afterWaiting = seen.current.lastIndex(of: .afterWaiting)!
            let fired = seen.current.firstIndex(of: timerMark)!
            XCTAssertLessThan(afterWaiting, fired)
            observer.invalidate()
        }
    }

    func test_observer_is_called_only_for_its_activities_and_modes() {
        onThread {
            let loop = RunLoop.current
            let seen = Shared<[RunLoop.Activity]>([])
            let observer = RunLoop.Observer(activities: [.entry, .exit]) { activity in
                seen.withLock { $0.append(activity) }
            }
            loop.add(observer, forMode: .default)
            let source = RunLoop.Source {}
            loop.add(source, forMode: .default)
            let other = RunLoop.Mode("test.observer.other")
            loop.add(source, forMode: other)
            loop.run(mode: other, seconds: 0, returnAfterSourceHandled: false)
            XCTAssertEqual(seen.current, [])
            loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
            XCTAssertEqual(seen.current, [.entry, .exit])
            source.invalidate()
            // An empty mode: no Entry/Exit.
            loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
            XCTAssertEqual(seen.current, [.entry, .exit])
            observer.invalidate()
        }
    }

    func test_observers_called_in_order() {
        onThread {
            let loop = RunLoop.current
            let seen = Shared<[Int]>([])
            let observers = [3, 1, 2, 1].enumerated().map { index, order in
                RunLoop.Observer(activities: .entry, order: order) { _ in seen.withLock { $0.append(index) } }
            }
            observers.forEach { loop.add($0, forMode: .default) }
            let source = RunLoop.Source {}
            loop.add(source, forMode: .default)
            loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
            XCTAssertEqual(seen.current, [1, 3, 2, 0])  // by order, ties in the order added
            source.invalidate()
            observers.forEach { $0.invalidate() }
        }
    }

    func test_non_repeating_observer_invalidates_itself_and_releases_its_handler() {
        onThread {
            let loop = RunLoop.current
            let count = Shared(0)
            weak var weakCanary: Canary?
            let observer: RunLoop.Observer
            do {
                let canary = Canary()
                weakCanary = canary
                observer = RunLoop.Observer(activities: .beforeSources, repeats: false) { _ in
                    _ = canary
                    count.withLock { $0 += 1 }
                }
            }
            XCTAssertFalse(observer.repeats)
            loop.add(observer, forMode: .default)
            let source = RunLoop.Source {}
            loop.add(source, forMode: .default)
            loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
            loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
            XCTAssertEqual(count.current, 1)
            XCTAssertFalse(observer.isValid)
            XCTAssertNil(weakCanary)
            source.invalidate()
        }
    }

    func test_invalidate_inside_the_handler_and_release() {
        onThread {
            let loop = RunLoop.current
            let count = Shared(0)
            weak var weakCanary: Canary?
            do {
                let canary = Canary()
                weakCanary = canary
                let holder = Shared<UncheckedSendable<RunLoop.Observer>?>(nil)
                let observer = RunLoop.Observer(activities: .beforeTimers) { _ in
                    _ = canary
                    count.withLock { $0 += 1 }
                    holder.current?.value.invalidate()
                }
                holder.withLock { $0 = UncheckedSendable(observer) }
                loop.add(observer, forMode: .default)
                let source = RunLoop.Source {}
                loop.add(source, forMode: .default)
                loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
                loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
                source.invalidate()
                XCTAssertFalse(observer.isValid)
            }
            XCTAssertEqual(count.current, 1)
            XCTAssertNil(weakCanary)
        }
    }
}
