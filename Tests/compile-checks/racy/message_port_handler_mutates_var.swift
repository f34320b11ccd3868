// A port's handler runs on the servicing loop's thread.
import SwiftRunLoop
func go() {
    var received = 0
    _ = MessagePort { _ in received += 1 }
}
