// The loop inside a host's poll() loop: RunLoop's embedding API.

import XCTest
import FoundationEssentials
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer
#if canImport(Glibc)
import Glibc
#endif

/// The host's sleep: whether `fd` became readable within `ms`.
private func hostPoll(_ fd: Int32, _ ms: Int32) -> Bool {
    var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&p, 1, ms) > 0 && (p.revents & Int16(POLLIN)) != 0
}

final class EmbeddingTests: XCTestCase {
    func test_a_poll_loop_runs_our_timer() {
        onThread {
            let loop = RunLoop.current
            guard let fd = loop.embeddingFileDescriptor else { return XCTFail("no embedding descriptor") }
            XCTAssertEqual(loop.embeddingFileDescriptor, fd)
            let fired = Shared(0)
            Timer.scheduledTimer(withTimeInterval: 0.05, repeats: false) { _ in fired.withLock { $0 += 1 } }
            let wait = loop.prepareForEmbedding(in: .default)
            if !wait.hasWork {
                XCTAssertNotNil(wait.timeoutMilliseconds)
                XCTAssertLessThanOrEqual(wait.timeoutMilliseconds ?? 0, 51)
            }
            XCTAssertTrue(hostPoll(fd, 20_000))
            loop.runEmbeddedPass(in: .default)
            XCTAssertEqual(fired.withLock { $0 }, 1)
        }
    }

    func test_an_idle_loop_leaves_the_host_asleep() {
        onThread {
            let loop = RunLoop.current
            guard let fd = loop.embeddingFileDescriptor else { return XCTFail("no embedding descriptor") }
            let keep = RunLoop.Source {}
            loop.add(keep, forMode: .default)
            let wait = loop.prepareForEmbedding(in: .default)
            XCTAssertFalse(wait.hasWork)
            XCTAssertNil(wait.timeoutMilliseconds)
            XCTAssertFalse(hostPoll(fd, 200))
            // A block queued for the mode is work now.
            loop.perform {}
            XCTAssertTrue(loop.prepareForEmbedding(in: .default).hasWork)
            XCTAssertTrue(hostPoll(fd, 0))
            loop.runEmbeddedPass(in: .default)
            XCTAssertFalse(loop.prepareForEmbedding(in: .default).hasWork)
            XCTAssertFalse(hostPoll(fd, 50))
            loop.cancelEmbedding()
            XCTAssertFalse(loop.isWaiting)
            keep.invalidate()
        }
    }
}
