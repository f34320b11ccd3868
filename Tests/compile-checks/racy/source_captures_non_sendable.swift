// A source may be performed by the loops of several threads.
import SwiftRunLoop
final class Queue { var items: [Int] = [] }
let queue = Queue()
let source = RunLoop.Source { queue.items.removeAll() }
