// RunLoop.Source: signalling, ordering, cross-thread use, invalidation.

import XCTest
import FoundationEssentials
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer

final class SourceTests: XCTestCase {
    func test_properties() {
        let source = RunLoop.Source(order: 7) {}
        XCTAssertEqual(source.order, 7)
        XCTAssertTrue(source.isValid)
        XCTAssertFalse(source.description.isEmpty)
        source.invalidate()
        XCTAssertFalse(source.isValid)
        source.invalidate()  // idempotent
    }

    func test_signals_coalesce_and_signal_does_not_wake() {
        onThread {
            let loop = RunLoop.current
            let count = Shared(0)
            let source = addCountingSource(to: loop, counting: count)
            source.signal()
            source.signal()
            loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
            XCTAssertEqual(count.current, 1)
            loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
            XCTAssertEqual(count.current, 1)  // sources stay added but need a new signal
            XCTAssertTrue(loop.contains(source, forMode: .default))
            source.invalidate()
            XCTAssertFalse(loop.contains(source, forMode: .default))
        }
    }

    func test_signalled_from_another_thread_with_wake_up() {
        let ready = Shared<(RunLoop, RunLoop.Source.Signaller)?>(nil)
        let performedOn = Shared<[Bool]>([])
        let join = startThread {
            let loop = RunLoop.current
            let source = RunLoop.Source { performedOn.withLock { $0.append(RunLoop.current === loop) } }
            loop.add(source, forMode: .default)
            ready.withLock { $0 = (loop, source.signaller) }
            let deadline = monotonicNow() + 20
            while performedOn.current.count < 3 && monotonicNow() < deadline {
                loop.run(mode: .default, before: Date(timeIntervalSinceNow: 20))
            }
            source.invalidate()
        }
        var pair: (RunLoop, RunLoop.Source.Signaller)?
        while pair == nil { pair = ready.current; usleep(1000) }
        let (loop, signaller) = pair!
        let start = monotonicNow()
        for i in 0..<3 {
            // Wait until the loop sleeps, so each signal needs the wake-up.
            while !loop.isWaiting || performedOn.current.count < i { usleep(500) }
            if i == 0 {
                signaller.signal()
                loop.wakeUp()
            } else {
                signaller.signal(andWakeUp: loop)
            }
        }
        join()
        XCTAssertEqual(performedOn.current, [true, true, true])
        XCTAssertLessThan(monotonicNow() - start, 15)
    }

    func test_invalidate_inside_perform() {
        onThread {
            let loop = RunLoop.current
            let canaryGone = Shared(false)
            weak var weakCanary: Canary?
            do {
                let canary = Canary()
                weakCanary = canary
                var source: RunLoop.Source?
                let holder = Shared<UncheckedSendable<RunLoop.Source>?>(nil)
                source = RunLoop.Source {
                    _ = canary
                    holder.current?.value.invalidate()
                    // Still running safely after our own invalidation.
                    canaryGone.withLock { $0 = false }
                }
                holder.withLock { $0 = UncheckedSendable(source!) }
                loop.add(source!, forMode: .default)
                source!.signal()
                XCTAssertEqual(loop.run(mode: .default, seconds: 5, returnAfterSourceHandled: true), .handledSource)
                XCTAssertFalse(source!.isValid)
                source = nil
            }
            // The closure (and its canary) was released at invalidation even
            // though `holder` still references the source.
            XCTAssertNil(weakCanary)
            XCTAssertFalse(canaryGone.current)
        }
    }

    func test_closure_released_after_invalidate() {
        weak var weakCanary: Canary?
        let source: RunLoop.Source
        do {
            let canary = Canary()
            weakCanary = canary
            source = RunLoop.Source { _ = canary }
        }
        XCTAssertNotNil(weakCanary)
        source.invalidate()
        XCTAssertNil(weakCanary)
    }

    func test_closure_released_with_an_unscheduled_source() {
        weak var weakCanary: Canary?
        do {
            let canary = Canary()
            weakCanary = canary
            let source = RunLoop.Source { _ = canary }
            _ = source
        }
        XCTAssertNil(weakCanary)
    }

    func test_source_in_two_modes_performs_in_each() {
        onThread {
            let loop = RunLoop.current
            let custom = RunLoop.Mode("test.source.two")
            let count = Shared(0)
            let source = addCountingSource(to: loop, counting: count)
            loop.add(source, forMode: custom)
            source.signal()
            loop.run(mode: custom, seconds: 0, returnAfterSourceHandled: false)
            source.signal()
            loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
            XCTAssertEqual(count.current, 2)
            loop.remove(source, forMode: custom)
            XCTAssertFalse(loop.contains(source, forMode: custom))
            XCTAssertTrue(loop.contains(source, forMode: .default))
            source.invalidate()
        }
    }
}
