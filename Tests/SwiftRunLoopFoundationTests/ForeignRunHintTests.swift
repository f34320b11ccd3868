// Forgetting FoundationBridge.install() in a test: work added to RunLoop.main
// while Foundation's RunLoop runs the main thread (as XCTest's waits do)
// gets a one-time hint on standard error; with the bridge installed, or
// with our own loop running, there is none.

import Foundation
import XCTest
@_spi(Testing) import SwiftRunLoop
import SwiftRunLoopFoundation
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer

/// Collects what is written to standard error while `body` runs.
private func capturingStandardError(_ body: () -> Void) -> String {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { return "" }
    _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
    let saved = dup(2)
    dup2(fds[1], 2)
    body()
    dup2(saved, 2)
    close(saved)
    close(fds[1])
    var text = Data()
    var buffer = [UInt8](repeating: 0, count: 4096)
    while case let count = read(fds[0], &buffer, buffer.count), count > 0 { text.append(contentsOf: buffer[..<count]) }
    close(fds[0])
    return String(decoding: text, as: UTF8.self)
}

final class ForeignRunHintTests: XCTestCase {
    /// Foundation's RunLoop runs the main thread for a moment while ours
    /// holds a timer far in the future.
    private func foundationRunsWhileOursHasWork(runOursInstead: Bool = false) -> String {
        capturingStandardError {
            let timer = Timer.scheduledTimer(withTimeInterval: 1000, repeats: false) { _ in }
            if runOursInstead {
                RunLoop.main.run(mode: .default, seconds: 0.05, returnAfterSourceHandled: false)
            } else {
                Foundation.RunLoop.current.run(until: Date(timeIntervalSinceNow: 0.05))
            }
            timer.invalidate()
        }
    }

    func test_hint_when_foundation_runs_the_main_thread_without_the_bridge() throws {
        try XCTSkipUnless(Thread.isMainThread, "XCTest did not run this on the main thread")
        _ = RunLoop.resetForeignRunHint()

        FoundationBridge.install()
        let bridged = foundationRunsWhileOursHasWork()
        FoundationBridge.uninstall()
        XCTAssertFalse(bridged.contains("FoundationBridge.install()"), bridged)

        let oursRan = foundationRunsWhileOursHasWork(runOursInstead: true)
        XCTAssertFalse(oursRan.contains("FoundationBridge.install()"), oursRan)
        XCTAssertFalse(RunLoop.resetForeignRunHint())

        // Nothing left for our loop to do: nothing to say.
        let idle = capturingStandardError {
            Timer.scheduledTimer(withTimeInterval: 1000, repeats: false) { _ in }.invalidate()
            Foundation.RunLoop.current.run(until: Date(timeIntervalSinceNow: 0.05))
        }
        XCTAssertFalse(idle.contains("FoundationBridge.install()"), idle)
        XCTAssertFalse(RunLoop.resetForeignRunHint())

        let forgotten = foundationRunsWhileOursHasWork()
        XCTAssertTrue(forgotten.contains("FoundationBridge.install()"), forgotten)

        // Once only.
        let again = foundationRunsWhileOursHasWork()
        XCTAssertFalse(again.contains("FoundationBridge.install()"), again)
        XCTAssertTrue(RunLoop.resetForeignRunHint())
    }
}
