// The Linux extras: file descriptors, UNIX signals, message ports.

import XCTest
import FoundationEssentials
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer
#if canImport(Glibc)
import Glibc
#endif

final class LinuxExtrasTests: XCTestCase {
    func test_file_descriptor_reports_readability_once_per_enable() {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        onThread {
            let loop = RunLoop.current
            let received = Shared<[UInt8]>([])
            let types = Shared<[RunLoop.FileDescriptor.CallBackTypes]>([])
            guard
                let fd = RunLoop.FileDescriptor(
                    fileDescriptor: readEnd, closeOnInvalidate: true,
                    handler: { fd, t in
                        types.withLock { $0.append(t) }
                        var byte: UInt8 = 0
                        if read(fd.fileDescriptor, &byte, 1) == 1 { received.withLock { $0.append(byte) } }
                        fd.enableCallBacks(.read)
                    })
            else { return XCTFail("RunLoop.FileDescriptor(fileDescriptor:) failed") }
            XCTAssertEqual(fd.fileDescriptor, readEnd)
            loop.add(fd, forMode: .default)
            fd.enableCallBacks(.read)
            // Nothing to read: the run times out.
            XCTAssertEqual(loop.run(mode: .default, seconds: 0.05, returnAfterSourceHandled: true), .timedOut)
            let join = startThread {
                var b: UInt8 = 7
                _ = write(writeEnd, &b, 1)
            }
            XCTAssertEqual(loop.run(mode: .default, seconds: 10, returnAfterSourceHandled: true), .handledSource)
            join()
            var b: UInt8 = 8
            _ = write(writeEnd, &b, 1)
            XCTAssertEqual(loop.run(mode: .default, seconds: 10, returnAfterSourceHandled: true), .handledSource)
            XCTAssertEqual(received.current, [7, 8])
            XCTAssertEqual(types.current, [.read, .read])
            fd.invalidate()
            XCTAssertFalse(fd.isValid)
            XCTAssertEqual(loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: true), .finished)
        }
        XCTAssertEqual(fcntl(readEnd, F_GETFD), -1)  // closed on invalidate
        close(writeEnd)
    }

    func test_file_descriptor_handler_released_after_invalidate() {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        weak var weakCanary: Canary?
        do {
            let canary = Canary()
            weakCanary = canary
            let fd = RunLoop.FileDescriptor(fileDescriptor: fds[0]) { _, _ in _ = canary }
            XCTAssertNotNil(fd)
            fd?.invalidate()
        }
        XCTAssertNil(weakCanary)
        XCTAssertNil(RunLoop.FileDescriptor(fileDescriptor: -1) { _, _ in })
        close(fds[0])
        close(fds[1])
    }

    func test_file_descriptor_handler_gets_its_wrapper_and_a_remade_one_once_dropped() {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        onThread {
            let loop = RunLoop.current
            let seen = Shared<[ObjectIdentifier]>([])
            let descriptors = Shared<[Int32]>([])
            let latest = Shared<RunLoop.FileDescriptor?>(nil)
            weak var dropped: RunLoop.FileDescriptor?
            var b: UInt8 = 1
            do {
                guard
                    let fd = RunLoop.FileDescriptor(
                        fileDescriptor: readEnd, closeOnInvalidate: true,
                        handler: { fd, _ in
                            seen.withLock { $0.append(ObjectIdentifier(fd)) }
                            latest.withLock { $0 = fd }
                            descriptors.withLock { $0.append(fd.fileDescriptor) }
                            var byte: UInt8 = 0
                            _ = read(fd.fileDescriptor, &byte, 1)
                            fd.enableCallBacks(.read)
                        })
                else { return XCTFail("RunLoop.FileDescriptor(fileDescriptor:) failed") }
                dropped = fd
                loop.add(fd, forMode: .default)
                fd.enableCallBacks(.read)
                for _ in 0..<3 {
                    _ = write(writeEnd, &b, 1)
                    XCTAssertEqual(
                        loop.run(mode: .default, seconds: 10, returnAfterSourceHandled: true), .handledSource)
                }
                let id = ObjectIdentifier(fd)
                XCTAssertEqual(seen.current, [id, id, id])
            }
            // The loop keeps the descriptor scheduled; every wrapper is gone.
            latest.withLock { $0 = nil }
            XCTAssertNil(dropped)
            for _ in 0..<2 {
                _ = write(writeEnd, &b, 1)
                XCTAssertEqual(loop.run(mode: .default, seconds: 10, returnAfterSourceHandled: true), .handledSource)
            }
            XCTAssertEqual(descriptors.current, [readEnd, readEnd, readEnd, readEnd, readEnd])
            let remade = seen.current.suffix(2)
            XCTAssertEqual(Set(remade).count, 1, "one wrapper made again, then kept")
            latest.current?.invalidate()
            XCTAssertEqual(loop.run(mode: .default, seconds: 0, returnAfterSourceHandled: true), .finished)
        }
        XCTAssertEqual(fcntl(readEnd, F_GETFD), -1)  // closed on invalidate
        close(writeEnd)
    }

    func test_file_descriptor_handler_runs_before_stream_listeners_on_each_fire() async {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        let thread = RunLoopThread(name: "test.fdorder")
        let order = Shared<[String]>([])
        guard
            let fd = RunLoop.FileDescriptor(
                fileDescriptor: readEnd, closeOnInvalidate: true,
                handler: { fd, _ in
                    order.withLock { $0.append("handler") }
                    var b: UInt8 = 0
                    _ = read(fd.fileDescriptor, &b, 1)
                })
        else { return XCTFail("RunLoop.FileDescriptor(fileDescriptor:) failed") }
        fd.schedule(in: thread.runLoop, forMode: .default)
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
        var fires = 0
        for await _ in fd.readiness(.read) {
            order.withLock { $0.append("stream") }
            fires += 1
            if fires == 2 { break }
            _ = write(writeEnd, &byte, 1)
        }
        fd.invalidate()
        thread.stop()
        XCTAssertEqual(Array(order.current.prefix(4)), ["handler", "stream", "handler", "stream"])
        close(writeEnd)
    }

    func test_file_descriptor_readiness_stream() async {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        let thread = RunLoopThread(name: "test.fdstream")
        guard let fd = RunLoop.FileDescriptor(fileDescriptor: readEnd, closeOnInvalidate: true, handler: { _, _ in })
        else { return XCTFail("RunLoop.FileDescriptor(fileDescriptor:) failed") }
        fd.schedule(in: thread.runLoop, forMode: .default)
        var got: [UInt8] = []
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
        for await types in fd.readiness(.read) {
            XCTAssertEqual(types, .read)
            var b: UInt8 = 0
            if read(readEnd, &b, 1) == 1 { got.append(b) }
            if got.count == 3 { break }
            byte += 1
            _ = write(writeEnd, &byte, 1)
        }
        XCTAssertEqual(got, [1, 2, 3])
        fd.invalidate()
        close(writeEnd)
        thread.stop()
    }

    func test_signal_source_reports_a_thread_directed_signal() {
        onThread {
            let loop = RunLoop.current
            let counts = Shared<[UInt32]>([])
            guard
                let source = RunLoop.Source(signal: SIGUSR2, handler: { count in counts.withLock { $0.append(count) } })
            else { return XCTFail("RunLoop.Source(signal:) failed") }
            XCTAssertEqual(source.signalNumber, SIGUSR2)
            loop.add(source, forMode: .default)
            var unblocked = sigset_t()
            sigemptyset(&unblocked)
            sigaddset(&unblocked, SIGUSR2)
            pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)  // as a Dispatch thread's child, it might block it
            pthread_kill(pthread_self(), SIGUSR2)  // the library's handler runs here, the source reports it
            XCTAssertEqual(loop.run(mode: .default, seconds: 10, returnAfterSourceHandled: true), .handledSource)
            XCTAssertEqual(counts.current.count, 1)
            XCTAssertGreaterThanOrEqual(counts.current.first ?? 0, 1)
            source.invalidate()
        }
        XCTAssertNil(RunLoop.Source(signal: SIGKILL) { _ in })
    }

    func test_message_port_delivers_in_order_from_other_threads() {
        onThread {
            let loop = RunLoop.current
            let messages = Shared<[MessagePort.Message]>([])
            guard let port = MessagePort(handler: { message in messages.withLock { $0.append(message) } })
            else { return XCTFail("MessagePort() failed") }
            port.schedule(in: loop, forMode: .default)
            let sender = port.sender
            let join = startThread {
                for i in 0..<100 {
                    do { try sender.send(id: Int32(i), data: Data([UInt8(i)])) } catch { XCTFail("send: \(error)") }
                }
            }
            let deadline = monotonicNow() + 20
            while messages.current.count < 100 && monotonicNow() < deadline {
                loop.run(mode: .default, before: Date(timeIntervalSinceNow: 1))
            }
            join()
            XCTAssertEqual(messages.current.map(\.id), Array(0..<100))
            XCTAssertEqual(messages.current.last?.data, Data([99]))
            port.invalidate()
            XCTAssertFalse(port.isValid)
            XCTAssertEqual(sendResult(port, id: 1), .invalidated)
        }
    }

    func test_message_port_full_queue_rejects() {
        guard let port = MessagePort(capacity: 2, handler: { _ in }) else { return XCTFail("MessagePort() failed") }
        XCTAssertEqual(port.capacity, 2)
        XCTAssertNil(sendResult(port, id: 1))
        XCTAssertNil(sendResult(port, id: 2))
        XCTAssertEqual(sendResult(port, id: 3), .full)
        XCTAssertEqual(port.queuedCount, 2)
        port.invalidate()
        XCTAssertEqual(port.queuedCount, 0)
    }
}

/// The error a send throws, or nil when it succeeded.
private func sendResult(_ port: MessagePort, id: Int32) -> MessagePort.SendError? {
    do {
        try port.send(id: id)
        return nil
    } catch {
        return error
    }
}
