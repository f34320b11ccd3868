// The GLib bridge from Swift: a Timer inside g_main_loop_run, and a GLib
// timeout inside RunLoop.run. Each test uses its own GLib context, pushed as
// its thread's default, on a thread of its own.

import CGLib
import SwiftRunLoop
import SwiftRunLoopGLib
import Testing
#if canImport(Glibc)
import Glibc
#endif

private final class Body: @unchecked Sendable {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}

/// Runs `body` on a new thread and waits for it (GLib contexts are owned by
/// one thread; Swift Testing's threads are shared).
private func onOwnThread(_ body: @escaping @Sendable () -> Void) {
    var thread = pthread_t()
    let arg = Unmanaged.passRetained(Body(body)).toOpaque()
    let rc = pthread_create(
        &thread, nil,
        { arg in
            Unmanaged<Body>.fromOpaque(arg!).takeRetainedValue().run()
            return nil
        }, arg)
    #expect(rc == 0)
    pthread_join(thread, nil)
}

@Suite struct GLibTests {
    @Test func timerFiresInsideAGLibMainLoop() {
        onOwnThread {
            let context = g_main_context_new()
            g_main_context_push_thread_default(context)
            nonisolated(unsafe) let mainLoop = g_main_loop_new(context, 0)
            let hosted = GLibHostedRunLoop()
            #expect(hosted != nil)
            nonisolated(unsafe) var ticks = 0
            let timer = Timer(timeInterval: 0.01, repeats: true) { t in
                ticks += 1
                if ticks == 3 { t.invalidate(); g_main_loop_quit(mainLoop) }
            }
            RunLoop.current.add(timer, forMode: .default)
            g_main_loop_run(mainLoop)
            #expect(ticks == 3)
            hosted?.invalidate()
            g_main_loop_unref(mainLoop)
            g_main_context_pop_thread_default(context)
            g_main_context_unref(context)
        }
    }

    @Test func glibTimeoutFiresInsideRunLoopRun() {
        onOwnThread {
            let context = g_main_context_new()
            let attachment = GLibContextAttachment(context: context, mode: .default)
            #expect(attachment != nil)
            let source = g_timeout_source_new(10)
            g_source_set_callback(
                source,
                { _ in
                    RunLoop.current.stop()
                    return 0  // G_SOURCE_REMOVE
                }, nil, nil)
            g_source_attach(source, context)
            g_source_unref(source)
            let result = RunLoop.current.run(mode: .default, seconds: 10, returnAfterSourceHandled: false)
            #expect(result == .stopped)
            attachment?.detach()
            g_main_context_unref(context)
        }
    }
}
