// RunLoop.IdleQueue: expensive work only while the loop is idle (seed 000's
// IdleRun), between timer "events".

import SwiftRunLoop
import FoundationEssentials

print("== Swift: RunLoop.IdleQueue loads work between events ==")
let loop = RunLoop.current
let start = Date()
func stamp() -> String { "\(Int(Date().timeIntervalSince(start) * 1000)) ms".padding(toLength: 7) }
let queue = RunLoop.IdleQueue(runLoop: loop)
var events = 0
let event = Timer(timeInterval: 0.03, repeats: true) { timer in
    events += 1
    print("  \(stamp())  EVENT \(events)")
    if events == 3 { timer.invalidate() }
}
loop.add(event, forMode: .default)
for index in 1...8 {
    queue.submit {
        let begin = Date()
        while Date().timeIntervalSince(begin) < 0.012 {}   // 12 ms of "decoding"
        print("  \(stamp())  idle task: loaded image \(index)")
    }
}
// The main loop also serves DispatchQueue.main, so its mode is never empty:
// a last idle task stops the run once the loads are done.
queue.submit { RunLoop.current.stop() }
print("  queued 8 loads; the run ended: \(loop.run(mode: .default, seconds: 10, returnAfterSourceHandled: false))")
print("  idle tasks done: \(queue.completedCount) (8 loads + the stop), events: \(events)\n")

extension String {
    func padding(toLength length: Int) -> String {
        count >= length ? self : String(repeating: " ", count: length - count) + self
    }
}
