// The activities of a run loop, Entry ... Exit, in Swift: an observer of
// every activity and a timer that fires twice, then stops the loop.

import SwiftRunLoop
import Synchronization

print("== Swift: activity trace (RunLoop.Observer of .allActivities, a timer every 50 ms) ==")
let loop = RunLoop.current
let names: [RunLoop.Activity: String] = [
    .entry: "entry", .beforeTimers: "beforeTimers", .beforeSources: "beforeSources",
    .beforeWaiting: "beforeWaiting (about to sleep)", .afterWaiting: "afterWaiting (woke up)", .exit: "exit",
]
let observer = RunLoop.Observer(activities: .allActivities) { activity in
    print("  \(names[activity] ?? "?")")
}
loop.add(observer, forMode: .default)
let fired = Atomic(0)  // blocks are @Sendable: shared state is Sendable too
let timer = Timer(timeInterval: 0.05, repeats: true) { timer in
    let count = fired.add(1, ordering: .relaxed).newValue
    print("    -> timer fired (\(count))")
    if count == 2 {
        timer.invalidate()
        RunLoop.current.stop()
    }
}
loop.add(timer, forMode: .default)
print("  run(mode:seconds:) returned \(loop.run(mode: .default, seconds: 5, returnAfterSourceHandled: false))\n")
observer.invalidate()
