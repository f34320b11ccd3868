// Failures from the environment are thrown as RunLoop.ResourceError by the
// throwing initialisers of descriptors, message ports, signal sources and
// threads, with the POSIX code when the layer below leaves it known. Running
// out of descriptors is arranged in a child process (Swift Testing exit
// tests): a low descriptor limit, every number below it taken.

import Testing
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import SwiftRunLoop
import class SwiftRunLoop.RunLoop

@Suite struct ResourceErrorTests {
    /// Numbers that cannot be open descriptors (tests running in parallel
    /// may reuse any number a test closes).
    @Test func descriptorThatIsNotOpenThrowsBadDescriptor() {
        for closed in [Int32.max, -1] {
            let error = #expect(throws: RunLoop.ResourceError.self) {
                try RunLoop.FileDescriptor(watching: closed) { _, _ in }
            }
            #expect(error?.code == EBADF)
        }
    }

    @Test func watchedDescriptorWorksAsTheFailableOne() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let ready = Shared(false)
        let thread = try RunLoopThread(named: "fd.watcher")
        let watched = try RunLoop.FileDescriptor(watching: ends[0], closeOnInvalidate: true) { _, types in
            if types.contains(.read) { ready.withLock { $0 = true } }
        }
        #expect(watched.fileDescriptor == ends[0])
        thread.runLoop.add(watched, forMode: .default)
        watched.enableCallBacks(.read)
        var byte: UInt8 = 1
        #expect(write(ends[1], &byte, 1) == 1)
        let deadline = monotonicNow() + 30
        while !ready.current && monotonicNow() < deadline { usleep(1000) }
        #expect(ready.current)
        watched.invalidate()
        close(ends[1])
        thread.stop()
    }

    @Test func negativeQueueLimitThrowsInvalidArgument() throws {
        let error = #expect(throws: RunLoop.ResourceError.self) { try MessagePort(queueLimit: -1) { _ in } }
        #expect(error?.code == EINVAL)
        let port = try MessagePort(queueLimit: 0) { _ in }
        #expect(port.capacity == 1024)
        port.invalidate()
    }

    @Test func namedThreadStartsItsLoop() throws {
        let thread = try RunLoopThread(named: "named.thread")
        #expect(thread.name == "named.thread")
        let ran = Shared(false)
        thread.runLoop.perform { ran.withLock { $0 = true } }
        thread.runLoop.wakeUp()
        let deadline = monotonicNow() + 30
        while !ran.current && monotonicNow() < deadline { usleep(1000) }
        #expect(ran.current)
        thread.stop()
        #expect(thread.hasExited)
    }

    @Test func errorDescriptionNamesTheOperationAndTheReason() {
        let known = RunLoop.ResourceError(operation: "MessagePort(queueLimit: 8)", code: EMFILE)
        #expect(known.description.contains("MessagePort(queueLimit: 8)"))
        #expect(known.description.contains(String(cString: strerror(EMFILE))))
        let unknown = RunLoop.ResourceError(operation: "RunLoopThread(named: \"w\")", code: nil)
        #expect(unknown.description.contains("unavailable"))
    }

    /// With no descriptor left, a port and a signal source (each needs new
    /// descriptors) throw EMFILE, a signal stream throws and leaves the
    /// signal's default action in place, and a thread (whose loop needs
    /// descriptors) throws. (The descriptors are given back at once, before
    /// the Dispatch threads of the child need one.)
    @Test func outOfDescriptorsIsThrownWithItsCode() async {
        await #expect(processExitsWith: .success) {
            alarm(60)
            let worker = RunLoopThread(name: "has.fds")
            let failures = Shared<[Int]>([])
            onThread {
                func code(_ make: () throws -> Void) -> Int32?? {
                    do { try make() } catch { return .some((error as? RunLoop.ResourceError)?.code ?? -1) }
                    return .none
                }
                let giveBack = takeEveryDescriptor()
                var failed: [Int] = []
                if code({ _ = try MessagePort(queueLimit: 8) { _ in } }) != .some(EMFILE) { failed.append(1) }
                if code({ _ = try RunLoop.Source(signal: SIGUSR1) { _, _ in } }) != .some(EMFILE) { failed.append(2) }
                if code({ _ = try worker.runLoop.signals(SIGUSR1) }) != .some(EMFILE) { failed.append(3) }
                if code({ _ = try RunLoopThread(named: "no.fds") }) == .none { failed.append(4) }
                giveBack()
                failures.withLock { $0 = failed }
            }
            var action = sigaction()
            sigaction(SIGUSR1, nil, &action)
            let defaultAction = unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self) == 0
            worker.stop()
            _exit(failures.current.isEmpty && defaultAction ? 0 : Int32(10 + (failures.current.first ?? 9)))
        }
    }

    /// The initialiser kept for existing code stops the process, naming the
    /// thread, when the thread cannot be made.
    @Test func unnamedThreadInitStopsTheProcessWhenOutOfDescriptors() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            onThread {
                _ = takeEveryDescriptor()
                _ = RunLoopThread(name: "doomed.thread")
            }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("doomed.thread"))
    }
}

/// Lowers the descriptor limit to 256 and takes every free number below it,
/// so the next descriptor anybody makes fails with EMFILE (descriptors
/// already open above the limit stay usable). Returns what undoes it.
private func takeEveryDescriptor() -> () -> Void {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    let before = limit
    limit.rlim_cur = 256
    guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { _exit(90) }
    var taken: [Int32] = []
    taken.reserveCapacity(256)
    while true {
        let fd = dup(STDERR_FILENO)
        if fd < 0 { break }
        taken.append(fd)
    }
    guard errno == EMFILE else { _exit(91) }
    return {
        for fd in taken { close(fd) }
        var restored = before
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &restored)
    }
}
