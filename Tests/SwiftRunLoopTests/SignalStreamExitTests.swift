// The signal number handed to a signal source's handler, and signals as an
// AsyncStream, each in a child process (Swift Testing exit tests): a signal
// nothing caught would end the child with its default action, and the exit
// status tells.
//
// The signals are sent to the process (kill(getpid())) and taken by a
// RunLoopThread made from a thread that unblocks every signal: Dispatch's
// worker threads, which run the test bodies, block most signals, and
// threads inherit their creator's mask. An alarm ends a child that would
// otherwise wait forever for a signal that never comes.

import Testing
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import SwiftRunLoop
import class SwiftRunLoop.RunLoop

@Suite struct SignalStreamExitTests {
    /// The throwing initialiser's handler hears which signal came: one
    /// handler shared by SIGUSR1 and SIGUSR2 sources tells them apart.
    @Test func signalSourceHandlerGetsTheSignalNumber() async {
        await #expect(processExitsWith: .success) {
            alarm(60)
            let worker = threadThatTakesSignals()
            let heard = Shared<[Int32]>([])
            let record: @Sendable (Int32, UInt32) -> Void = { signal, count in
                heard.withLock { $0 += Array(repeating: signal, count: Int(count)) }
            }
            guard let first = try? RunLoop.Source(signal: SIGUSR1, onSignal: record),
                let second = try? RunLoop.Source(signal: SIGUSR2, onSignal: record)
            else { _exit(3) }
            guard first.signalNumber == SIGUSR1, second.signalNumber == SIGUSR2 else { _exit(4) }
            worker.runLoop.add(first, forMode: .default)
            worker.runLoop.add(second, forMode: .default)
            kill(getpid(), SIGUSR2)
            waitUntil { heard.current.count == 1 }
            kill(getpid(), SIGUSR1)
            waitUntil { heard.current.count == 2 }
            _exit(heard.current == [SIGUSR2, SIGUSR1] ? 0 : 5)
        }
    }

    /// `signals(_:forMode:)`: each signal sent arrives as its number, in
    /// order, one at a time; sent before the iteration starts, it waits in
    /// the stream instead of ending the process.
    @Test func signalStreamYieldsEachSignalSent() async {
        await #expect(processExitsWith: .success) {
            alarm(60)
            let worker = threadThatTakesSignals()
            guard let stream = try? worker.runLoop.signals(SIGUSR1, SIGUSR2, SIGUSR1) else { _exit(3) }
            kill(getpid(), SIGUSR1)  // before anyone iterates
            var signals = stream.makeAsyncIterator()
            guard await signals.next() == SIGUSR1 else { _exit(4) }
            for expected in [SIGUSR2, SIGUSR1, SIGUSR2] {
                kill(getpid(), expected)
                guard await signals.next() == expected else { _exit(5) }
            }
            _exit(0)
        }
    }

    /// Ending the iteration frees the stream's sources: the handler the
    /// program had installed hears the signal again, and the stream's
    /// sources heard what came while they existed (the program's handler
    /// did not).
    @Test func endingTheStreamGivesTheSignalBackToTheProgram() async {
        await #expect(processExitsWith: .success) {
            alarm(60)
            signal(SIGUSR1, countProgramHandlerCall)
            let worker = threadThatTakesSignals()
            guard await firstSignalFromStream(on: worker.runLoop) == SIGUSR1 else { _exit(3) }
            guard programHandlerCalls.load(ordering: .relaxed) == 0 else { _exit(4) }
            let deadline = monotonicNow() + 30
            while programHandlerCalls.load(ordering: .relaxed) == 0 && monotonicNow() < deadline {
                kill(getpid(), SIGUSR1)
                usleep(1000)
            }
            _exit(programHandlerCalls.load(ordering: .relaxed) > 0 ? 0 : 5)
        }
    }

    /// A signal that cannot be caught: nothing is made, and the error says
    /// EINVAL.
    @Test func uncatchableSignalThrowsInvalidArgument() {
        let stream = #expect(throws: RunLoop.ResourceError.self) { try RunLoop.main.signals(SIGUSR1, SIGKILL) }
        #expect(stream?.code == EINVAL)
        let source = #expect(throws: RunLoop.ResourceError.self) {
            try RunLoop.Source(signal: SIGSTOP) { _, _ in }
        }
        #expect(source?.code == EINVAL)
        #expect(source?.description.contains("RunLoop.Source(signal: \(SIGSTOP))") == true)
        let outOfRange = #expect(throws: RunLoop.ResourceError.self) {
            try RunLoop.Source(signal: 1000) { _, _ in }
        }
        #expect(outOfRange?.code == EINVAL)
    }
}

/// Makes a SIGUSR1 stream on `loop`, waits for the SIGUSR1 it sends itself,
/// and lets the stream go (its sources are invalidated then).
private func firstSignalFromStream(on loop: RunLoop) async -> Int32? {
    guard let stream = try? loop.signals(SIGUSR1) else { return nil }
    kill(getpid(), SIGUSR1)
    for await signal in stream { return signal }
    return nil
}

private let programHandlerCalls = Atomic<Int>(0)

private let countProgramHandlerCall: @convention(c) (Int32) -> Void = { _ in
    programHandlerCalls.add(1, ordering: .relaxed)
}

/// A RunLoopThread that blocks no signal, so that signals sent to the
/// process can be handled there.
func threadThatTakesSignals() -> RunLoopThread {
    let made = Shared<RunLoopThread?>(nil)
    onThread {
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        made.withLock { $0 = RunLoopThread(name: "signal.taker") }
    }
    return made.current!
}

/// Polls `condition` (1 ms apart) for up to 30 seconds.
private func waitUntil(_ condition: () -> Bool) {
    let deadline = monotonicNow() + 30
    while !condition() && monotonicNow() < deadline { usleep(1000) }
}
