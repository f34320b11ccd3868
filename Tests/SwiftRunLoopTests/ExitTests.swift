// Defined failures, checked in a child process (Swift Testing exit tests): an
// actor whose run-loop thread has stopped fails loudly and names the thread,
// and running the main loop from another thread says why it did nothing.

import Testing
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import SwiftRunLoop
import class SwiftRunLoop.RunLoop

@Suite struct ExitTests {
    @Test func actorOnAStoppedRunLoopThreadFailsNamingTheThread() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = RunLoopThread(name: "stopped.thread")
            let counter = PinnedCounter(executor: thread.executor)
            await counter.bump()  // runs
            thread.stop()
            await counter.bump()  // cannot run: a precondition failure, not a hang
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("RunLoopThread \"stopped.thread\""))
        #expect(stderr.contains("has stopped"))
    }

    @Test func jobQueuedOnALoopWhoseThreadExitsFails() async throws {
        await #expect(processExitsWith: .failure) {
            let gate = Semaphore()
            let loopBox = Shared<RunLoop?>(nil)
            let join = startThread {
                loopBox.withLock { $0 = RunLoop.current }  // never runs its loop
                gate.wait()
            }
            while loopBox.current == nil { usleep(1000) }
            let executor = RunLoopSerialExecutor(runLoop: loopBox.current!)
            let task = Task(executorPreference: executor) { 42 }  // queued, never run
            gate.signal()
            join()  // the loop is torn down: the queued job is dropped
            _ = await task.value
        }
    }

    @Test func mainLoopRunFromAnotherThreadSaysWhy() async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            onThread {
                let ran = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01))
                precondition(!ran)
                RunLoop.main.run(until: Date(timeIntervalSinceNow: 0.01))  // reported once only
            }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("RunLoop.main was run from a thread that is not the main thread"))
        #expect(stderr.contains("RunLoop.runMain"))
        #expect(stderr.components(separatedBy: "SwiftRunLoop:").count == 2)
    }
}

@Suite struct RunMainExitTests {
    @Test func runMainOffTheMainThreadFailsWithAReason() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            onThread { _ = try? RunLoop.runMain { 1 } }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("RunLoop.runMain must be called on the process's main thread"))
    }
}
