/*
 * rl_glib_source.c: our run loop driven by a GLib main context, as one
 * GSource polling the loop's embedding descriptor.
 */
#define _GNU_SOURCE
#include "CRunLoopGLib.h"
#include <CRunLoopEmbed.h>

#include "rl_glib_both_ways.h"

#include <stdlib.h>
#include <string.h>

_Thread_local const rlg_glib_pass *rlg_current_glib_pass;
_Thread_local GMainContext *rlg_context_polled_by_attachment;
static _Thread_local unsigned long rlg_passes_begun;

typedef struct {
    GSource base;
    RLRunLoopRef rl;
    char *mode;
    gpointer tag; /* the embedding descriptor, in GLib's poll set */
    bool polled;  /* tag asks for G_IO_IN (modifying it wakes GLib: only on change) */
} rlg_source;

/* Whether this thread may run the loop from here: it is the loop's thread,
   and this is not an iteration of the context made by an attachment to the
   same loop (the loop is running there already, and its descriptor cannot
   be in its own wait). */
static bool rlg_source_may_run_loop(rlg_source *s) {
    return RLRunLoopGetCurrent() == s->rl && rlg_context_polled_by_attachment != g_source_get_context(&s->base);
}

/* GLib asks before it sleeps: aim the descriptor at our mode, and sleep no
   longer than our next timer (the descriptor would wake GLib anyway; the
   timeout also covers a loop that could make no timerfd). */
static gboolean rlg_source_prepare(GSource *base, gint *timeout) {
    rlg_source *s = (rlg_source *)base;
    int ms = -1;
    if (!rlg_source_may_run_loop(s)) {
        /* Stop polling the descriptor: nothing would run it here, and on
           another thread it would keep GLib awake. */
        if (s->polled) g_source_modify_unix_fd(base, s->tag, 0);
        s->polled = false;
        *timeout = -1;
        return FALSE;
    }
    if (!s->polled) g_source_modify_unix_fd(base, s->tag, G_IO_IN);
    s->polled = true;
    bool ready = RLRunLoopEmbedPrepare(s->rl, s->mode, &ms);
    *timeout = ms;
    return ready;
}

static gboolean rlg_source_check(GSource *base) {
    rlg_source *s = (rlg_source *)base;
    return rlg_source_may_run_loop(s) && (g_source_query_unix_fd(base, s->tag) & G_IO_IN) != 0;
}

/* One pass that never blocks: everything due in the mode runs. */
static gboolean rlg_source_dispatch(GSource *base, GSourceFunc callback, gpointer data) {
    (void)callback;
    (void)data;
    rlg_source *s = (rlg_source *)base;
    /* An attachment of this context to the loop leaves the context to GLib
       in this pass (GLib is dispatching it): say which pass it is. */
    rlg_glib_pass pass = {g_source_get_context(base), s->rl, s->mode, ++rlg_passes_begun};
    const rlg_glib_pass *outer = rlg_current_glib_pass;
    rlg_current_glib_pass = &pass;
    RLRunLoopRunInMode(s->mode, 0, false);
    rlg_current_glib_pass = outer;
    return G_SOURCE_CONTINUE;
}

static void rlg_source_finalize(GSource *base) {
    rlg_source *s = (rlg_source *)base;
    RLRunLoopEmbedCancel(s->rl); /* does nothing off the loop's thread */
    RLRelease(s->rl);
    free(s->mode);
}

static GSourceFuncs rlg_source_funcs = {
    .prepare = rlg_source_prepare,
    .check = rlg_source_check,
    .dispatch = rlg_source_dispatch,
    .finalize = rlg_source_finalize,
};

GSource *RLGLibSourceCreate(RLRunLoopRef rl, RLRunLoopMode mode) {
    if (!rl || !mode || !*mode || strcmp(mode, kRLRunLoopCommonModes) == 0) return NULL;
    int fd = RLRunLoopEmbedGetFD(rl);
    char *mode_copy = strdup(mode);
    if (fd < 0 || !mode_copy) {
        free(mode_copy);
        return NULL;
    }
    GSource *base = g_source_new(&rlg_source_funcs, sizeof(rlg_source));
    rlg_source *s = (rlg_source *)base;
    s->rl = (RLRunLoopRef)RLRetain(rl);
    s->mode = mode_copy;
    s->tag = g_source_add_unix_fd(base, fd, G_IO_IN);
    s->polled = true;
    g_source_set_name(base, "CRunLoop");
    /* A callout of ours may run a nested GLib loop (a modal dialog): our
       loop keeps running inside it, as nested runs of our loop do. */
    g_source_set_can_recurse(base, TRUE);
    return base;
}
