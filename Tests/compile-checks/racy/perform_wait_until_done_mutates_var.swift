// Even a waited-for block runs on the loop's thread: no captured var mutation.
import SwiftRunLoop
func go(_ loop: RunLoop) -> Int {
    var result = 0
    loop.perform(waitUntilDone: true) { result = 42 }
    return result
}
