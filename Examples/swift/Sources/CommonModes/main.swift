// A timer in the common modes keeps firing while the loop runs a custom
// "tracking" mode; a default-mode timer waits.

import SwiftRunLoop
import Synchronization

print("== Swift: a common-modes timer keeps firing in a tracking mode ==")
let loop = RunLoop.current
let tracking = RunLoop.Mode("UITrackingRunLoopMode")
loop.addCommonMode(tracking)
let counts = Mutex(["common": 0, "default": 0])  // blocks are @Sendable: shared state is Sendable too
func makeTimer(_ name: String) -> Timer {
    Timer(timeInterval: 0.1, repeats: true) { _ in
        counts.withLock { $0[name, default: 0] += 1 }
        let kind = name == "common" ? "common-modes" : "default-mode"
        print("  \(kind) timer fired while running \(RunLoop.current.currentMode?.rawValue ?? "?")")
    }
}
let common = makeTimer("common"), plain = makeTimer("default")
loop.add(common, forMode: .common)
loop.add(plain, forMode: .default)
for (mode, seconds) in [(RunLoop.Mode.default, 0.25), (tracking, 0.3), (.default, 0.1)] {
    print("-- running in \(mode.rawValue) for \(seconds) s")
    _ = loop.run(mode: mode, seconds: seconds, returnAfterSourceHandled: false)
}
let final = counts.withLock { $0 }
print("  common-modes timer fired \(final["common"]!) times, default-mode timer \(final["default"]!) times\n")
common.invalidate()
plain.invalidate()
