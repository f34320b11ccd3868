// A timer counting with an Atomic, invalidated from its block.
import SwiftRunLoop
import Synchronization
let ticks = Atomic(0)
Timer.scheduledTimer(withTimeInterval: 0.01, repeats: true) { timer in
    if ticks.add(1, ordering: .relaxed).newValue == 3 { timer.invalidate() }
}
RunLoop.current.run(until: Date(timeIntervalSinceNow: 1))
