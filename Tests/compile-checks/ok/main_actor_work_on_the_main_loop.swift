// An async program whose main-actor work runs on RunLoop.main.
import SwiftRunLoop

@MainActor final class Model { var title = "" }

@main
struct App: RunLoopMain {
    static func run() async throws {
        let model = Model()
        try await Task.sleep(for: .milliseconds(10))
        model.title = "loaded"  // main actor, main thread, main loop
        Timer.scheduledTimer(withTimeInterval: 0.01, repeats: false) { _ in
            MainActor.assumeIsolated { model.title = "ticked" }  // fires on the main loop's thread
        }
        print(model.title)
    }
}
