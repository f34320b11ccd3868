// A Timer (Sendable) handed to another thread to re-date and invalidate it;
// timers kept in a Set, with userInfo.
import SwiftRunLoop
let thread = RunLoopThread()
let timer = Timer(timeInterval: 60, repeats: true, userInfo: "refresh") { timer in
    print("fired", timer.userInfo ?? "")
}
thread.runLoop.add(timer, forMode: .default)
var timers: Set<Timer> = [timer]
Task.detached {
    timer.fireDate = Date(timeIntervalSinceNow: 0.01)
    timer.invalidate()
}
timers.remove(timer)
