// A non-Sendable object captured by a block that runs on another thread.
import SwiftRunLoop
final class Counter { var value = 0 }
func go(_ loop: RunLoop) {
    let counter = Counter()
    loop.perform(inModes: [.default, .common]) { counter.value += 1 }
    counter.value += 1
}
