// The modes each API uses when none is given, as the DocC article "Run-loop
// modes" tabulates them: each test queues work with an API's defaults on a
// loop whose common modes also hold a custom mode, then looks at where the
// work landed (which modes hold its timer, in which mode it runs).

import XCTest
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer
#if canImport(Glibc)
import Glibc
#endif

/// A mode of the common set that is not the default mode.
private let customCommon = RunLoop.Mode("test.defaults.common")

/// Whether `mode` of `loop` holds a timer (one polling pass: nothing here is due).
private func hasTimer(_ loop: RunLoop, _ mode: RunLoop.Mode) -> Bool {
    guard let date = loop.limitDate(forMode: mode) else { return false }
    return date != .distantFuture
}

/// Runs the calling thread's loop in `mode` until `done` holds (10 s at most).
private func runLoop(_ mode: RunLoop.Mode, until done: () -> Bool) {
    let limit = Date(timeIntervalSinceNow: 10)
    while !done() && Date() < limit {
        RunLoop.current.run(mode: mode, seconds: 0.01, returnAfterSourceHandled: false)
    }
}

private actor ModeProbe: RunLoopActor {
    let runLoopExecutor: RunLoopSerialExecutor
    init(_ executor: RunLoopSerialExecutor) { runLoopExecutor = executor }
    func mode() -> RunLoop.Mode? { RunLoop.current.currentMode }
}

final class ModeDefaultsTests: XCTestCase {
    /// Runs `body` on a thread of its own whose loop has `customCommon` in
    /// its common modes and a source there, so runs of either mode wait.
    private func onLoopThread(_ body: @escaping @Sendable (RunLoop) -> Void) {
        onThread {
            let loop = RunLoop.current
            loop.addCommonMode(customCommon)
            let keep = RunLoop.Source {}
            loop.add(keep, forMode: .common)
            body(loop)
            keep.invalidate()
        }
    }

    func test_run_until_runs_the_default_mode() {
        onLoopThread { loop in
            let seen = Shared<RunLoop.Mode?>(nil)
            let timer = Timer(timeInterval: 0.001, repeats: false) { _ in
                seen.withLock { $0 = RunLoop.current.currentMode }
            }
            loop.add(timer, forMode: .common)
            loop.run(until: Date(timeIntervalSinceNow: 0.05))
            XCTAssertEqual(seen.current, .default)
        }
    }

    func test_perform_queues_for_the_default_mode() {
        onLoopThread { loop in
            let ran = Shared(false)
            loop.perform { ran.withLock { $0 = true } }
            loop.run(mode: customCommon, seconds: 0, returnAfterSourceHandled: false)
            XCTAssertFalse(ran.current)
            loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: false)
            XCTAssertTrue(ran.current)
        }
    }

    func test_perform_wait_until_done_queues_for_the_common_modes() {
        onLoopThread { loop in
            let status = Shared<RunLoop.PerformStatus?>(nil)
            let value = Shared<RunLoop.Mode?>(nil)
            let join = startThread {
                let mode = loop.perform(waitUntilDone: true) { RunLoop.current.currentMode }
                value.withLock { $0 = mode }
                let done = loop.perform(waitUntilDone: true) {}
                status.withLock { $0 = done }
            }
            runLoop(customCommon) { status.current != nil }
            join()
            XCTAssertEqual(value.current, customCommon)
            XCTAssertEqual(status.current, .done)
        }
    }

    func test_delayed_perform_arms_a_timer_in_the_default_mode() {
        onLoopThread { loop in
            let request = loop.perform(after: 1000) {}
            XCTAssertTrue(hasTimer(loop, .default))
            XCTAssertFalse(hasTimer(loop, customCommon))
            request.cancel()
        }
    }

    func test_scheduled_timer_is_in_the_default_mode() {
        onLoopThread { loop in
            let timer = Timer.scheduledTimer(withTimeInterval: 1000, repeats: false) { _ in }
            XCTAssertTrue(loop.contains(timer, forMode: .default))
            XCTAssertFalse(loop.contains(timer, forMode: customCommon))
            XCTAssertFalse(loop.contains(timer, forMode: .common))
            timer.invalidate()
        }
    }

    func test_ticks_and_sleep_use_the_common_modes() {
        onLoopThread { loop in
            let stream = loop.ticks(every: 1000)
            XCTAssertTrue(hasTimer(loop, customCommon))
            withExtendedLifetime(stream) {}
        }
        onLoopThread { loop in
            let sleeper = Task { await loop.sleep(for: .seconds(1000)) }
            runLoop(customCommon) { hasTimer(loop, customCommon) }
            XCTAssertTrue(hasTimer(loop, customCommon))
            sleeper.cancel()
        }
    }

    func test_executor_and_its_actor_use_the_common_modes() {
        onLoopThread { loop in
            let executor = RunLoopSerialExecutor(runLoop: loop)
            XCTAssertEqual(executor.modes, [.common])
            let probe = ModeProbe(executor)
            let seen = Shared<[RunLoop.Mode?]>([])
            Task {
                let mode = await probe.mode()
                seen.withLock { $0.append(mode) }
            }
            runLoop(customCommon) { !seen.current.isEmpty }
            XCTAssertEqual(seen.current, [customCommon])
        }
    }

    func test_run_loop_thread_runs_the_default_mode_and_queues_jobs_for_the_common_modes() {
        let thread = RunLoopThread(name: "test.defaults.thread")
        defer { thread.stop() }
        XCTAssertEqual(thread.runLoop.perform(waitUntilDone: true) { RunLoop.current.currentMode }, .default)
        XCTAssertEqual(thread.executor.modes, [.common])
    }

    func test_idle_queue_runs_in_the_default_mode() {
        onLoopThread { loop in
            let queue = RunLoop.IdleQueue(runLoop: loop)
            let ran = Shared(false)
            _ = queue.submit { ran.withLock { $0 = true } }
            loop.run(mode: customCommon, seconds: 0.02, returnAfterSourceHandled: false)
            XCTAssertFalse(ran.current)
            runLoop(.default) { ran.current }
            XCTAssertTrue(ran.current)
            queue.invalidate()
        }
    }
}
