// Main-actor state updated from another thread's loop by hopping to the main actor.
import SwiftRunLoop
@MainActor final class Model { var title = "" }
@MainActor func go(_ model: Model, _ thread: RunLoopThread) {
    thread.runLoop.perform {
        Task { @MainActor in model.title = "changed" }
    }
}
