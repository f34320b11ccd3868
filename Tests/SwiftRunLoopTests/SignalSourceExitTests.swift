// Signal sources with other threads around, each in a child process (Swift
// Testing exit tests): a signal a source missed would run its default action
// and end the process, so the child's exit status tells.
//
// The threads are made before the sources and do not block the signals, as
// in a program whose main thread starts them: Dispatch's worker threads (on
// which the test bodies run) block most signals, and threads inherit their
// creator's mask, so everything here starts from a thread that first
// unblocks them all.

import Testing
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import SwiftRunLoop
import class SwiftRunLoop.RunLoop

@Suite struct SignalSourceExitTests {
    /// A RunLoopThread and a plain thread first; then the sources. SIGINT
    /// sent to the process (kill), then SIGTERM to the loop's thread (raise):
    /// the process exits 0 from the SIGTERM handler, after exactly one SIGINT
    /// was reported.
    @Test func sigintAndSigtermReachSourcesMadeAfterOtherThreads() async {
        await #expect(processExitsWith: .success) {
            onThreadWithSignalsUnblocked {
                let bystanders = Bystanders()
                let loop = RunLoop.current
                let interrupts = Shared<UInt32>(0)
                guard
                    let interrupt = try? RunLoop.Source(
                        signal: SIGINT, onSignal: { _, count in interrupts.withLock { $0 += count } }),
                    let terminate = try? RunLoop.Source(
                        signal: SIGTERM,
                        onSignal: { _, _ in
                            bystanders.stop()
                            _exit(interrupts.current == 1 ? 0 : 3)
                        })
                else { _exit(4) }
                loop.add(interrupt, forMode: .default)
                loop.add(terminate, forMode: .default)
                kill(getpid(), SIGINT)
                let deadline = monotonicNow() + 10
                while interrupts.current < 1 && monotonicNow() < deadline {
                    _ = loop.run(mode: .default, seconds: 0.5, returnAfterSourceHandled: true)
                }
                raise(SIGTERM)
                _ = loop.run(mode: .default, seconds: 10, returnAfterSourceHandled: true)
            }
            _exit(5)
        }
    }

    /// SIGUSR1 sent from another thread, each once every source heard the
    /// previous one (so the kernel never merges two): a source on a
    /// RunLoopThread and two on another thread's loop count every one.
    @Test func everySourceInEveryLoopCountsEachSignal() async {
        await #expect(processExitsWith: .success) {
            onThreadWithSignalsUnblocked {
                let bystanders = Bystanders()
                let sent = 300
                let counts = Shared<[Int]>([0, 0, 0])
                let worker = RunLoopThread(name: "signal.counter")
                let onWorker = sigusr1Source(countingInto: counts, slot: 0)
                worker.runLoop.add(onWorker, forMode: .default)
                let looping = Shared(true)
                let ready = Shared(false)
                let joinLoop = startThread {
                    let loop = RunLoop.current
                    let first = sigusr1Source(countingInto: counts, slot: 1)
                    let second = sigusr1Source(countingInto: counts, slot: 2)
                    loop.add(first, forMode: .default)
                    loop.add(second, forMode: .default)
                    ready.withLock { $0 = true }
                    while looping.current {
                        _ = loop.run(mode: .default, seconds: 0.05, returnAfterSourceHandled: false)
                    }
                    first.invalidate()
                    second.invalidate()
                }
                while !ready.current { usleep(1000) }
                let joinSender = startThread {
                    for i in 1...sent {
                        kill(getpid(), SIGUSR1)
                        let deadline = monotonicNow() + 10
                        while counts.current.min()! < i && monotonicNow() < deadline { usleep(50) }
                    }
                }
                joinSender()
                usleep(50_000)  // nothing more may come
                looping.withLock { $0 = false }
                joinLoop()
                worker.stop()
                onWorker.invalidate()
                bystanders.stop()
                _exit(counts.current == [sent, sent, sent] ? 0 : 6)
            }
        }
    }
}

/// Runs `body` on a new thread that unblocks every signal first, so the
/// threads it starts do not block any either; waits for it.
private func onThreadWithSignalsUnblocked(_ body: @escaping @Sendable () -> Void) {
    onThread {
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        body()
    }
}

/// A SIGUSR1 source that adds what it hears to `counts[slot]`.
private func sigusr1Source(countingInto counts: Shared<[Int]>, slot: Int) -> RunLoop.Source {
    guard
        let source = try? RunLoop.Source(signal: SIGUSR1, onSignal: { _, n in counts.withLock { $0[slot] += Int(n) } })
    else { _exit(3) }
    return source
}

/// Threads that exist before any signal source and do not block signals (when
/// made from a thread that does not): a RunLoopThread and a plain thread.
private final class Bystanders: @unchecked Sendable {  // join is called once, by stop()
    private let thread = RunLoopThread(name: "bystander")
    private let quit = Shared(false)
    private let join: () -> Void

    init() {
        let quit = self.quit
        let started = Shared(false)
        join = startThread {
            started.withLock { $0 = true }
            while !quit.current { usleep(1000) }
        }
        while !started.current { usleep(1000) }
    }

    func stop() {
        quit.withLock { $0 = true }
        join()
        thread.stop()
    }
}
