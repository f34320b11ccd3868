// Top-level variables belong to the main actor; a timer block is not isolated to it.
import SwiftRunLoop
var ticks = 0
Timer.scheduledTimer(withTimeInterval: 0.1, repeats: true) { _ in ticks += 1 }
