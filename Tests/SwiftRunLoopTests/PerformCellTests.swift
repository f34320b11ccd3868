// Blocks queued with `perform` for one mode wait in the C queue's items
// themselves (the closure is the item's payload) rather than in an object
// each (they once waited in recycled cells): these tests pin down what that
// storage must keep
// (FIFO with every other kind of queued work, each closure released exactly
// once whether it ran or was dropped, nested runs, many threads at once).

import XCTest
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
#if canImport(Glibc)
import Glibc
#endif

/// Counts its deinits, to check that every queued closure is released once.
private final class Tracked: @unchecked Sendable {
    let released: Shared<Int>
    init(_ released: Shared<Int>) { self.released = released }
    deinit { released.withLock { $0 += 1 } }
}

final class PerformCellTests: XCTestCase {
    func test_one_mode_blocks_stay_fifo_with_other_kinds_of_queued_work() {
        onThread {
            let loop = RunLoop.current
            let custom = RunLoop.Mode("test.cells.custom")
            let order = Shared<[Int]>([])
            var expected: [Int] = []
            for i in 0..<3000 {
                switch i % 4 {
                case 0: loop.perform { order.withLock { $0.append(i) } }
                case 1: loop.perform(inModes: [.default, custom]) { order.withLock { $0.append(i) } }
                case 2: loop.perform(waitUntilDone: false) { order.withLock { $0.append(i) } }
                default: loop.perform(inModes: [.common]) { order.withLock { $0.append(i) } }
                }
                expected.append(i)
            }
            while order.current.count < expected.count {
                loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
            }
            XCTAssertEqual(order.current, expected)
        }
    }

    func test_blocks_queued_for_another_mode_wait_and_keep_their_order() {
        onThread {
            let loop = RunLoop.current
            let custom = RunLoop.Mode("test.cells.other")
            let order = Shared<[String]>([])
            for i in 0..<100 {
                loop.perform(inModes: [custom]) { order.withLock { $0.append("c\(i)") } }
                loop.perform { order.withLock { $0.append("d\(i)") } }
            }
            loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
            XCTAssertEqual(order.current, (0..<100).map { "d\($0)" })
            loop.run(mode: custom, seconds: 0, returnAfterSourceHandled: false)
            XCTAssertEqual(order.current, (0..<100).map { "d\($0)" } + (0..<100).map { "c\($0)" })
        }
    }

    func test_each_closure_is_released_once_after_it_ran() {
        let released = Shared(0)
        let ran = Shared(0)
        onThread {
            let loop = RunLoop.current
            // A large burst (its cells are freed once it drained), a small
            // one (cells kept), then a large one again.
            var total = 0
            for burst in [5000, 3, 5000, 1] {
                for _ in 0..<burst {
                    let tracked = Tracked(released)
                    loop.perform {
                        _ = tracked; ran.withLock { $0 += 1 }
                    }
                }
                XCTAssertEqual(released.current, total)
                total += burst
                while ran.current < total { loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: false) }
                XCTAssertEqual(released.current, total)
            }
        }
        XCTAssertEqual(ran.current, 10004)
        XCTAssertEqual(released.current, 10004)
    }

    func test_blocks_still_queued_when_the_thread_exits_are_released_unrun() {
        let released = Shared(0)
        let ran = Shared(0)
        let loopOfThread = Shared<RunLoop?>(nil)
        onThread { loopOfThread.withLock { $0 = RunLoop.current } }
        // The thread has exited: blocks queued now are dropped at once.
        let loop = loopOfThread.current!
        for _ in 0..<100 {
            let tracked = Tracked(released)
            loop.perform {
                _ = tracked; ran.withLock { $0 += 1 }
            }
        }
        // Blocks queued on a thread that then exits without running them.
        onThread {
            let own = RunLoop.current
            for _ in 0..<1000 {
                let tracked = Tracked(released)
                own.perform {
                    _ = tracked; ran.withLock { $0 += 1 }
                }
            }
        }
        XCTAssertEqual(ran.current, 0)
        XCTAssertEqual(released.current, 1100)
    }

    func test_a_nested_run_inside_a_block_runs_later_blocks_and_reuses_cells() {
        onThread {
            let loop = RunLoop.current
            let order = Shared<[Int]>([])
            let inner = RunLoop.Mode("test.cells.nested")
            loop.perform {
                order.withLock { $0.append(0) }
                for i in 100..<110 { loop.perform(inModes: [inner]) { order.withLock { $0.append(i) } } }
                loop.run(mode: inner, seconds: 0, returnAfterSourceHandled: false)
                for i in 200..<210 { loop.perform(inModes: [inner]) { order.withLock { $0.append(i) } } }
                loop.run(mode: inner, seconds: 0, returnAfterSourceHandled: false)
            }
            loop.perform { order.withLock { $0.append(1) } }
            loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
            XCTAssertEqual(order.current, [0] + Array(100..<110) + Array(200..<210) + [1])
        }
    }

    func test_blocks_from_several_threads_all_run_in_each_threads_order() {
        let threads = 3
        let perThread = 20_000
        let seen = Shared<[[Int]]>(Array(repeating: [], count: threads))
        let ready = Shared<RunLoop?>(nil)
        let join = startThread {
            let loop = RunLoop.current
            ready.withLock { $0 = loop }
            while seen.current.reduce(0, { $0 + $1.count }) < threads * perThread {
                loop.run(mode: .default, seconds: 0.05, returnAfterSourceHandled: false)
            }
        }
        var loop: RunLoop?
        while loop == nil { loop = ready.current; usleep(1000) }
        let target = loop!
        let senders = (0..<threads).map { t in
            startThread {
                for i in 0..<perThread { target.perform { seen.withLock { $0[t].append(i) } } }
            }
        }
        senders.forEach { $0() }
        join()
        for t in 0..<threads { XCTAssertEqual(seen.current[t], Array(0..<perThread)) }
    }
}
