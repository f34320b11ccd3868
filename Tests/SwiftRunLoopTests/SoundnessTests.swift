// Swift 6 soundness and lifetimes: Sendable timers (in a Set, with userInfo),
// run-loop threads that never leak their OS thread, actors whose thread has
// stopped (a defined failure, never a silent hang), the async entry point on
// the main run loop, and the diagnostic for the main loop run off its thread.
//
// The compile-time half (racy closures rejected, correct ones accepted) is
// Tests/compile-checks, run by `make test-swift-compile`.

import XCTest
import Dispatch
import Synchronization
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer
#if canImport(Glibc)
import Glibc
#endif

final class SendableTimerTests: XCTestCase {
    func test_timer_is_invalidated_and_redated_from_another_thread() {
        let thread = RunLoopThread(name: "test.sendtimer")
        defer { thread.stop() }
        let fired = Atomic<Int>(0)
        let timer = Timer(timeInterval: 100, repeats: true) { _ in fired.add(1, ordering: .relaxed) }
        thread.runLoop.add(timer, forMode: .default)
        // The timer itself crosses to other threads (it is Sendable).
        onThread {
            timer.tolerance = 0.5
            timer.fireDate = Date(timeIntervalSinceNow: 0.01)
        }
        while fired.load(ordering: .relaxed) == 0 { usleep(1000) }
        onThread { timer.invalidate() }
        XCTAssertFalse(timer.isValid)
        XCTAssertEqual(timer.tolerance, 0.5)
    }

    func test_timers_are_hashable_by_identity() {
        let first = Timer(timeInterval: 1, repeats: false) { _ in }
        let second = Timer(timeInterval: 1, repeats: false) { _ in }
        var set: Set<Timer> = [first, second, first]
        XCTAssertEqual(set.count, 2)
        XCTAssertTrue(set.contains(first))
        XCTAssertNotEqual(first, second)
        set.remove(first)
        XCTAssertEqual(set, [second])
    }

    func test_the_wrapper_in_the_block_equals_the_timer_in_a_set() {
        onThread {
            let seen = Shared<Set<Timer>>([])
            // No Swift reference kept: the block gets a fresh wrapper, equal
            // to (and hashing as) the same C timer.
            var kept: Set<Timer> = []
            do {
                let timer = Timer.scheduledTimer(withTimeInterval: 0.01, repeats: false) { timer in
                    seen.withLock { _ = $0.insert(timer) }
                }
                kept.insert(timer)
            }
            RunLoop.current.run(until: Date(timeIntervalSinceNow: 5))
            XCTAssertEqual(seen.current, kept)
        }
    }

    func test_user_info_is_kept_for_the_timer_life() {
        let timer = Timer(timeInterval: 1, repeats: true, userInfo: ["id": 7]) { _ in }
        XCTAssertEqual(timer.userInfo as? [String: Int], ["id": 7])
        timer.invalidate()
        XCTAssertEqual(timer.userInfo as? [String: Int], ["id": 7])
        XCTAssertNil(Timer(timeInterval: 1, repeats: false) { _ in }.userInfo)
        onThread {
            let got = Shared<String?>(nil)
            Timer.scheduledTimer(withTimeInterval: 0.01, repeats: false, userInfo: "hello") { timer in
                got.withLock { $0 = timer.userInfo as? String }
            }
            RunLoop.current.run(until: Date(timeIntervalSinceNow: 5))
            XCTAssertEqual(got.current, "hello")
        }
    }
}

/// The threads of this process whose name is `name` (from /proc/self/task).
private func threadCount(named name: String) -> Int {
    guard let dir = opendir("/proc/self/task") else { return -1 }
    defer { closedir(dir) }
    var count = 0
    while let entry = readdir(dir) {
        let tid = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard tid.first?.isNumber == true, let file = fopen("/proc/self/task/\(tid)/comm", "r") else { continue }
        var buffer = [CChar](repeating: 0, count: 64)
        if fgets(&buffer, 64, file) != nil,
            String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                .trimmingSuffix("\n") == name
        {
            count += 1
        }
        fclose(file)
    }
    return count
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}

final class RunLoopThreadLifetimeTests: XCTestCase {
    func test_dropping_a_started_thread_without_stop_joins_it() {
        let name = "test.dropped"
        XCTAssertEqual(threadCount(named: name), 0)
        do {
            let threads = (0..<8).map { _ in RunLoopThread(name: name) }
            XCTAssertEqual(threadCount(named: name), 8)
            for thread in threads { XCTAssertFalse(thread.hasExited) }
        }
        // The last references went: every OS thread was stopped and joined.
        XCTAssertEqual(threadCount(named: name), 0)
    }

    func test_dropping_the_last_reference_on_the_thread_itself_does_not_leak() {
        let name = "test.selfdrop"
        let holder = Shared<RunLoopThread?>(RunLoopThread(name: name))
        let loop = holder.current!.runLoop
        let dropped = Semaphore()
        loop.perform {
            holder.withLock { $0 = nil }  // the last reference, on the thread itself
            dropped.signal()
        }
        dropped.wait()
        // The thread detached itself and exits after that callout.
        var waited = 0
        while threadCount(named: name) != 0 && waited < 10_000 { usleep(1000); waited += 1 }
        XCTAssertEqual(threadCount(named: name), 0)
    }

    func test_executor_keeps_its_thread_alive() async {
        // Only the actor keeps the thread (through its executor).
        let counter = PinnedCounter(executor: RunLoopThread(name: "test.keptalive").executor)
        for _ in 0..<3 { await counter.bump() }
        let (count, onLoop) = await counter.increment()
        XCTAssertEqual(count, 4)
        XCTAssertTrue(onLoop)
    }

    func test_stop_returns_after_the_thread_exited() {
        let thread = RunLoopThread(name: "test.stopjoin")
        thread.stop()
        XCTAssertTrue(thread.hasExited)
        // pthread_join returns when the thread has exited; the kernel may drop
        // its /proc entry a moment later, so that is waited for (bounded).
        var waited = 0
        while threadCount(named: "test.stopjoin") != 0 && waited < 10_000 {
            usleep(1000)
            waited += 1
        }
        XCTAssertEqual(threadCount(named: "test.stopjoin"), 0)
        thread.stop()  // idempotent
    }
}

@_silgen_name("gettid") private func currentThreadID() -> Int32

final class AsyncMainTests: XCTestCase {
    /// XCTest calls synchronous tests on the process's main thread.
    private func requireMainThread() throws {
        guard currentThreadID() == getpid() else { throw XCTSkip("not on the process main thread") }
    }

    func test_run_main_runs_main_actor_work_on_the_main_loop() throws {
        try requireMainThread()
        let value = try RunLoop.runMain { () async throws -> [Bool] in
            var onMain = [RunLoop.main.isCurrent]
            try await Task.sleep(for: .milliseconds(5))
            onMain.append(RunLoop.main.isCurrent)
            // A timer of the main loop fires meanwhile.
            await withCheckedContinuation { continuation in
                Timer.scheduledTimer(withTimeInterval: 0.01, repeats: false) { _ in continuation.resume() }
            }
            onMain.append(RunLoop.main.isCurrent)
            await Task.detached {}.value
            onMain.append(currentThreadID() == getpid())
            return onMain
        }
        XCTAssertEqual(value, [true, true, true, true])
    }

    func test_run_main_rethrows() throws {
        try requireMainThread()
        struct Failure: Error {}
        XCTAssertThrowsError(
            try RunLoop.runMain { () async throws -> Int in
                try await Task.sleep(for: .milliseconds(1))
                throw Failure()
            }
        ) { XCTAssertTrue($0 is Failure) }
    }

    @MainActor
    func test_run_loop_main_entry_point() throws {
        try requireMainThread()
        try EntryPoint.main()
        XCTAssertEqual(EntryPoint.threads, [true, true])
    }
}

/// A `@main`-style type (without `@main`, so the tests can call it).
private struct EntryPoint: RunLoopMain {
    static var threads: [Bool] = []

    static func run() async throws {
        threads.append(RunLoop.main.isCurrent)
        try await Task.sleep(for: .milliseconds(5))
        threads.append(RunLoop.main.isCurrent)
    }
}

final class OneVerbTests: XCTestCase {
    func test_descriptors_and_ports_are_added_like_timers_and_sources() {
        onThread {
            let loop = RunLoop.current
            var fds: [Int32] = [0, 0]
            XCTAssertEqual(pipe(&fds), 0)
            let reads = Shared(0)
            guard
                let fd = RunLoop.FileDescriptor(
                    fileDescriptor: fds[0], closeOnInvalidate: true,
                    handler: { _, _ in
                        reads.withLock { $0 += 1 }
                    })
            else { return XCTFail("no descriptor") }
            guard let port = MessagePort(handler: { _ in }) else { return XCTFail("no port") }
            let mode = RunLoop.Mode("test.oneverb")
            loop.add(fd, forMode: mode)
            loop.add(port, forMode: mode)
            XCTAssertTrue(loop.contains(fd, forMode: mode))
            XCTAssertTrue(loop.contains(port, forMode: mode))
            XCTAssertFalse(loop.contains(fd, forMode: .default))
            fd.enableCallBacks(.read)
            XCTAssertEqual(write(fds[1], "x", 1), 1)
            XCTAssertEqual(loop.run(mode: mode, seconds: 5, returnAfterSourceHandled: true), .handledSource)
            XCTAssertEqual(reads.current, 1)
            loop.remove(fd, forMode: mode)
            loop.remove(port, forMode: mode)
            XCTAssertFalse(loop.contains(fd, forMode: mode))
            XCTAssertFalse(loop.contains(port, forMode: mode))
            // Foundation's verb for ports still works, and is the same thing.
            port.schedule(in: loop, forMode: mode)
            XCTAssertTrue(loop.contains(port, forMode: mode))
            fd.invalidate()
            port.invalidate()
            close(fds[1])
        }
    }
}

final class SendableStressTests: XCTestCase {
    /// The correct form of the racy counter (a Mutex instead of a captured
    /// var): every block queued from two threads is counted, nothing lost.
    func test_blocks_from_two_threads_count_exactly_with_a_mutex() {
        let thread = RunLoopThread(name: "test.stress")
        defer { thread.stop() }
        let count = Mutex(0)
        let perSender = 20_000
        let senders = (0..<2).map { _ in
            startThread {
                for _ in 0..<perSender { thread.runLoop.perform { count.withLock { $0 += 1 } } }
            }
        }
        senders.forEach { $0() }
        XCTAssertEqual(thread.runLoop.perform(waitUntilDone: true) {}, .done)  // after every queued block
        XCTAssertEqual(count.withLock { $0 }, 2 * perSender)
    }
}

final class WaitUntilExitedTests: XCTestCase {
    func test_wait_until_exited_waits_for_another_threads_stop() {
        let thread = RunLoopThread(name: "test.waitexit")
        let status = Shared<RunLoop.PerformStatus?>(nil)
        let stopper = startThread {
            usleep(20_000)
            // Still running while the main thread waits: the wait did not stop it.
            status.withLock { $0 = thread.runLoop.perform(waitUntilDone: true) {} }
            thread.stop()
        }
        thread.waitUntilExited()  // returns after the other thread's stop
        XCTAssertTrue(thread.hasExited)
        stopper()
        XCTAssertEqual(status.current, .done)
    }
}

final class SendableItemsTests: XCTestCase {
    /// Sources and observers are Sendable: another thread signals and
    /// invalidates them directly (no signaller needed).
    func test_sources_and_observers_cross_threads() {
        let thread = RunLoopThread(name: "test.senditems")
        defer { thread.stop() }
        let performed = Atomic<Int>(0)
        let source = RunLoop.Source { performed.add(1, ordering: .relaxed) }
        let observer = RunLoop.Observer(activities: .beforeWaiting) { _ in }
        thread.runLoop.add(source, forMode: .default)
        thread.runLoop.add(observer, forMode: .default)
        onThread {
            source.signal()
            thread.runLoop.wakeUp()
        }
        while performed.load(ordering: .relaxed) == 0 { usleep(1000) }
        onThread {
            source.invalidate()
            observer.invalidate()
        }
        XCTAssertFalse(source.isValid)
        XCTAssertFalse(observer.isValid)
        XCTAssertFalse(thread.runLoop.contains(source, forMode: .default))
    }
}
