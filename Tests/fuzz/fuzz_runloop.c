/*
 * fuzz_runloop.c: a model-based fuzz target for the run loop (libFuzzer).
 *
 * Each input is decoded into a sequence of API calls on one loop: sources
 * (version 0), timers, observers, signals, queued functions, nested runs with
 * a zero or tiny timeout, stop, wake-up, common modes, and, when a callout
 * runs, more calls from inside it (the input says how many). A small model
 * mirrors what the calls should have done and every callout and every run
 * result is checked against it:
 *
 *  - a source performs only if it is valid, in the running mode, and was
 *    signalled since its last perform;
 *  - a timer fires only if valid and in the running mode, never before its
 *    date, a one-shot one at most once;
 *  - an observer is called only for its activities, valid, in the running
 *    mode, a non-repeating one once, observers of one activity in `order`;
 *    the activities of each run follow CF's grammar (Entry, passes, Exit);
 *  - a run returns Finished only when the model says its mode was empty,
 *    HandledSource only with returnAfterSourceHandled and exactly one source
 *    performed by that run (which then must return HandledSource), Stopped
 *    only after a stop of that run;
 *  - queued functions run once, in a mode they were queued for, FIFO, and
 *    their release is called exactly once (dropped unrun only when the
 *    loop's thread exits);
 *  - at the end a polling drain of every mode must perform every signalled
 *    source, fire every past-due one-shot timer and run every queued
 *    function; schedule and cancel balance; every info is released (and
 *    ASan's leak check sees nothing left).
 *
 * A second loop (B, on its own thread, default mode only) takes items moved
 * to it, from the body or from any callout (removed from a mode of the main
 * loop, added to B; and back): while it is in B an item is never called on
 * the main loop, and B, run one polling pass at a time on request while the
 * main thread waits, calls only what the model says is in B. Timers and
 * observers belong to one loop at a time: adding one to the other loop while
 * it is still in one is ignored. Some items have a context with release but
 * no retain (ownership handed over): release must be called exactly once.
 *
 * The same bytes also drive the timer heap on its own (fz_heap): each pair
 * is an insert, removal, re-key, pop or collection, checked against a plain
 * array and followed by the heap's verifier.
 *
 * Every input runs on fresh threads, so its loops are torn down (and
 * checked) at the end, and inputs do not share modes. Built by
 * Tests/fuzz/Makefile with libFuzzer; Tests/c/robustness/test_fuzz_corpus.c
 * includes this file to replay the corpus without libFuzzer. On a broken
 * invariant it prints the line and aborts.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <CRunLoop.h>
#include "../../Sources/CRunLoop/core/rl_timer_heap.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_NMODES   3 /* default, "A", "B" */
#define FZ_COMMON   3 /* index meaning kRLRunLoopCommonModes */
#define FZ_NSRC     6
#define FZ_NTIMER   6
#define FZ_NOBS     4
#define FZ_NWORK    96
#define FZ_MAXDEPTH 4
#define FZ_MAXOPS   400
#define FZ_MAXRUNS  40
#define FZ_DISP     64

#define FZ_CHECK(c)                                                                                                    \
    do {                                                                                                               \
        if (!(c)) fz_fail(#c, __LINE__);                                                                               \
    } while (0)

static void fz_fail(const char *what, int line) {
    fprintf(stderr, "fuzz_runloop.c:%d: invariant broken: %s\n", line, what);
    fflush(stderr);
    abort();
}

static const char *const fz_mode_names[4] = {"kCFRunLoopDefaultMode", "A", "B", "kCFRunLoopCommonModes"};

/* What the model knows of an item. `member` has one bit per mode of the main
   loop, and FZ_B_BIT for loop B's default mode. */
#define FZ_B_BIT  (1u << 8)
#define FZ_A_MASK (FZ_B_BIT - 1)
typedef struct {
    int made;     /* created */
    int ref_gone; /* our reference released: no more calls on it */
    int valid;
    unsigned member;
    int in_common;
    int one_loop; /* timers and observers: in one loop at a time */
    int owned;    /* context has release but no retain: released once */
    int retains, releases;
    /* sources */
    int signalled, performs, schedules, cancels, expected_schedules;
    RLIndex order;
    /* timers */
    double not_before; /* a lower bound of the next fire date */
    double interval;
    int fires;
    /* observers */
    RLOptionFlags activities;
    int repeats, calls;
    void *ref;
} fz_item;

typedef struct {
    int mode;
    int rash; /* returnAfterSourceHandled */
    int stop_requested;
    int performed; /* sources performed by this run itself */
    unsigned long last_activity;
    int nonempty_at_entry;
    int nonempty_at_exit;
} fz_frame;

typedef struct {
    int target; /* 0..2, or FZ_COMMON */
    int seq;
    unsigned common_at_queue;
    unsigned nest_epoch;
    int ran, released, must_drop;
} fz_work;

typedef struct {
    unsigned long activity;
    RLIndex last_order;
} fz_dispatch;

static struct {
    const uint8_t *data;
    size_t size, pos;
    int ops, runs;
    int inert;     /* callouts do nothing (final drain) */
    int body_done; /* the loop's thread is exiting */
    int callout_depth;
    int in_block;        /* queued functions on the stack */
    unsigned nest_epoch; /* runs started from inside a queued function */
    unsigned common;     /* modes in the common set */
    RLRunLoopRef rl;
    RLRunLoopRef rl_b;         /* the second loop */
    int on_b;                  /* a callout of loop B is running (on B's thread) */
    int in_timer, in_observer; /* timer / observer callouts on the stack */
    fz_item src[FZ_NSRC], tm[FZ_NTIMER], obs[FZ_NOBS];
    fz_work work[FZ_NWORK];
    int nwork;
    fz_frame frames[FZ_MAXDEPTH + 1];
    int depth;
    fz_dispatch disp[FZ_DISP];
    int ndisp;
    RLRunLoopObserverRef first_checker, last_checker;
    int checker_calls;
} fz;

/* Totals over every input, for the replay's report. */
static struct {
    long inputs, ops, runs, performs, fires, observed, work_ran, results[5], b_moves, b_passes, b_callouts,
        runs_in_timer, runs_in_observer;
} fz_stats;

static unsigned fz_bit(int m) {
    return 1u << m;
}

static int fz_byte(void) {
    if (fz.pos >= fz.size) return -1;
    return fz.data[fz.pos++];
}
static int fz_arg(void) {
    int b = fz_byte();
    return b < 0 ? 0 : b;
}

static double fz_now(void) {
    return RLAbsoluteTimeGetCurrent();
}

/* ---- the model's view of membership ---- */

/* Whether a timer or observer is held by the main loop: by a mode or the
   common set (a source may be in both loops). */
static int fz_in_a(const fz_item *it) {
    return (it->member & FZ_A_MASK) || it->in_common;
}

/* Returns the bits newly set. */
static unsigned fz_add(fz_item *it, int m) {
    if (!it->valid) return 0;
    if (it->one_loop && (it->member & FZ_B_BIT)) return 0; /* B holds it */
    unsigned before = it->member;
    if (m == FZ_COMMON) {
        if (!it->in_common) {
            it->in_common = 1;
            it->member |= fz.common;
        }
    } else {
        it->member |= fz_bit(m);
    }
    return it->member & ~before;
}

static unsigned fz_add_b(fz_item *it) {
    if (!it->valid || (it->one_loop && fz_in_a(it))) return 0;
    unsigned before = it->member;
    it->member |= FZ_B_BIT;
    return it->member & ~before;
}

static void fz_remove(fz_item *it, int m) {
    if (m == FZ_COMMON) {
        if (it->in_common) {
            it->in_common = 0;
            it->member &= ~fz.common;
        }
    } else {
        it->member &= ~fz_bit(m);
    }
}

static void fz_invalidate(fz_item *it) {
    it->valid = 0;
    it->member = 0;
    it->in_common = 0;
    it->signalled = 0;
}

static int fz_popcount(unsigned v) {
    int n = 0;
    for (; v; v &= v - 1) n++;
    return n;
}

/* Whether the mode certainly holds something that keeps a run going. */
static int fz_nonempty(int m) {
    for (int i = 0; i < FZ_NSRC; i++)
        if (fz.src[i].valid && (fz.src[i].member & fz_bit(m))) return 1;
    for (int i = 0; i < FZ_NTIMER; i++)
        if (fz.tm[i].valid && (fz.tm[i].member & fz_bit(m))) return 1;
    /* A batch of queued functions being run is out of the queue: count
       queued work only when none is running. */
    if (fz.in_block == 0)
        for (int i = 0; i < fz.nwork; i++) {
            fz_work *w = &fz.work[i];
            if (w->ran || w->released) continue;
            if (w->target == m || (w->target == FZ_COMMON && (fz.common & fz_bit(m)))) return 1;
        }
    return 0;
}

static fz_frame *fz_top(void) {
    FZ_CHECK(fz.depth > 0);
    return &fz.frames[fz.depth - 1];
}

/* ---- callbacks ---- */

static void fz_ops_from_callout(void);

static const void *fz_retain(const void *info) {
    ((fz_item *)info)->retains++;
    return info;
}
static void fz_release(const void *info) {
    fz_item *it = (fz_item *)info;
    it->releases++;
    FZ_CHECK(it->releases <= it->retains + it->owned);
}

static int fz_mode_index(RLRunLoopMode mode) {
    for (int m = 0; m < FZ_NMODES; m++)
        if (strcmp(mode, fz_mode_names[m]) == 0) return m;
    return -1;
}

static void fz_schedule(void *info, RLRunLoopRef rl, RLRunLoopMode mode) {
    fz_item *it = info;
    FZ_CHECK(rl == fz.rl || rl == fz.rl_b);
    FZ_CHECK(fz_mode_index(mode) >= 0);
    it->schedules++;
}
static void fz_cancel(void *info, RLRunLoopRef rl, RLRunLoopMode mode) {
    fz_item *it = info;
    FZ_CHECK(rl == fz.rl || rl == fz.rl_b);
    FZ_CHECK(fz_mode_index(mode) >= 0);
    it->cancels++;
    FZ_CHECK(it->cancels <= it->schedules);
}

/* The membership bit a callout running now must find set. */
static unsigned fz_running_bit(void) {
    if (fz.on_b) fz_stats.b_callouts++;
    return fz.on_b ? FZ_B_BIT : fz_bit(fz_top()->mode);
}

static void fz_perform(void *info) {
    fz_item *it = info;
    FZ_CHECK(!fz.body_done);
    FZ_CHECK(it->valid);
    FZ_CHECK(it->signalled);
    FZ_CHECK(it->member & fz_running_bit());
    it->signalled = 0;
    it->performs++;
    fz_stats.performs++;
    if (!fz.on_b) {
        fz_frame *f = fz_top();
        f->performed++;
        if (f->rash) FZ_CHECK(f->performed == 1);
    }
    fz_ops_from_callout();
}

static void fz_timer_fired(RLRunLoopTimerRef t, void *info) {
    fz_item *it = info;
    FZ_CHECK(!fz.body_done);
    FZ_CHECK(t == it->ref);
    FZ_CHECK(it->valid);
    FZ_CHECK(it->member & fz_running_bit());
    FZ_CHECK(fz_now() >= it->not_before - 2e-6);
    it->fires++;
    fz_stats.fires++;
    if (it->interval <= 0) {
        FZ_CHECK(it->fires == 1);
        fz_invalidate(it); /* the loop invalidates it after this callout */
    } else {
        it->not_before += it->interval - 1e-6;
    }
    fz.in_timer++;
    fz_ops_from_callout();
    fz.in_timer--;
}

static void fz_observed(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    fz_item *it = info;
    FZ_CHECK(!fz.body_done);
    FZ_CHECK(o == it->ref);
    FZ_CHECK(it->valid);
    FZ_CHECK(it->member & fz_running_bit());
    FZ_CHECK(it->activities & (RLOptionFlags)a);
    if (!fz.on_b) { /* the grammar checkers watch the main loop only */
        FZ_CHECK(fz.ndisp > 0);
        fz_dispatch *d = &fz.disp[fz.ndisp - 1];
        FZ_CHECK(d->activity == (unsigned long)a);
        FZ_CHECK(it->order >= d->last_order);
        d->last_order = it->order;
    }
    it->calls++;
    fz_stats.observed++;
    if (!it->repeats) {
        FZ_CHECK(it->calls == 1);
        fz_invalidate(it);
    }
    fz.in_observer++;
    fz_ops_from_callout();
    fz.in_observer--;
}

/* The first observer of every activity: checks the run's grammar. */
static void fz_first_checker(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)info;
    fz_frame *f = fz_top();
    unsigned long last = f->last_activity;
    switch (a) {
    case kRLRunLoopEntry: FZ_CHECK(last == 0); break;
    case kRLRunLoopBeforeTimers:
        FZ_CHECK(last == kRLRunLoopEntry || last == kRLRunLoopBeforeSources || last == kRLRunLoopAfterWaiting);
        break;
    case kRLRunLoopBeforeSources: FZ_CHECK(last == kRLRunLoopBeforeTimers); break;
    case kRLRunLoopBeforeWaiting: FZ_CHECK(last == kRLRunLoopBeforeSources); break;
    case kRLRunLoopAfterWaiting: FZ_CHECK(last == kRLRunLoopBeforeWaiting); break;
    case kRLRunLoopExit:
        FZ_CHECK(last == kRLRunLoopEntry || last == kRLRunLoopBeforeSources || last == kRLRunLoopAfterWaiting);
        f->nonempty_at_exit = fz_nonempty(f->mode);
        break;
    default: FZ_CHECK(!"unknown activity");
    }
    f->last_activity = (unsigned long)a;
    char *cur = RLRunLoopCopyCurrentMode(fz.rl);
    FZ_CHECK(cur && strcmp(cur, fz_mode_names[f->mode]) == 0);
    free(cur);
    FZ_CHECK(fz.ndisp < FZ_DISP);
    fz.disp[fz.ndisp++] = (fz_dispatch){(unsigned long)a, -1000000};
    fz.checker_calls++;
}

static void fz_last_checker(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)info;
    FZ_CHECK(fz.ndisp > 0);
    FZ_CHECK(fz.disp[fz.ndisp - 1].activity == (unsigned long)a);
    fz.ndisp--;
}

static void fz_work_fn(void *info) {
    fz_work *w = info;
    fz_frame *f = fz_top();
    FZ_CHECK(!fz.body_done);
    FZ_CHECK(!w->ran && !w->released);
    int m = f->mode;
    FZ_CHECK(w->target == m || (w->target == FZ_COMMON && (fz.common & fz_bit(m))));
    /* FIFO: nothing queued earlier for this mode may still wait, unless a
       run nested in a queued function took newer work ahead of it (CF). */
    for (int j = 0; j < w->seq; j++) {
        fz_work *e = &fz.work[j];
        if (e->ran || e->released || e->nest_epoch != fz.nest_epoch) continue;
        FZ_CHECK(!(e->target == m || (e->target == FZ_COMMON && (e->common_at_queue & fz_bit(m)))));
    }
    w->ran = 1;
    fz_stats.work_ran++;
    fz.in_block++;
    fz_ops_from_callout();
    fz.in_block--;
}

static void fz_work_release(void *info) {
    fz_work *w = info;
    FZ_CHECK(!w->released);
    if (!w->ran) FZ_CHECK(fz.body_done); /* dropped only at thread exit */
    if (w->must_drop) FZ_CHECK(!w->ran);
    w->released = 1;
}

/* ---- operations ---- */

static int fz_run(int m, double seconds, int rash);

static fz_item *fz_pick(fz_item *items, int n, int b) {
    fz_item *it = &items[b % n];
    return it->made && !it->ref_gone ? it : NULL;
}

static void fz_make_source(int i, int b) {
    fz_item *it = &fz.src[i];
    if (it->made) return;
    RLRunLoopSourceContext c;
    memset(&c, 0, sizeof c);
    it->owned = i >= FZ_NSRC / 2 + 1;
    c.info = it;
    c.retain = it->owned ? NULL : fz_retain;
    c.release = fz_release;
    c.schedule = fz_schedule;
    c.cancel = fz_cancel;
    c.perform = fz_perform;
    it->order = (RLIndex)(b % 5) - 2;
    it->ref = RLRunLoopSourceCreate(it->order, &c);
    FZ_CHECK(it->ref != NULL);
    it->made = it->valid = 1;
    FZ_CHECK(it->retains == !it->owned);
}

static void fz_make_timer(int i, int b) {
    static const double offsets[8] = {-0.01, -0.001, 0, 0.0002, 0.0005, 0.001, 0.003, 5.0};
    static const double intervals[8] = {0, 0, 0, 0.0001, 0.0005, 1e-6, 0.002, 10};
    fz_item *it = &fz.tm[i];
    if (it->made) return;
    it->owned = i >= FZ_NTIMER / 2;
    it->one_loop = 1;
    RLRunLoopTimerContext c = {0, it, it->owned ? NULL : fz_retain, fz_release, NULL};
    double date = fz_now() + offsets[b & 7];
    it->interval = intervals[(b >> 3) & 7];
    it->not_before = date;
    it->ref = RLRunLoopTimerCreate(date, it->interval, 0, 0, fz_timer_fired, &c);
    FZ_CHECK(it->ref != NULL);
    it->made = it->valid = 1;
    FZ_CHECK(RLRunLoopTimerGetInterval(it->ref) >= it->interval);
    it->interval = RLRunLoopTimerGetInterval(it->ref);
}

static void fz_make_observer(int i, int b, int b2) {
    fz_item *it = &fz.obs[i];
    if (it->made) return;
    it->owned = i >= FZ_NOBS / 2;
    it->one_loop = 1;
    RLRunLoopObserverContext c = {0, it, it->owned ? NULL : fz_retain, fz_release, NULL};
    it->activities = (RLOptionFlags)((b & 7) | ((b & 0x38) << 2));
    it->repeats = (b & 0x40) != 0;
    it->order = (RLIndex)(b2 % 7) - 3;
    it->ref = RLRunLoopObserverCreate(it->activities, it->repeats, it->order, fz_observed, &c);
    FZ_CHECK(it->ref != NULL);
    it->made = it->valid = 1;
}

static void fz_queue(int m, int must_drop) {
    if (fz.nwork >= FZ_NWORK) return;
    fz_work *w = &fz.work[fz.nwork];
    *w = (fz_work){m, fz.nwork, fz.common, fz.nest_epoch, 0, 0, must_drop};
    fz.nwork++;
    RLRunLoopPerformFunctionWithRelease(fz.rl, fz_mode_names[m], fz_work_fn, w, fz_work_release);
}

/* Contains and IsValid agree with the model (only where no callout of the
   item is in progress: a firing one-shot is invalidated after its callout). */
static void fz_query(void) {
    if (fz.callout_depth > 0) return;
    for (int m = 0; m <= FZ_COMMON; m++) {
        for (int i = 0; i < FZ_NSRC; i++) {
            fz_item *it = &fz.src[i];
            if (!it->made || it->ref_gone) continue;
            int want = m == FZ_COMMON ? it->in_common : (it->member & fz_bit(m)) != 0;
            FZ_CHECK(RLRunLoopContainsSource(fz.rl, it->ref, fz_mode_names[m]) == want);
            FZ_CHECK(RLRunLoopSourceIsValid(it->ref) == it->valid);
        }
        for (int i = 0; i < FZ_NTIMER; i++) {
            fz_item *it = &fz.tm[i];
            if (!it->made || it->ref_gone) continue;
            int want = m == FZ_COMMON ? it->in_common : (it->member & fz_bit(m)) != 0;
            FZ_CHECK(RLRunLoopContainsTimer(fz.rl, it->ref, fz_mode_names[m]) == want);
            FZ_CHECK(RLRunLoopTimerIsValid(it->ref) == it->valid);
        }
        for (int i = 0; i < FZ_NOBS; i++) {
            fz_item *it = &fz.obs[i];
            if (!it->made || it->ref_gone) continue;
            int want = m == FZ_COMMON ? it->in_common : (it->member & fz_bit(m)) != 0;
            FZ_CHECK(RLRunLoopContainsObserver(fz.rl, it->ref, fz_mode_names[m]) == want);
            FZ_CHECK(RLRunLoopObserverIsValid(it->ref) == it->valid);
        }
    }
    for (int i = 0; i < FZ_NSRC; i++)
        if (fz.src[i].made && !fz.src[i].ref_gone)
            FZ_CHECK(RLRunLoopContainsSource(fz.rl_b, fz.src[i].ref, fz_mode_names[0]) ==
                     ((fz.src[i].member & FZ_B_BIT) != 0));
    for (int i = 0; i < FZ_NTIMER; i++)
        if (fz.tm[i].made && !fz.tm[i].ref_gone)
            FZ_CHECK(RLRunLoopContainsTimer(fz.rl_b, fz.tm[i].ref, fz_mode_names[0]) ==
                     ((fz.tm[i].member & FZ_B_BIT) != 0));
    for (int i = 0; i < FZ_NOBS; i++)
        if (fz.obs[i].made && !fz.obs[i].ref_gone)
            FZ_CHECK(RLRunLoopContainsObserver(fz.rl_b, fz.obs[i].ref, fz_mode_names[0]) ==
                     ((fz.obs[i].member & FZ_B_BIT) != 0));
}

/* ---- loop B: a thread that runs one polling pass of its loop on request,
   while the requesting thread waits (so the model is never shared) ---- */

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int request; /* 1: run a pass, 2: exit; back to 0 when done */
    pthread_t thread;
} fzb = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};

static void *fz_b_body(void *arg) {
    (void)arg;
    pthread_mutex_lock(&fzb.mu);
    fz.rl_b = RLRunLoopGetCurrent();
    pthread_cond_broadcast(&fzb.cv);
    for (;;) {
        while (fzb.request == 0) pthread_cond_wait(&fzb.cv, &fzb.mu);
        if (fzb.request == 2) break;
        pthread_mutex_unlock(&fzb.mu);
        fz.on_b = 1;
        RLRunLoopRunInMode(fz_mode_names[0], 0, false);
        fz.on_b = 0;
        pthread_mutex_lock(&fzb.mu);
        fzb.request = 0;
        pthread_cond_broadcast(&fzb.cv);
    }
    fzb.request = 0;
    pthread_cond_broadcast(&fzb.cv);
    pthread_mutex_unlock(&fzb.mu);
    return NULL; /* loop B is torn down now */
}

static void fz_b_request(int request) {
    pthread_mutex_lock(&fzb.mu);
    fzb.request = request;
    pthread_cond_broadcast(&fzb.cv);
    while (fzb.request != 0) pthread_cond_wait(&fzb.cv, &fzb.mu);
    pthread_mutex_unlock(&fzb.mu);
}

static void fz_b_start(void) {
    if (pthread_create(&fzb.thread, NULL, fz_b_body, NULL) != 0) abort();
    pthread_mutex_lock(&fzb.mu);
    while (!fz.rl_b) pthread_cond_wait(&fzb.cv, &fzb.mu);
    pthread_mutex_unlock(&fzb.mu);
}

static void fz_b_stop(void) {
    fz_b_request(2);
    pthread_join(fzb.thread, NULL);
}

static void fz_api_add(int kind, fz_item *it, RLRunLoopRef rl, int m) {
    if (kind == 0) RLRunLoopAddSource(rl, it->ref, fz_mode_names[m]);
    else if (kind == 1) RLRunLoopAddTimer(rl, it->ref, fz_mode_names[m]);
    else RLRunLoopAddObserver(rl, it->ref, fz_mode_names[m]);
}

static void fz_api_remove(int kind, fz_item *it, RLRunLoopRef rl, int m) {
    if (kind == 0) RLRunLoopRemoveSource(rl, it->ref, fz_mode_names[m]);
    else if (kind == 1) RLRunLoopRemoveTimer(rl, it->ref, fz_mode_names[m]);
    else RLRunLoopRemoveObserver(rl, it->ref, fz_mode_names[m]);
}

/* Moves an item from mode m of the main loop to loop B or back (from the
   body or from any callout, its own included), or runs a pass of B. */
static void fz_loop_b_op(int a) {
    fz_item *kinds[3] = {fz.src, fz.tm, fz.obs};
    int counts[3] = {FZ_NSRC, FZ_NTIMER, FZ_NOBS};
    int k = ((a >> 2) & 3) % 3;
    int m = (a >> 4) & 3;
    fz_item *it = fz_pick(kinds[k], counts[k], a >> 4);
    unsigned added;
    switch (a & 3) {
    case 0:
    case 1:
        if (!fz.on_b) {
            fz_b_request(1);
            fz_stats.b_passes++;
        }
        break;
    case 2:
        if (!it) break;
        fz_remove(it, m);
        fz_api_remove(k, it, fz.rl, m);
        added = fz_add_b(it);
        if (added) fz_stats.b_moves++;
        if (k == 0) it->expected_schedules += fz_popcount(added);
        fz_api_add(k, it, fz.rl_b, 0);
        break;
    case 3:
        if (!it) break;
        it->member &= ~FZ_B_BIT;
        fz_api_remove(k, it, fz.rl_b, 0);
        added = fz_add(it, m);
        if (k == 0) it->expected_schedules += fz_popcount(added);
        fz_api_add(k, it, fz.rl, m);
        break;
    }
}

/* One operation decoded from the input; false when the input is used up. */
static int fz_op(void) {
    int b = fz_byte();
    if (b < 0 || fz.ops >= FZ_MAXOPS) return 0;
    fz.ops++;
    int a = fz_arg();
    int m = (a >> 4) & 3; /* a mode, or common */
    fz_item *it;
    /* Loop B's callouts run on B's thread: they never run or stop the main loop. */
    if (fz.on_b && (b % 22 == 17 || b % 22 == 18)) return 1;
    switch (b % 22) {
    case 0: fz_make_source(a % FZ_NSRC, a >> 3); break;
    case 1:
        if ((it = fz_pick(fz.src, FZ_NSRC, a))) {
            unsigned added = fz_add(it, m);
            it->expected_schedules += fz_popcount(added);
            RLRunLoopAddSource(fz.rl, it->ref, fz_mode_names[m]);
        }
        break;
    case 2:
        if ((it = fz_pick(fz.src, FZ_NSRC, a))) {
            fz_remove(it, m);
            RLRunLoopRemoveSource(fz.rl, it->ref, fz_mode_names[m]);
        }
        break;
    case 3:
        if ((it = fz_pick(fz.src, FZ_NSRC, a))) {
            fz_invalidate(it);
            RLRunLoopSourceInvalidate(it->ref);
        }
        break;
    case 4:
    case 5:
        if ((it = fz_pick(fz.src, FZ_NSRC, a))) {
            if (it->valid) it->signalled = 1;
            RLRunLoopSourceSignal(it->ref);
        }
        break;
    case 6: fz_make_timer(a % FZ_NTIMER, a >> 3); break;
    case 7:
        if ((it = fz_pick(fz.tm, FZ_NTIMER, a))) {
            fz_add(it, m);
            RLRunLoopAddTimer(fz.rl, it->ref, fz_mode_names[m]);
        }
        break;
    case 8:
        if ((it = fz_pick(fz.tm, FZ_NTIMER, a))) {
            fz_remove(it, m);
            RLRunLoopRemoveTimer(fz.rl, it->ref, fz_mode_names[m]);
        }
        break;
    case 9:
        if ((it = fz_pick(fz.tm, FZ_NTIMER, a))) {
            fz_invalidate(it);
            RLRunLoopTimerInvalidate(it->ref);
        }
        break;
    case 10:
        if ((it = fz_pick(fz.tm, FZ_NTIMER, a))) {
            static const double offsets[4] = {-0.002, 0, 0.0003, 0.001};
            double date = fz_now() + offsets[(a >> 4) & 3];
            if (it->valid) it->not_before = date;
            RLRunLoopTimerSetNextFireDate(it->ref, date);
        }
        break;
    case 11: fz_make_observer(a % FZ_NOBS, fz_arg(), a >> 2); break;
    case 12:
        if ((it = fz_pick(fz.obs, FZ_NOBS, a))) {
            fz_add(it, m);
            RLRunLoopAddObserver(fz.rl, it->ref, fz_mode_names[m]);
        }
        break;
    case 13:
        if ((it = fz_pick(fz.obs, FZ_NOBS, a))) {
            if (a & 0x40) {
                fz_invalidate(it);
                RLRunLoopObserverInvalidate(it->ref);
            } else {
                fz_remove(it, m);
                RLRunLoopRemoveObserver(fz.rl, it->ref, fz_mode_names[m]);
            }
        }
        break;
    case 14: {
        /* Release our reference to any kind of item: the loop may keep it. */
        fz_item *kinds[3] = {fz.src, fz.tm, fz.obs};
        int counts[3] = {FZ_NSRC, FZ_NTIMER, FZ_NOBS};
        int k = (a >> 6) % 3;
        if ((it = fz_pick(kinds[k], counts[k], a))) {
            it->ref_gone = 1;
            RLRelease(it->ref);
        }
        break;
    }
    case 15:
    case 16: fz_queue(m, 0); break;
    case 17: {
        static const double secs[4] = {0, 0, 0.0002, 0.001};
        fz_run(a % FZ_NMODES, secs[(a >> 2) & 3], (a >> 4) & 1);
        break;
    }
    case 18:
        if (fz.depth > 0) fz_top()->stop_requested = 1;
        RLRunLoopStop(fz.rl);
        break;
    case 19: RLRunLoopWakeUp(fz.rl); break;
    case 20: {
        int cm = 1 + (a & 1);
        if (!(fz.common & fz_bit(cm))) {
            fz.common |= fz_bit(cm);
            fz_item *kinds[3] = {fz.src, fz.tm, fz.obs};
            int counts[3] = {FZ_NSRC, FZ_NTIMER, FZ_NOBS};
            for (int k = 0; k < 3; k++)
                for (int i = 0; i < counts[k]; i++) {
                    fz_item *x = &kinds[k][i];
                    if (x->valid && x->in_common && !(x->member & fz_bit(cm))) {
                        x->member |= fz_bit(cm);
                        if (k == 0) x->expected_schedules++;
                    }
                }
        }
        RLRunLoopAddCommonMode(fz.rl, fz_mode_names[cm]);
        break;
    }
    case 21:
        if (a < 128) fz_query();
        else fz_loop_b_op(a);
        break;
    }
    return 1;
}

static void fz_ops_from_callout(void) {
    if (fz.inert) return;
    int n = fz_arg() % 4;
    fz.callout_depth++;
    for (int i = 0; i < n && fz_op(); i++) {}
    fz.callout_depth--;
}

static int fz_run(int m, double seconds, int rash) {
    if (fz.depth >= FZ_MAXDEPTH || fz.runs >= FZ_MAXRUNS) return 0;
    fz.runs++;
    if (fz.in_block) fz.nest_epoch++;
    if (fz.in_timer) fz_stats.runs_in_timer++;
    if (fz.in_observer) fz_stats.runs_in_observer++;
    fz_frame *f = &fz.frames[fz.depth++];
    *f = (fz_frame){m, rash, 0, 0, 0, fz_nonempty(m), -1};
    int ndisp = fz.ndisp;
    RLRunLoopRunResult r = RLRunLoopRunInMode(fz_mode_names[m], seconds, rash);
    FZ_CHECK(f == &fz.frames[fz.depth - 1]);
    fz.depth--;
    FZ_CHECK(fz.ndisp == ndisp);
    FZ_CHECK(r >= kRLRunLoopRunFinished && r <= kRLRunLoopRunHandledSource);
    fz_stats.runs++;
    fz_stats.results[r]++;
    if (f->last_activity == 0) {
        /* No Entry: only an empty mode finishes at once. */
        FZ_CHECK(r == kRLRunLoopRunFinished);
        FZ_CHECK(!f->nonempty_at_entry);
        FZ_CHECK(f->performed == 0);
    } else {
        FZ_CHECK(f->last_activity == kRLRunLoopExit);
        if (r == kRLRunLoopRunFinished) FZ_CHECK(f->nonempty_at_exit == 0);
        if (r == kRLRunLoopRunStopped) FZ_CHECK(f->stop_requested);
        if (r == kRLRunLoopRunHandledSource) FZ_CHECK(rash && f->performed == 1);
        if (rash && f->performed) FZ_CHECK(r == kRLRunLoopRunHandledSource);
    }
    return (int)r;
}

/* ---- one input ---- */

static void *fz_body(void *arg) {
    (void)arg;
    fz.rl = RLRunLoopGetCurrent();
    fz.common = fz_bit(0);
    /* The grammar checkers: first and last observers of every activity in
       every mode (observers do not keep a mode from being empty). */
    fz.first_checker = RLRunLoopObserverCreate(kRLRunLoopAllActivities, true, -1000, fz_first_checker, NULL);
    fz.last_checker = RLRunLoopObserverCreate(kRLRunLoopAllActivities, true, 1000, fz_last_checker, NULL);
    for (int m = 0; m < FZ_NMODES; m++) {
        RLRunLoopAddObserver(fz.rl, fz.first_checker, fz_mode_names[m]);
        RLRunLoopAddObserver(fz.rl, fz.last_checker, fz_mode_names[m]);
    }

    while (fz_op()) {}
    FZ_CHECK(fz.depth == 0 && fz.callout_depth == 0 && fz.in_block == 0);
    fz_query();

    /* Drain: one polling pass of each mode, callouts inert. */
    fz.inert = 1;
    fz.runs = 0;
    double t0 = fz_now();
    for (int m = 0; m < FZ_NMODES; m++) {
        fz_run(m, 0, 0);
        for (int i = 0; i < FZ_NSRC; i++) {
            fz_item *it = &fz.src[i];
            if (it->valid && (it->member & fz_bit(m))) FZ_CHECK(!it->signalled);
        }
        for (int i = 0; i < FZ_NTIMER; i++) {
            fz_item *it = &fz.tm[i];
            /* A one-shot timer well past its date fires in the drain. */
            if (it->valid && (it->member & fz_bit(m)) && it->interval <= 0) FZ_CHECK(it->not_before > t0 - 0.005);
        }
    }
    for (int i = 0; i < fz.nwork; i++) FZ_CHECK(fz.work[i].ran && fz.work[i].released);
    fz_query();

    /* Work that must be dropped, unrun, when the thread exits. */
    fz_queue(2, 1);
    fz.body_done = 1;
    for (int i = 0; i < FZ_NSRC; i++)
        if (fz.src[i].made && !fz.src[i].ref_gone) RLRelease(fz.src[i].ref);
    for (int i = 0; i < FZ_NTIMER; i++)
        if (fz.tm[i].made && !fz.tm[i].ref_gone) RLRelease(fz.tm[i].ref);
    for (int i = 0; i < FZ_NOBS; i++)
        if (fz.obs[i].made && !fz.obs[i].ref_gone) RLRelease(fz.obs[i].ref);
    RLRelease(fz.first_checker);
    RLRelease(fz.last_checker);
    return NULL; /* the loop is torn down now */
}

/* ---- the timer heap alone, against a linear model ------------------------ */

#define FZ_HEAP_MAX 48
typedef struct {
    int64_t deadline;
    uint64_t sequence;
    rl_heap_handle handle;
} fz_heap_item;

static int fz_heap_before(const fz_heap_item *a, const fz_heap_item *b) {
    return a->deadline < b->deadline || (a->deadline == b->deadline && a->sequence < b->sequence);
}

static int fz_heap_earliest(const fz_heap_item *items, int n) {
    int best = -1;
    for (int i = 0; i < n; i++)
        if (best < 0 || fz_heap_before(&items[i], &items[best])) best = i;
    return best;
}

static int64_t fz_heap_no_tolerance(const void *item) {
    (void)item;
    return 0;
}

/* Each byte pair (a, b): b % 5 picks the operation, a its argument. */
static void fz_heap(const uint8_t *data, size_t size) {
    rl_timer_heap h = {0};
    rl_heap_key_buffer keys = {0};
    fz_heap_item items[FZ_HEAP_MAX];
    int n = 0;
    uint64_t sequence = 0;
    for (size_t i = 0; i + 1 < size; i += 2) {
        unsigned a = data[i], b = data[i + 1];
        int pick = n ? (int)(a % (unsigned)n) : -1;
        switch (b % 5) {
        case 0:
        case 1:
            if (n == FZ_HEAP_MAX) break;
            items[n] = (fz_heap_item){a % 16, ++sequence, 0};
            items[n].handle = rl_heap_insert(&h, &items[n], items[n].deadline, items[n].sequence);
            FZ_CHECK(items[n].handle != RL_HEAP_NO_HANDLE);
            n++;
            break;
        case 2:
            if (pick < 0) break;
            rl_heap_remove(&h, items[pick].handle);
            items[pick] = items[--n];
            break;
        case 3:
            if (pick < 0) break;
            items[pick].deadline = (a >> 2) % 16;
            items[pick].sequence = ++sequence;
            rl_heap_update(&h, items[pick].handle, items[pick].deadline, items[pick].sequence);
            break;
        default: {
            int64_t limit = a % 17;
            FZ_CHECK(rl_heap_collect_due(&h, limit, &keys));
            size_t due = 0;
            for (int k = 0; k < n; k++) due += items[k].deadline <= limit;
            FZ_CHECK(keys.count == due);
            for (size_t k = 1; k < keys.count; k++)
                FZ_CHECK(keys.items[k - 1].deadline_ns < keys.items[k].deadline_ns ||
                         (keys.items[k - 1].deadline_ns == keys.items[k].deadline_ns &&
                          keys.items[k - 1].sequence < keys.items[k].sequence));
            FZ_CHECK(rl_heap_earliest_latest(&h, 0, fz_heap_no_tolerance) ==
                     (n ? items[fz_heap_earliest(items, n)].deadline : INT64_MAX));
            int e = fz_heap_earliest(items, n);
            if (e >= 0 && (a & 1)) { /* pop */
                FZ_CHECK(rl_heap_top(&h)->handle == items[e].handle);
                rl_heap_remove(&h, items[e].handle);
                items[e] = items[--n];
            }
            break;
        }
        }
        FZ_CHECK(rl_heap_check(&h) == NULL);
        FZ_CHECK(rl_heap_count(&h) == (size_t)n);
        int e = fz_heap_earliest(items, n);
        FZ_CHECK(e < 0 ? rl_heap_top(&h) == NULL : rl_heap_top(&h)->handle == items[e].handle);
    }
    rl_heap_key_buffer_free(&keys);
    rl_heap_free(&h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_heap(data, size);
    memset(&fz, 0, sizeof fz);
    fz.data = data;
    fz.size = size;
    fz_b_start();
    pthread_t th;
    if (pthread_create(&th, NULL, fz_body, NULL) != 0) abort();
    pthread_join(th, NULL);
    fz_b_stop();

    /* The loop is gone: everything was released exactly once. */
    for (int i = 0; i < FZ_NSRC; i++) {
        fz_item *it = &fz.src[i];
        if (!it->made) continue;
        FZ_CHECK(it->releases == it->retains + it->owned);
        FZ_CHECK(it->schedules == it->cancels);
        FZ_CHECK(it->schedules == it->expected_schedules);
    }
    for (int i = 0; i < FZ_NTIMER; i++)
        if (fz.tm[i].made) FZ_CHECK(fz.tm[i].releases == fz.tm[i].retains + fz.tm[i].owned);
    for (int i = 0; i < FZ_NOBS; i++)
        if (fz.obs[i].made) FZ_CHECK(fz.obs[i].releases == fz.obs[i].retains + fz.obs[i].owned);
    for (int i = 0; i < fz.nwork; i++) FZ_CHECK(fz.work[i].released);
    fz_stats.inputs++;
    fz_stats.ops += fz.ops;
    return 0;
}
