// Testing code that uses SwiftRunLoop with Swift Testing: its tests run on
// Swift concurrency's threads, which must not block running a loop, so the
// loop lives on a RunLoopThread and the tests await what it does.

import SwiftRunLoop
import Synchronization
import Testing

/// Code under test: an actor kept on a run-loop thread of its own.
actor Ticker: RunLoopActor {
    let runLoopExecutor = RunLoopThread(name: "ticker").executor
    private(set) var ticks = 0
    func tick() { ticks += 1 }
}

@Suite struct RunLoopThreadTests {
    @Test func timerOnALoopThreadFires() async {
        let thread = RunLoopThread(name: "test.timer")
        defer { thread.stop() }
        let timer = Timer(timeInterval: 0.01, repeats: false) { _ in }
        thread.runLoop.add(timer, forMode: .default)
        let fired = await timer.nextFire()
        #expect(fired != nil)
    }

    @Test func actorMethodsRunOnItsThread() async {
        let ticker = Ticker()
        await ticker.tick()
        let onItsLoop = ticker.runLoopExecutor.runLoop.perform(waitUntilDone: true) {
            ticker.assumeIsolated { $0.ticks }
        }
        #expect(onItsLoop == 1)
    }

    @Test func ticksArriveAsAStream() async {
        let thread = RunLoopThread(name: "test.ticks")
        defer { thread.stop() }
        let count = Atomic(0)
        for await _ in thread.runLoop.ticks(every: .milliseconds(5)).prefix(3) {
            count.add(1, ordering: .relaxed)
        }
        #expect(count.load(ordering: .relaxed) == 3)
    }
}
