// The GLib product as a user sees it: `import SwiftRunLoopGLib` alone brings
// GLib's C API (this file does not import the package's internal CGLib), and
// GLibMainLoop runs and quits a GLib main loop from Swift.

import SwiftRunLoop
import SwiftRunLoopGLib
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct GLibReexportTests {
    @Test func glibMainLoopHostsOurTimerWithoutImportingCGLib() {
        let quitBy = RunLoopThread(name: "test.glib.reexport")
        defer { quitBy.stop() }
        // GLib contexts belong to one thread: this test's work runs on a
        // thread of its own, the RunLoopThread's, and waits for it there.
        let outcome = quitBy.runLoop.perform(waitUntilDone: true) { () -> [String] in
            let context = g_main_context_new()
            g_main_context_push_thread_default(context)
            defer {
                g_main_context_pop_thread_default(context)
                g_main_context_unref(context)
            }
            let mainLoop = GLibMainLoop(context: context)
            guard let hosted = GLibHostedRunLoop(mode: .init("test.glib.hosted")) else { return ["no hosting"] }
            defer { hosted.invalidate() }
            let timer = Timer(timeInterval: 0.005, repeats: false) { _ in mainLoop.quit() }
            RunLoop.current.add(timer, forMode: .init("test.glib.hosted"))
            mainLoop.run()
            return [mainLoop.isRunning ? "still running" : "quit", mainLoop.context == context ? "same" : "other"]
        }
        #expect(outcome == ["quit", "same"])
    }
}
