/*
 * CRunLoopGLib.h: GLib and this run loop in one thread, either way round.
 * A separate library (libcrunloop-glib, pkg-config crunloop-glib), built only
 * where GLib's development files are; the core library never depends on GLib.
 *
 *  2. Our run loop inside a GLib main loop (RLGLibSourceCreate): our timers,
 *     sources, observers, queued work and DispatchQueue.main run while the
 *     thread runs g_main_loop_run / gtk_main.
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
 * As with any pass that polls, the loop's BeforeWaiting and AfterWaiting
 * observers do not run while GLib drives it (see CRunLoopEmbed.h).
 * ======================================================================== */

/* A new GSource (one reference, not attached) that runs `rl` in `mode` (a
   mode name; the common-modes marker is refused) whenever the loop has work.
   Attach it to the GLib context that rl's own thread iterates: prepared on
   any other thread it does nothing (the loop only runs on its thread).
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
