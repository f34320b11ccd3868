/*
 * rl_glib_context.c: a GLib main context driven by our run loop.
 *
 * GLib lets another loop run a context by splitting one iteration of
 * g_main_context_iteration in four: prepare, query (which descriptors to poll
 * and for how long), the poll itself, then check and dispatch. Here the poll
 * is our loop's own wait: each queried descriptor is a version-1 source
 * watching it in the loop's wait set, and the queried timeout is one timer.
 * An iteration (check and dispatch what is ready, then prepare and query the
 * next one) runs before the loop sleeps and whenever one of those sources or
 * that timer fires.
 */
#define _GNU_SOURCE
#include "CRunLoopGLib.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One descriptor GLib polls, watched by a version-1 source of the loop. The
   source's info; freed by the source's release. */
typedef struct {
    int fd;
    dev_t dev; /* which file `fd` named when the watch was made */
    ino_t ino;
    RLOptionFlags want; /* union of the GLib events asked for, this iteration */
    bool seen;          /* queried in this iteration */
    RLRunLoopSourceRef source;
    struct __RLGLibContext *owner;
} rlg_watch;

struct __RLGLibContext {
    GMainContext *context;
    RLRunLoopRef rl;
    char *mode;
    RLRunLoopObserverRef observer;
    RLRunLoopTimerRef timer;
    RLRunLoopSourceRef dispatcher; /* version 0, signalled by the timer */
    GPollFD *fds;                  /* what the last query asked to poll */
    gint nfds, fds_capacity;
    gint max_priority;
    bool prepared; /* prepared and queried; check not done yet */
    rlg_watch **watches;
    size_t nwatches, watches_capacity;
    int busy; /* our callouts in progress (nested runs nest them) */
    bool detached;
};

/* The timer's date when GLib has no timeout: far enough never to fire, near
   enough not to be clamped. */
#define RLG_FAR_AWAY       3.0e8
#define RLG_OBSERVER_ORDER 0x7FFFFFF0L /* after the application's observers */

/* ---- watches ------------------------------------------------------------- */

static int rlg_watch_fd(void *info) {
    return ((rlg_watch *)info)->fd;
}
static void rlg_watch_free(const void *info) {
    free((void *)info);
}
static void rlg_iterate(struct __RLGLibContext *g);
static void rlg_watch_fired(void *info) {
    rlg_watch *w = info;
    rlg_iterate(w->owner);
}

static RLOptionFlags rlg_events_from_glib(gushort events) {
    RLOptionFlags e = 0;
    if (events & (G_IO_IN | G_IO_PRI)) e |= kRLRunLoopSourceReadable;
    if (events & G_IO_OUT) e |= kRLRunLoopSourceWritable;
    return e;
}

static void rlg_file_identity(int fd, dev_t *dev, ino_t *ino) {
    struct stat st;
    if (fstat(fd, &st) == 0) {
        *dev = st.st_dev;
        *ino = st.st_ino;
    } else {
        *dev = 0;
        *ino = 0;
    }
}

static void rlg_watch_destroy(rlg_watch *w) {
    RLRunLoopSourceRef s = w->source;
    RLRunLoopSourceInvalidate(s); /* removes it from every mode */
    RLRelease(s);                 /* its release frees w */
}

static rlg_watch *rlg_watch_create(struct __RLGLibContext *g, int fd, dev_t dev, ino_t ino) {
    if (g->nwatches == g->watches_capacity) {
        size_t cap = g->watches_capacity ? g->watches_capacity * 2 : 8;
        g->watches = g_renew(rlg_watch *, g->watches, cap);
        g->watches_capacity = cap;
    }
    rlg_watch *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->fd = fd;
    w->dev = dev;
    w->ino = ino;
    w->owner = g;
    RLRunLoopSourceContext1 ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.version = 1;
    ctx.info = w;
    ctx.release = rlg_watch_free;
    ctx.getFileDescriptor = rlg_watch_fd;
    ctx.perform = rlg_watch_fired;
    w->source = RLRunLoopSourceCreate(0, (RLRunLoopSourceContext *)&ctx);
    if (!w->source) {
        free(w);
        return NULL;
    }
    RLRunLoopSourceSetWatchedEvents(w->source, 0);
    RLRunLoopAddSource(g->rl, w->source, g->mode);
    g->watches[g->nwatches++] = w;
    return w;
}

/* Makes the loop's watches match the descriptors of the last query: one
   source per descriptor (GLib may list one descriptor several times), made
   or dropped only when the set changes; a number that now names another
   file gets a new source. */
static void rlg_sync_watches(struct __RLGLibContext *g) {
    for (size_t i = 0; i < g->nwatches; i++) {
        g->watches[i]->seen = false;
        g->watches[i]->want = 0;
    }
    for (gint i = 0; i < g->nfds; i++) {
        int fd = g->fds[i].fd;
        if (fd < 0) continue;
        rlg_watch *w = NULL;
        size_t at = 0;
        for (size_t j = 0; j < g->nwatches && !w; j++)
            if (g->watches[j]->fd == fd) {
                w = g->watches[j];
                at = j;
            }
        if (!w || !w->seen) {
            dev_t dev;
            ino_t ino;
            rlg_file_identity(fd, &dev, &ino);
            if (w && (w->dev != dev || w->ino != ino)) {
                /* The number was closed and reused: the old source no longer
                   watches anything; the new file needs a new source. */
                g->watches[at] = g->watches[--g->nwatches];
                rlg_watch_destroy(w);
                w = NULL;
            }
            if (!w) w = rlg_watch_create(g, fd, dev, ino);
            if (!w) continue; /* out of memory: GLib will see it next time */
        }
        w->seen = true;
        w->want |= rlg_events_from_glib(g->fds[i].events);
    }
    size_t kept = 0;
    for (size_t i = 0; i < g->nwatches; i++) {
        rlg_watch *w = g->watches[i];
        if (!w->seen) {
            rlg_watch_destroy(w);
            continue;
        }
        RLRunLoopSourceSetWatchedEvents(w->source, w->want); /* no system call when unchanged */
        g->watches[kept++] = w;
    }
    g->nwatches = kept;
}

static void rlg_drop_watches(struct __RLGLibContext *g) {
    for (size_t i = 0; i < g->nwatches; i++) rlg_watch_destroy(g->watches[i]);
    g->nwatches = 0;
}

/* ---- one iteration ------------------------------------------------------- */

static void rlg_set_timer(struct __RLGLibContext *g, gint timeout_ms) {
    RLAbsoluteTime now = RLAbsoluteTimeGetCurrent();
    if (timeout_ms < 0) {
        /* Already far away: leave it (no re-arm). */
        if (RLRunLoopTimerGetNextFireDate(g->timer) > now + RLG_FAR_AWAY / 2) return;
        RLRunLoopTimerSetNextFireDate(g->timer, now + RLG_FAR_AWAY);
    } else {
        RLRunLoopTimerSetNextFireDate(g->timer, now + timeout_ms / 1000.0);
    }
}

static void rlg_prepare(struct __RLGLibContext *g) {
    gint timeout = -1;
    g_main_context_prepare(g->context, &g->max_priority);
    for (;;) {
        gint n = g_main_context_query(g->context, g->max_priority, &timeout, g->fds, g->fds_capacity);
        if (n <= g->fds_capacity) {
            g->nfds = n;
            break;
        }
        g->fds = g_renew(GPollFD, g->fds, n);
        g->fds_capacity = n;
    }
    g->prepared = true;
    rlg_sync_watches(g);
    rlg_set_timer(g, timeout);
}

/* What GLib's own poll() would have answered, without waiting: our wait only
   said that one of the descriptors (or the timeout) is ready. */
static void rlg_poll_now(struct __RLGLibContext *g) {
    for (gint i = 0; i < g->nfds; i++) g->fds[i].revents = 0;
    if (g->nfds == 0) return;
    while (g_poll(g->fds, (guint)g->nfds, 0) < 0 && errno == EINTR) {}
}

static void rlg_free(struct __RLGLibContext *g) {
    g_main_context_release(g->context);
    g_main_context_unref(g->context);
    g_free(g->fds);
    g_free(g->watches);
    free(g->mode);
    free(g);
}

static void rlg_iterate(struct __RLGLibContext *g) {
    if (g->detached) return;
    g->busy++;
    if (g->prepared) {
        g->prepared = false; /* a nested run inside dispatch prepares afresh */
        rlg_poll_now(g);
        if (g_main_context_check(g->context, g->max_priority, g->fds, g->nfds)) g_main_context_dispatch(g->context);
    }
    if (!g->detached && !g->prepared) rlg_prepare(g);
    if (--g->busy == 0 && g->detached) rlg_free(g);
}

/* Before the loop sleeps (and before sources, for runs that never sleep):
   prepare and query afresh, so that GLib sources attached or changed by this
   pass's callouts are in the wait. Nothing was polled since the last query,
   so preparing again loses nothing (GLib allows it). */
static void rlg_observe(RLRunLoopObserverRef o, RLRunLoopActivity activity, void *info) {
    (void)o;
    struct __RLGLibContext *g = info;
    if (g->detached || (activity == kRLRunLoopBeforeSources && g->prepared)) return;
    g->busy++;
    rlg_prepare(g);
    if (--g->busy == 0 && g->detached) rlg_free(g);
}

/* GLib's timeout (or a source ready at prepare time: timeout 0) fell due.
   GLib's callbacks run from the dispatcher source rather than from this
   callout, so that they count as a handled source and so that a run nested
   in them can fire this timer again. */
static void rlg_timeout(RLRunLoopTimerRef t, void *info) {
    (void)t;
    struct __RLGLibContext *g = info;
    RLRunLoopSourceSignal(g->dispatcher);
}

static void rlg_dispatch_perform(void *info) {
    rlg_iterate(info);
}

/* ---- attach and detach --------------------------------------------------- */

RLGLibContextRef RLGLibContextAttach(GMainContext *context, RLRunLoopRef rl, RLRunLoopMode mode) {
    if (!rl || !mode || !*mode || rl != RLRunLoopGetCurrent()) return NULL;
    if (!context) context = g_main_context_default();
    struct __RLGLibContext *g = calloc(1, sizeof *g);
    char *mode_copy = strdup(mode);
    if (!g || !mode_copy || !g_main_context_acquire(context)) {
        free(g);
        free(mode_copy);
        return NULL;
    }
    g->context = g_main_context_ref(context);
    g->rl = rl;
    g->mode = mode_copy;
    RLRunLoopObserverContext octx = {0, g, NULL, NULL, NULL};
    g->observer = RLRunLoopObserverCreate(kRLRunLoopBeforeWaiting | kRLRunLoopBeforeSources, true, RLG_OBSERVER_ORDER,
                                          rlg_observe, &octx);
    RLRunLoopTimerContext tctx = {0, g, NULL, NULL, NULL};
    g->timer = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + RLG_FAR_AWAY, RLG_FAR_AWAY, 0, 0, rlg_timeout, &tctx);
    RLRunLoopSourceContext sctx;
    memset(&sctx, 0, sizeof sctx);
    sctx.info = g;
    sctx.perform = rlg_dispatch_perform;
    g->dispatcher = RLRunLoopSourceCreate(0, &sctx);
    if (!g->observer || !g->timer || !g->dispatcher) {
        RLRelease(g->observer);
        RLRelease(g->timer);
        RLRelease(g->dispatcher);
        rlg_free(g);
        return NULL;
    }
    RLRunLoopAddObserver(rl, g->observer, mode);
    RLRunLoopAddTimer(rl, g->timer, mode);
    RLRunLoopAddSource(rl, g->dispatcher, mode);
    return g;
}

void RLGLibContextDetach(RLGLibContextRef g) {
    if (!g || g->detached || g->rl != RLRunLoopGetCurrent()) return;
    g->detached = true;
    RLRunLoopObserverInvalidate(g->observer);
    RLRelease(g->observer);
    RLRunLoopTimerInvalidate(g->timer);
    RLRelease(g->timer);
    RLRunLoopSourceInvalidate(g->dispatcher);
    RLRelease(g->dispatcher);
    rlg_drop_watches(g);
    if (g->busy == 0) rlg_free(g);
}

GMainContext *RLGLibContextGetContext(RLGLibContextRef g) {
    return g ? g->context : NULL;
}
