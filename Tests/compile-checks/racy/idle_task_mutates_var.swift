// Idle tasks run on the queue's loop's thread.
import SwiftRunLoop
func go(_ loop: RunLoop) {
    var done = false
    RunLoop.IdleQueue(runLoop: loop).submit { done = true }
    print(done)
}
