// The GLib bridge for Swift: this thread's RunLoop inside a GLib main loop
// (a GTK program gets Timer, RunLoop, DispatchQueue.main and the main actor
// on its GLib main thread), and a GLib main context inside RunLoop.run()
// (GIO and GDBus async calls in a program built on RunLoop).

import CGLib
import CRunLoop
import CRunLoopGLib
import SwiftRunLoop

/// The calling thread's ``RunLoop`` run by a GLib main context: while the
/// thread runs `g_main_loop_run` (or `gtk_main`), the loop's timers, sources
/// and queued blocks in `mode` run, with no polling. Made on the thread that
/// iterates the context; ``invalidate()`` (or deinit) stops it. The same
/// context may also be attached to the loop (``GLibContextAttachment``):
/// whichever loop the thread runs then drives the other.
///
/// ```swift
/// let hosted = GLibHostedRunLoop()          // the thread-default GLib context
/// Timer.scheduledTimer(withTimeInterval: 1, repeats: true) { _ in print("tick") }
/// g_main_loop_run(g_main_loop_new(nil, 0))
/// ```
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

/// A GLib main context run by the calling thread's ``RunLoop``: GLib's
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
