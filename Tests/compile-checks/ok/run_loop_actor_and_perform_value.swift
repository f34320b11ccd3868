// An actor pinned to a run-loop thread by one stored property, and a value
// computed on a loop's thread handed back by perform(waitUntilDone:) rather
// than through a captured var.
import SwiftRunLoop

actor Store: RunLoopActor {
    let runLoopExecutor = RunLoopThread(name: "store").executor
    var items: [Int] = []
    func add(_ item: Int) { items.append(item) }
}

let store = Store()
let loop = store.runLoopExecutor.runLoop
let count = loop.perform(waitUntilDone: true) {
    store.assumeIsolated { store in
        store.items.append(1)
        return store.items.count
    }
}
print(count)
Task {
    await store.add(2)
    print(await store.items)
}
