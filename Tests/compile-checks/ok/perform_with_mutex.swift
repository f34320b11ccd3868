// Shared state behind a Mutex.
import SwiftRunLoop
import Synchronization
final class Totals: Sendable { let count = Mutex(0) }
let thread = RunLoopThread()
let totals = Totals()
for _ in 0..<1000 { thread.runLoop.perform { totals.count.withLock { $0 += 1 } } }
thread.runLoop.perform(waitUntilDone: true) {}
print(totals.count.withLock { $0 })
thread.stop()
