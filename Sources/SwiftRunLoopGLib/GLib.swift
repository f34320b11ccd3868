// The GLib bridge for Swift: this thread's RunLoop inside a GLib main loop
// (a GTK program gets Timer, RunLoop, DispatchQueue.main and the main actor
// on its GLib main thread), and a GLib main context inside RunLoop.run()
// (GIO and GDBus async calls in a program built on RunLoop).
//
// GLib's C API comes with `import SwiftRunLoopGLib`: a program hosting our
// loop in GLib (or GLib in ours) calls g_main_loop_run, g_timeout_add or GIO
// itself, and should not have to import this package's internal module that
// finds glib.h for it.

@_exported import CGLib
import CRunLoop
import CRunLoopGLib
import SwiftRunLoop

/// The calling thread's `RunLoop` run by a GLib main context: while the
/// thread runs `g_main_loop_run` (or `gtk_main`), the loop's timers, sources
/// and queued blocks in `mode` run, with no polling. Made on the thread that
/// iterates the context; ``invalidate()`` (or deinit) stops it. The same
/// context may also be attached to the loop (``GLibContextAttachment``):
/// whichever loop the thread runs then drives the other.
///
/// ```swift
/// import SwiftRunLoop
/// import SwiftRunLoopGLib
///
/// let mainLoop = GLibMainLoop()             // GLib's global default context
/// let hosted = GLibHostedRunLoop()          // hosted in that same context
/// Timer.scheduledTimer(withTimeInterval: 0.1, repeats: false) { _ in mainLoop.quit() }
/// mainLoop.run()                            // returns once our timer fired
/// hosted?.invalidate()
/// ```
///
/// GLib's own C API (`g_main_loop_run`, `g_timeout_add`, GIO) comes with
/// `import SwiftRunLoopGLib`.
public final class GLibHostedRunLoop {
    private var source: UnsafeMutablePointer<GSource>?

    /// Hosts the calling thread's run loop in `context` (nil: the thread's
    /// default GLib context, `g_main_context_get_thread_default`, else GLib's
    /// global one). nil when the loop has no embedding descriptor (out of
    /// descriptors) or `mode` is `.common`.
    public init?(context: OpaquePointer? = nil, mode: RunLoop.Mode = .default) {
        guard let s = mode.rawValue.withCString({ RLGLibSourceCreate(RLRunLoopGetCurrent(), $0) }) else {
            return nil
        }
        g_source_attach(s, context ?? g_main_context_get_thread_default())
        source = s
    }

    /// Stops hosting: GLib no longer runs the loop, which can run by itself again.
    public func invalidate() {
        guard let s = source else { return }
        source = nil
        g_source_destroy(s)
        g_source_unref(s)
    }

    deinit { invalidate() }
}

/// A GLib main context run by the calling thread's `RunLoop`: GLib's
/// sources (timeouts, idles, GIO and GDBus async calls) run inside
/// `RunLoop.current.run()` in `mode`. Made on the loop's thread, which
/// becomes the context's owner; ``detach()`` (or deinit, on that thread)
/// gives it back. The context may also host the same loop
/// (``GLibHostedRunLoop``): whichever loop the thread runs drives the other.
public final class GLibContextAttachment {
    private var ref: RLGLibContextRef?

    /// nil when another thread owns the context, or out of memory.
    public init?(context: OpaquePointer? = nil, mode: RunLoop.Mode = .common) {
        guard let r = mode.rawValue.withCString({ RLGLibContextAttach(context, RLRunLoopGetCurrent(), $0) }) else {
            return nil
        }
        ref = r
    }

    /// The GLib context run by the loop.
    public var context: OpaquePointer? { ref.flatMap { RLGLibContextGetContext($0) } }

    /// Stops running the context from the loop (on the loop's thread).
    public func detach() {
        guard let r = ref else { return }
        ref = nil
        RLGLibContextDetach(r)
    }

    deinit { detach() }
}

/// A GLib main loop (`GMainLoop`): ``run()`` iterates its context on the
/// calling thread until ``quit()``.
///
/// A thin owner of the C object, for the common case; GLib's whole C API is
/// there too (`g_main_loop_*` on ``pointer``). `Sendable`: GLib's
/// `g_main_loop_quit` and `g_main_loop_is_running` are thread-safe, so
/// ``quit()`` may be called from any thread (a timer's block, another
/// thread); ``run()`` belongs on the thread that owns the context.
public final class GLibMainLoop: @unchecked Sendable {
    /// The `GMainLoop *` (one reference owned).
    public let pointer: OpaquePointer

    /// Makes a main loop on `context`; nil for GLib's global default context
    /// (the one `GLibHostedRunLoop()` uses on a thread with no thread-default
    /// context).
    public init(context: OpaquePointer? = nil) {
        pointer = g_main_loop_new(context, 0)
    }

    deinit { g_main_loop_unref(pointer) }

    /// Iterates the loop's context on the calling thread until ``quit()``
    /// (GLib's `g_main_loop_run`).
    public func run() { g_main_loop_run(pointer) }

    /// Makes ``run()`` return (GLib's `g_main_loop_quit`). From any thread.
    public func quit() { g_main_loop_quit(pointer) }

    /// Whether ``run()`` is running (GLib's `g_main_loop_is_running`).
    public var isRunning: Bool { g_main_loop_is_running(pointer) != 0 }

    /// The context the loop iterates (`GMainContext *`, not retained).
    public var context: OpaquePointer { g_main_loop_get_context(pointer) }
}
