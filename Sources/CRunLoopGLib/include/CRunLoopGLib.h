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
 * on what the other is waiting for. Both directions may be used at once,
 * also on one context (section 3): whichever loop the thread runs drives the
 * other.
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
 * here it is the loop's own wait. Wherever a pass of the loop in `mode` may
 * go on to sleep or end (its BeforeSources and BeforeWaiting observers, and
 * when the run exits), an observer prepares and queries the context afresh:
 * each descriptor GLib wants polled becomes a version-1 source of the loop
 * watching it for reading (G_IO_IN, G_IO_PRI) and/or writing (G_IO_OUT) in
 * the loop's wait set, and GLib's timeout becomes one timer of the loop, so
 * the loop (or a host sleeping on it, CRunLoopEmbed.h) sleeps exactly until
 * GLib or our own items have work. A GLib source ready right then (an idle, a
 * ready time already past, g_main_context_invoke) signals a version-0 source
 * of the attachment, which dispatches it in the same pass when found at
 * BeforeSources. So sources attached or changed by our callouts are in the
 * next wait, also in runs that never sleep: a run RLRunLoopRunInMode(mode, 0,
 * false) dispatches the GLib sources ready when it starts, and those that
 * its callouts made ready are dispatched by the next such run. When one of
 * the watches or the timer fires, one iteration that does not wait runs, as
 * g_main_context_iteration(context, FALSE) would: prepare, query, poll
 * without waiting, check and dispatch (a check always follows its own query).
 * So GLib's callbacks always run inside a source's perform: a run with
 * returnAfterSourceHandled returns after them, and a run nested in them
 * services GLib as well. GLib callbacks run only while the loop runs in
 * `mode`; a loop whose GLib context has nothing due sleeps without wake-ups.
 * A descriptor number that GLib closes and reuses between two iterations is
 * noticed (its file changed) and watched afresh.
 *
 * GLib's callbacks may run the loop again (a nested RLRunLoopRunInMode) or a
 * nested g_main_context_iteration, attach and remove GLib sources, and
 * detach the context (RLGLibContextDetach), as GLib allows in its own loop.
 * While a GLib callback iterates the context itself (g_main_loop_run for a
 * modal dialog), GLib's poll is the thread's wait: our loop's own items wait
 * until it returns (unless that context also hosts the loop: section 3).
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
   leaves the loop's descriptor out of that thread's poll. In iterations of
   its context that an attachment to rl makes (section 3) it does nothing
   either: the loop is running there already.
   Its priority is G_PRIORITY_DEFAULT (g_source_set_priority changes it).
   Destroying it stops the embedding (RLRunLoopEmbedCancel, when finalized on
   rl's thread); the loop can then run by itself again. It holds a reference
   on rl. NULL (nothing made): rl or mode NULL or empty,
   kRLRunLoopCommonModes, or the loop has no embedding descriptor (its
   thread exited, or out of descriptors). */
GSource *RLGLibSourceCreate(RLRunLoopRef rl, RLRunLoopMode mode);

/* ===========================================================================
 * 3. Both ways on one context
 *
 * One thread may have both directions on the same GLib context: the context
 * attached to its loop (RLGLibContextAttach) and the loop hosted by that
 * context (RLGLibSourceCreate, attached to it). Whichever loop the thread
 * runs drives the other, at every depth of nesting:
 *  - While the thread runs our loop (RLRunLoopRun, RLRunLoopRunInMode,
 *    RunLoop.run()), the attachment iterates the context, and the hosting
 *    source keeps out of those iterations: it neither polls the loop's
 *    descriptor nor runs the loop (the loop is running already, and its
 *    descriptor cannot be in its own wait).
 *  - While the thread runs GLib's loop on the context (g_main_loop_run,
 *    gtk_main, g_main_context_iteration), GLib runs our passes through the
 *    source. During such a pass the attachment leaves the context to GLib,
 *    which is dispatching it: it does not prepare, check or dispatch the
 *    context from inside GLib's dispatch, and it disarms its watches and
 *    timer (they would wake GLib for what GLib polls itself) until our loop
 *    runs by itself again.
 *  - A nested run of either loop, from a callout of the other, drives both
 *    like an outermost one: g_main_loop_run in a GLib callback that our loop
 *    dispatched runs our loop through the source; RLRunLoopRunInMode in one
 *    of our callouts that GLib ran iterates the context through the
 *    attachment, inside GLib's dispatch, as a g_main_context_iteration from
 *    a GLib callback would (GLib allows that nesting).
 * The thread may switch from one loop to the other at any time. Modes keep
 * their meaning: the attachment iterates the context only in runs of its
 * mode, and the source runs our loop in its own. (The attachment tells the pass GLib runs
 * from a run nested in its callouts by which enters first; an Entry observer
 * of the application that runs the loop again before the attachment's own,
 * ordered LONG_MIN, has seen the pass enter blurs the two, at worst letting
 * the attachment iterate the context inside that pass, as nesting does.)
 * Different contexts each way (one attached, another hosting) need none of
 * this: each is one direction on its own.
 *
 * Why both ways work rather than the cycle being refused: a thread that has
 * both runs code of both worlds (a GTK main loop calling into code that runs
 * RunLoop modally, or the reverse), and refusing could only be done where
 * the second half is made, so which call fails would depend on their order
 * (RLGLibSourceCreate does not know its context before g_source_attach).
 * Standing aside loses nothing: a loop that is running needs no one to poll
 * it, so each iteration of the context is still one prepare, query, poll,
 * check and dispatch, made by one loop, and neither loop wakes for the other.
 * ======================================================================== */

#ifdef __cplusplus
}
#endif

#endif /* CRUNLOOP_GLIB_H */
