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

/// A count a GLib callback reaches through its user data.
private final class Counter: @unchecked Sendable {
    var value = 0
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
    /// One context both ways on one thread: GLib's loop runs our Timer, then
    /// our loop runs GLib's timeout, each through the other's bridge.
    @Test func bothWaysOnOneContext() {
        onOwnThread {
            let context = g_main_context_new()
            g_main_context_push_thread_default(context)
            nonisolated(unsafe) let mainLoop = g_main_loop_new(context, 0)
            let hosted = GLibHostedRunLoop()
            let attachment = GLibContextAttachment(context: context)
            #expect(hosted != nil)
            #expect(attachment != nil)
            let glibTicks = Counter()
            let tick = g_timeout_source_new(5)
            g_source_set_callback(
                tick,
                { data in
                    Unmanaged<Counter>.fromOpaque(data!).takeUnretainedValue().value += 1
                    return 1  // G_SOURCE_CONTINUE
                }, Unmanaged.passUnretained(glibTicks).toOpaque(), nil)
            g_source_attach(tick, context)
            nonisolated(unsafe) var ourTicks = 0
            let timer = Timer(timeInterval: 0.05, repeats: true) { _ in
                ourTicks += 1
                if ourTicks == 3 { g_main_loop_quit(mainLoop) }
            }
            RunLoop.current.add(timer, forMode: .default)
            g_main_loop_run(mainLoop)
            #expect(ourTicks == 3)
            #expect(glibTicks.value >= 3)
            let before = glibTicks.value
            for _ in 0..<1000 where glibTicks.value < before + 3 {
                _ = RunLoop.current.run(mode: .default, seconds: 1, returnAfterSourceHandled: true)
            }
            #expect(glibTicks.value >= before + 3)
            timer.invalidate()
            g_source_destroy(tick)
            g_source_unref(tick)
            attachment?.detach()
            hosted?.invalidate()
            g_main_loop_unref(mainLoop)
            g_main_context_pop_thread_default(context)
            g_main_context_unref(context)
        }
    }
}
