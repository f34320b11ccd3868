// RunLoop.IdleQueue: expensive work only while the loop is idle, between
// timer "events".

import SwiftRunLoop
import Synchronization

print("== Swift: RunLoop.IdleQueue loads work between events ==")
let loop = RunLoop.current
let start = Date()
func stamp() -> String { "\(Int(Date().timeIntervalSince(start) * 1000)) ms".padding(toLength: 7) }
let queue = RunLoop.IdleQueue(runLoop: loop)
let events = Atomic(0)  // blocks are @Sendable: shared state is Sendable too
let event = Timer(timeInterval: 0.03, repeats: true) { timer in
    let count = events.add(1, ordering: .relaxed).newValue
    print("  \(stamp())  EVENT \(count)")
    if count == 3 { timer.invalidate() }
}
loop.add(event, forMode: .default)
for index in 1...8 {
    queue.submit {
        let begin = Date()
        while Date().timeIntervalSince(begin) < 0.012 {}  // 12 ms of "decoding"
        print("  \(stamp())  idle task: loaded image \(index)")
    }
}
// The main loop also serves DispatchQueue.main, so its mode is never empty:
// a last idle task stops the run once the loads are done.
queue.submit { RunLoop.current.stop() }
print("  queued 8 loads; the run ended: \(loop.run(mode: .default, seconds: 10, returnAfterSourceHandled: false))")
print("  idle tasks done: \(queue.completedCount) (8 loads + the stop), events: \(events.load(ordering: .relaxed))\n")

extension String {
    func padding(toLength length: Int) -> String {
        count >= length ? self : String(repeating: " ", count: length - count) + self
    }
}
