// A value computed on the loop's thread crosses back to the caller: it must
// be Sendable.
import SwiftRunLoop
final class Counter { var value = 0 }
func make(_ loop: RunLoop) -> Counter {
    loop.perform(waitUntilDone: true) { Counter() }
}
