// A timer block runs on the loop's thread, and fire() on any thread.
import SwiftRunLoop
func go(_ loop: RunLoop) {
    var ticks = 0
    let timer = Timer(timeInterval: 0.1, repeats: true) { _ in ticks += 1 }
    loop.add(timer, forMode: .default)
    print(ticks)
}
