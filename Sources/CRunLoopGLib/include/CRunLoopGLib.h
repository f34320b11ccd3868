/*
 * CRunLoopGLib.h: GLib and this run loop in one thread, either way round.
 * A separate library (libcrunloop-glib, pkg-config crunloop-glib), built only
 * where GLib's development files are; the core library never depends on GLib.
 *
 *  1. A GLib main context inside our run loop (RLGLibContextAttach): GLib's
 *     sources (timeouts, idles, GIO and GDBus async calls) run while the
 *     thread runs RLRunLoopRun / RLRunLoopRunInMode / RunLoop.run().
 *  2. Our run loop inside a GLib main loop (RLGLibSourceCreate): our timers,
 *     sources, queued work and DispatchQueue.main run while the thread runs
 *     g_main_loop_run / gtk_main.
 *
 * Neither direction polls or adds a thread: each loop sleeps in its own wait
 * on what the other is waiting for.
 */
#ifndef CRUNLOOP_GLIB_H
#define CRUNLOOP_GLIB_H

#include <CRunLoopEmbed.h>
#include <glib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ===========================================================================
 * 1. A GLib main context driven by our run loop
 *
 *   RLGLibContextRef g = RLGLibContextAttach(NULL, RLRunLoopGetCurrent(),
 *                                            kRLRunLoopCommonModes);
 *   g_timeout_add(100, on_timeout, NULL);        // a GLib source
 *   RLRunLoopRun();                              // runs it, and ours
 *   RLGLibContextDetach(g);
 *
 * How: GLib lets another loop do the poll() of g_main_context_iteration;
 * here it is the loop's own wait. Before the loop sleeps, an observer
 * (BeforeWaiting, and BeforeSources for runs that never sleep) prepares and
 * queries the context: each descriptor GLib wants polled becomes a version-1
 * source of the loop watching it for reading (G_IO_IN, G_IO_PRI) and/or
 * writing (G_IO_OUT) in the loop's wait set, and GLib's timeout becomes one
 * timer of the loop, so the loop sleeps exactly until GLib or our own items
 * have work. When one of those sources fires, its perform polls GLib's
 * descriptors once without waiting, checks and dispatches what is ready, and
 * prepares again; when the timer fires (a GLib timeout, or a source GLib
 * found ready while preparing, such as an idle), it signals a version-0
 * source of the attachment that does the same. So GLib's callbacks always
 * run inside a source's perform: a run with returnAfterSourceHandled returns
 * after them, and a run nested in them services GLib as well. GLib callbacks
 * run only while the loop runs in `mode`; a loop whose GLib context has
 * nothing due sleeps without wake-ups. A descriptor number that GLib closes
 * and reuses between two iterations is noticed (its file changed) and
 * watched afresh.
 *
 * GLib's callbacks may run the loop again (a nested RLRunLoopRunInMode) or a
 * nested g_main_context_iteration, attach and remove GLib sources, and
 * detach the context (RLGLibContextDetach), as GLib allows in its own loop.
 * While a GLib callback iterates the context itself (g_main_loop_run for a
 * modal dialog), GLib's poll is the thread's wait: our loop's own items wait
 * until it returns.
 * ======================================================================== */

typedef struct __RLGLibContext *RLGLibContextRef;

/* Makes `rl` drive `context` (NULL: g_main_context_default()) in `mode` (a
   mode name or kRLRunLoopCommonModes). Must be called on rl's own thread,
   which becomes the context's owner (g_main_context_acquire) until the
   detach. Returns NULL (attaching nothing) when rl, mode or the context is
   NULL or empty, when rl is not the calling thread's loop, when another
   thread owns the context, or when memory runs out. The attachment holds a
   reference on the context until the detach. The mode is not empty while
   attached (RLRunLoopRun keeps running, as with any source in it). */
RLGLibContextRef RLGLibContextAttach(GMainContext *context, RLRunLoopRef rl, RLRunLoopMode mode);
/* Stops driving the context: removes the loop's observer, timer and sources,
   releases the context's ownership and reference, and frees the object. GLib
   callbacks never run from this loop afterwards (those that were ready stay
   pending in the context). Must be called on the loop's thread, also from
   inside a GLib callback or any callout of the loop. NULL: ignored. Another
   thread: ignored (nothing is detached). Detach before the loop's thread
   exits: the loop's teardown removes the items but cannot release GLib's
   ownership of the context, which then stays with the dead thread. */
void RLGLibContextDetach(RLGLibContextRef attachment);
/* The context the attachment drives (not retained); NULL for NULL. */
GMainContext *RLGLibContextGetContext(RLGLibContextRef attachment);

/* ===========================================================================
 * 2. Our run loop driven by a GLib main context
 *
 *   GMainLoop *main_loop = g_main_loop_new(NULL, FALSE);
 *   GSource *s = RLGLibSourceCreate(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
 *   g_source_attach(s, NULL);                    // the thread's GLib context
 *   g_source_unref(s);
 *   g_main_loop_run(main_loop);                  // runs our timers too
 *
 * How: a GSource built on the embedding API (CRunLoopEmbed.h). Its prepare
 * is RLRunLoopEmbedPrepare (GLib then sleeps until the loop's next timer at
 * the latest), it polls the loop's embedding descriptor for G_IO_IN, and its
 * dispatch runs one pass of the loop that never blocks
 * (RLRunLoopRunInMode(mode, 0, false)). Our timers, version-0 and version-1
 * sources, queued functions and wake-ups from other threads wake GLib's poll
 * exactly when they have work; an idle loop costs GLib no wake-up. On the
 * main thread, that brings the main loop's work (DispatchQueue.main, the
 * main actor) into a GLib or GTK program.
 *
 * A callout of ours may run a nested GLib loop (a modal dialog's
 * g_main_loop_run): the source can recurse, so our loop keeps running inside
 * it, as in a nested run of our own loop.
 *
 * As with any pass that polls, the loop's BeforeWaiting and AfterWaiting
 * observers do not run while GLib drives it (see CRunLoopEmbed.h).
 * ======================================================================== */

/* A new GSource (one reference, not attached) that runs `rl` in `mode` (a
   mode name; the common-modes marker is refused) whenever the loop has work.
   Attach it to the GLib context that rl's own thread iterates: iterated on
   any other thread it does nothing (the loop only runs on its thread) and
   leaves the loop's descriptor out of that thread's poll.
   Its priority is G_PRIORITY_DEFAULT (g_source_set_priority changes it).
   Destroying it stops the embedding (RLRunLoopEmbedCancel, when finalized on
   rl's thread); the loop can then run by itself again. It holds a reference
   on rl. NULL (nothing made): rl or mode NULL or empty,
   kRLRunLoopCommonModes, or the loop has no embedding descriptor (its
   thread exited, or out of descriptors). */
GSource *RLGLibSourceCreate(RLRunLoopRef rl, RLRunLoopMode mode);

#ifdef __cplusplus
}
#endif

#endif /* CRUNLOOP_GLIB_H */
