// With Foundation imported too: Date, TimeInterval and Data are not
// ambiguous (ours are Foundation's), and the scoped imports pick our
// RunLoop and Timer.
import Foundation
import SwiftRunLoop
import class SwiftRunLoop.RunLoop
import class SwiftRunLoop.Timer

let start: Date = Date()
let delay: TimeInterval = 0.01
let payload = Data([1, 2, 3])
let timer = Timer(timeInterval: delay, repeats: false) { _ in print(payload.count) }
RunLoop.current.add(timer, forMode: .default)
RunLoop.current.run(until: start.addingTimeInterval(1))
let url = URL(fileURLWithPath: "/tmp")  // the rest of Foundation is still there
