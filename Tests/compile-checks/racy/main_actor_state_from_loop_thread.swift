// Main-actor state touched from a block on another thread's loop.
import SwiftRunLoop
@MainActor final class Model { var title = "" }
@MainActor func go(_ model: Model, _ thread: RunLoopThread) {
    thread.runLoop.perform { model.title = "changed" }
}
