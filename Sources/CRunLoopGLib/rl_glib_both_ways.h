/*
 * rl_glib_both_ways.h: what the two directions of the bridge tell each other
 * on one thread, so that one GLib context can be both attached to our loop
 * and hosting it. Private to the library.
 *
 * GLib's iterations of a context never nest inside one another's check, and a
 * check must follow the iteration's own prepare and query. So each direction
 * stands aside where the other one is already at work:
 * - the source (our loop in GLib) stays out of the iterations an attachment
 *   makes of its context: our loop is running there already, and its
 *   descriptor cannot be in its own wait;
 * - the attachment (GLib in our loop) leaves its context alone during a pass
 *   GLib itself runs through the source: GLib is iterating the context there.
 */
#ifndef RL_GLIB_BOTH_WAYS_H
#define RL_GLIB_BOTH_WAYS_H

#include "CRunLoopGLib.h"

#define RLG_INTERNAL __attribute__((visibility("hidden")))

/* A pass of our loop that GLib is running through the source (its dispatch). */
typedef struct {
    GMainContext *context; /* the context dispatching the source */
    RLRunLoopRef rl;
    const char *mode;     /* the mode the pass runs */
    unsigned long serial; /* tells one pass from the next on this thread */
} rlg_glib_pass;

/* The innermost such pass on this thread; NULL outside any. */
RLG_INTERNAL extern _Thread_local const rlg_glib_pass *rlg_current_glib_pass;

/* The context an attachment is preparing, querying or checking on this
   thread (GLib calls its sources' prepare and check from there); NULL
   otherwise. */
RLG_INTERNAL extern _Thread_local GMainContext *rlg_context_polled_by_attachment;

#endif /* RL_GLIB_BOTH_WAYS_H */
