// State owned by an actor pinned to the loop's thread; callouts reach it
// synchronously with assumeIsolated.
import SwiftRunLoop

actor Store {
    let executor: RunLoopSerialExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    var items: [Int] = []
    init(executor: RunLoopSerialExecutor) { self.executor = executor }
    func add(_ item: Int) { items.append(item) }
}

let thread = RunLoopThread(name: "store")
let store = Store(executor: thread.executor)
let timer = Timer(timeInterval: 0.01, repeats: false) { _ in
    store.assumeIsolated { $0.items.append(1) }  // a callout on the loop's thread
}
thread.runLoop.add(timer, forMode: .default)
Task {
    await store.add(2)
    print(await store.items)
}
