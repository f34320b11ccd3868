// A block run on another thread's loop mutates a local of this thread.
import SwiftRunLoop
let thread = RunLoopThread()
var count = 0
for _ in 0..<1000 { thread.runLoop.perform { count += 1 } }
count += 1
