/*
 * rl_glib_context.c: a GLib main context driven by our run loop.
 *
 * GLib lets another loop run a context by splitting one iteration of
 * g_main_context_iteration in four: prepare, query (which descriptors to poll
 * and for how long), the poll itself, then check and dispatch. Here the poll
 * is our loop's own wait: each queried descriptor is a version-1 source
 * watching it in the loop's wait set, and the queried timeout is one timer.
 * The wait is prepared afresh wherever a pass may go on to sleep or end
 * (BeforeSources, BeforeWaiting, Exit), so that what our callouts did to
 * GLib's sources is in it. When a watch or the timer fires, one iteration
 * that does not wait runs: prepare, query, poll without waiting, check and
 * dispatch, as g_main_context_iteration(context, FALSE) does. A check always
 * follows its own query: anything may have iterated the context since the
 * wait was prepared (a nested GLib loop, GLib's own loop hosting ours).
 */
#define _GNU_SOURCE
#include "CRunLoopGLib.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rl_glib_both_ways.h"

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
    RLRunLoopObserverRef observer;       /* BeforeSources, BeforeWaiting, Exit: after the application's */
    RLRunLoopObserverRef entry_observer; /* Entry: before the application's */
    RLRunLoopTimerRef timer;
    RLRunLoopSourceRef dispatcher; /* version 0: a GLib source is ready */
    GPollFD *fds;                  /* what the last query asked to poll */
    gint nfds, fds_capacity;
    gint max_priority;
    rlg_watch **watches;
    size_t nwatches, watches_capacity;
    bool parked; /* watches disarmed, timer away: GLib iterates the context */
    /* Runs of the loop in `mode` in progress, as seen entering, and which
       of them (bit n: the run at level n) are passes GLib runs through a
       source on the same context, where the context is GLib's to iterate. */
    unsigned run_level;
    uint64_t glib_passes;
    unsigned long last_pass_seen;
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
        /* A descriptor listed with no events is not polled (a source that
           stands aside, such as our own loop's hosting source). */
        if (fd < 0 || rlg_events_from_glib(g->fds[i].events) == 0) continue;
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

/* ---- preparing the wait ------------------------------------------------- */

static void rlg_set_timer(struct __RLGLibContext *g, gint timeout_ms) {
    RLAbsoluteTime now = RLAbsoluteTimeGetCurrent();
    RLAbsoluteTime current = RLRunLoopTimerGetNextFireDate(g->timer);
    if (timeout_ms < 0) {
        /* Already far away: leave it (no re-arm). */
        if (current > now + RLG_FAR_AWAY / 2) return;
        RLRunLoopTimerSetNextFireDate(g->timer, now + RLG_FAR_AWAY);
        return;
    }
    /* GLib rounds its timeout up to the millisecond, so a date set from an
       earlier query of the same deadline differs by less than one: keep it
       (both are at or after the deadline) rather than move the timer. */
    RLAbsoluteTime date = now + timeout_ms / 1000.0;
    if (fabs(current - date) < 0.001) return;
    RLRunLoopTimerSetNextFireDate(g->timer, date);
}

/* Prepares and queries the context (sources attached to it by our loop's
   hosting source keep out of it). Returns whether a source is ready now. */
static bool rlg_prepare_and_query(struct __RLGLibContext *g, gint *timeout) {
    GMainContext *outer = rlg_context_polled_by_attachment;
    rlg_context_polled_by_attachment = g->context;
    bool ready = g_main_context_prepare(g->context, &g->max_priority);
    for (;;) {
        gint n = g_main_context_query(g->context, g->max_priority, timeout, g->fds, g->fds_capacity);
        if (n <= g->fds_capacity) {
            g->nfds = n;
            break;
        }
        g->fds = g_renew(GPollFD, g->fds, n);
        g->fds_capacity = n;
    }
    rlg_context_polled_by_attachment = outer;
    return ready || *timeout == 0;
}

/* Makes the loop's wait stand for GLib's poll: the watches and the timer
   from a fresh query. A source ready now signals the dispatcher, which runs
   it in this pass (from BeforeSources) or the next. Returns whether one is. */
static bool rlg_prepare_wait(struct __RLGLibContext *g) {
    gint timeout = -1;
    bool ready = rlg_prepare_and_query(g, &timeout);
    rlg_sync_watches(g);
    g->parked = false;
    rlg_set_timer(g, ready ? -1 : timeout);
    if (ready) RLRunLoopSourceSignal(g->dispatcher);
    return ready;
}

/* GLib iterates the context itself for a while: nothing of ours may wake the
   loop for it (a descriptor GLib stops polling could stay readable). */
static void rlg_park(struct __RLGLibContext *g) {
    if (g->parked) return;
    for (size_t i = 0; i < g->nwatches; i++) RLRunLoopSourceSetWatchedEvents(g->watches[i]->source, 0);
    rlg_set_timer(g, -1);
    g->parked = true;
}

/* ---- one iteration ------------------------------------------------------- */

/* What GLib's own poll() would have answered, without waiting: our wait only
   said that one of the descriptors (or the timeout) is ready. */
static void rlg_poll_now(struct __RLGLibContext *g) {
    for (gint i = 0; i < g->nfds; i++) g->fds[i].revents = 0;
    if (g->nfds == 0) return;
    while (g_poll(g->fds, (guint)g->nfds, 0) < 0 && errno == EINTR) {}
}

static bool rlg_check(struct __RLGLibContext *g) {
    GMainContext *outer = rlg_context_polled_by_attachment;
    rlg_context_polled_by_attachment = g->context;
    bool ready = g_main_context_check(g->context, g->max_priority, g->fds, g->nfds);
    rlg_context_polled_by_attachment = outer;
    return ready;
}

static void rlg_free(struct __RLGLibContext *g) {
    g_main_context_release(g->context);
    g_main_context_unref(g->context);
    g_free(g->fds);
    g_free(g->watches);
    free(g->mode);
    free(g);
}

static void rlg_begin(struct __RLGLibContext *g) {
    g->busy++;
}
static void rlg_end(struct __RLGLibContext *g) {
    if (--g->busy == 0 && g->detached) rlg_free(g);
}

/* ---- whose turn it is ---------------------------------------------------- */

#define RLG_LEVELS 64 /* deeper runs count as the loop's own */

static bool rlg_level_is_glib_pass(const struct __RLGLibContext *g, unsigned level) {
    return level < RLG_LEVELS && ((g->glib_passes >> level) & 1u);
}

/* The innermost run is a pass GLib runs through a source while it dispatches
   the context: the context is GLib's, not ours, to iterate. */
static bool rlg_context_is_glibs(const struct __RLGLibContext *g) {
    return rlg_level_is_glib_pass(g, g->run_level);
}

static void rlg_mark_level(struct __RLGLibContext *g, unsigned level, bool glib_pass) {
    if (level >= RLG_LEVELS) return;
    uint64_t bit = (uint64_t)1 << level;
    g->glib_passes = glib_pass ? g->glib_passes | bit : g->glib_passes & ~bit;
}

/* Whether the run entering now is the pass GLib runs through a source on
   our context: the first run seen entering since that pass began is the pass
   itself when the pass's mode holds this attachment, and otherwise a run
   nested in one of its callouts (which is the loop's own). */
static bool rlg_entering_glib_pass(struct __RLGLibContext *g) {
    const rlg_glib_pass *p = rlg_current_glib_pass;
    if (!p || p->rl != g->rl || p->context != g->context || p->serial == g->last_pass_seen) return false;
    g->last_pass_seen = p->serial;
    return RLRunLoopContainsObserver(g->rl, g->entry_observer, p->mode);
}

static void rlg_run_entered(RLRunLoopObserverRef o, RLRunLoopActivity activity, void *info) {
    (void)o;
    (void)activity;
    struct __RLGLibContext *g = info;
    if (g->detached) return;
    g->run_level++;
    bool glib_pass = rlg_entering_glib_pass(g);
    rlg_mark_level(g, g->run_level, glib_pass);
    if (glib_pass) rlg_park(g);
}

/* A run ends. Leaving a pass GLib ran, the context stays GLib's (we are back
   in its dispatch). Otherwise the wait is prepared for what comes next: the
   outer run's next pass, or a host's sleep (RLRunLoopEmbedPrepare), which
   then sees GLib's sources attached by this run's callouts; back inside a
   pass GLib runs, the loop lets go of the context again. */
static void rlg_run_exiting(struct __RLGLibContext *g) {
    bool leaving_glib_pass = rlg_context_is_glibs(g);
    rlg_mark_level(g, g->run_level, false);
    if (g->run_level > 0) g->run_level--;
    if (leaving_glib_pass) return;
    if (rlg_context_is_glibs(g)) rlg_park(g);
    else rlg_prepare_wait(g);
}

/* ---- the loop's callouts ------------------------------------------------- */

/* One iteration that does not wait, as g_main_context_iteration(context,
   FALSE): a watched descriptor or GLib's timeout is ready, or a source was
   at prepare time. */
static void rlg_iterate(struct __RLGLibContext *g) {
    if (g->detached || rlg_context_is_glibs(g)) return;
    rlg_begin(g);
    gint timeout = -1;
    rlg_prepare_and_query(g, &timeout);
    rlg_poll_now(g);
    if (rlg_check(g)) g_main_context_dispatch(g->context);
    rlg_end(g);
}

/* Before sources (for runs that never sleep), before the loop sleeps, and
   when a run ends: prepare the wait afresh, so that GLib sources attached or
   changed by callouts since are in it. Nothing was polled since the last
   query, so preparing again loses nothing (GLib allows it). A source ready
   now is dispatched by the dispatcher: from BeforeSources in this very pass;
   from BeforeWaiting after a wake-up instead of a sleep. */
static void rlg_observe(RLRunLoopObserverRef o, RLRunLoopActivity activity, void *info) {
    (void)o;
    struct __RLGLibContext *g = info;
    if (g->detached) return;
    rlg_begin(g);
    if (activity == kRLRunLoopExit) rlg_run_exiting(g);
    else if (!rlg_context_is_glibs(g) && rlg_prepare_wait(g) && activity == kRLRunLoopBeforeWaiting)
        RLRunLoopWakeUp(g->rl);
    rlg_end(g);
}

/* GLib's timeout fell due. GLib's callbacks run from the dispatcher source
   rather than from this callout, so that they count as a handled source and
   so that a run nested in them can fire this timer again. */
static void rlg_timeout(RLRunLoopTimerRef t, void *info) {
    (void)t;
    struct __RLGLibContext *g = info;
    RLRunLoopSourceSignal(g->dispatcher);
}

static void rlg_dispatch_perform(void *info) {
    rlg_iterate(info);
}

/* ---- attach and detach --------------------------------------------------- */

/* Attached from a callout of a pass GLib runs through a source on the same
   context: that pass, entered before we watched, is GLib's too. */
static void rlg_attached_inside_glib_pass(struct __RLGLibContext *g) {
    const rlg_glib_pass *p = rlg_current_glib_pass;
    if (!p || p->rl != g->rl || p->context != g->context) return;
    g->last_pass_seen = p->serial;
    if (RLRunLoopContainsObserver(g->rl, g->entry_observer, p->mode)) rlg_mark_level(g, 0, true);
}

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
    g->parked = true; /* nothing armed yet */
    RLRunLoopObserverContext octx = {0, g, NULL, NULL, NULL};
    g->observer = RLRunLoopObserverCreate(kRLRunLoopBeforeSources | kRLRunLoopBeforeWaiting | kRLRunLoopExit, true,
                                          RLG_OBSERVER_ORDER, rlg_observe, &octx);
    g->entry_observer = RLRunLoopObserverCreate(kRLRunLoopEntry, true, LONG_MIN, rlg_run_entered, &octx);
    RLRunLoopTimerContext tctx = {0, g, NULL, NULL, NULL};
    g->timer = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + RLG_FAR_AWAY, RLG_FAR_AWAY, 0, 0, rlg_timeout, &tctx);
    RLRunLoopSourceContext sctx;
    memset(&sctx, 0, sizeof sctx);
    sctx.info = g;
    sctx.perform = rlg_dispatch_perform;
    g->dispatcher = RLRunLoopSourceCreate(0, &sctx);
    if (!g->observer || !g->entry_observer || !g->timer || !g->dispatcher) {
        RLRelease(g->observer);
        RLRelease(g->entry_observer);
        RLRelease(g->timer);
        RLRelease(g->dispatcher);
        rlg_free(g);
        return NULL;
    }
    RLRunLoopAddObserver(rl, g->entry_observer, mode);
    RLRunLoopAddObserver(rl, g->observer, mode);
    RLRunLoopAddTimer(rl, g->timer, mode);
    RLRunLoopAddSource(rl, g->dispatcher, mode);
    rlg_attached_inside_glib_pass(g);
    return g;
}

void RLGLibContextDetach(RLGLibContextRef g) {
    if (!g || g->detached || g->rl != RLRunLoopGetCurrent()) return;
    g->detached = true;
    RLRunLoopObserverInvalidate(g->observer);
    RLRelease(g->observer);
    RLRunLoopObserverInvalidate(g->entry_observer);
    RLRelease(g->entry_observer);
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
