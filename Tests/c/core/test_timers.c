/* test_timers.c: timers fire no earlier than their fire date, stay on their
   grid, fire once when late, are invalidated after a one-shot fire, keep
   insertion order on equal dates, belong to one loop, and can be moved from
   another thread while the loop sleeps. Tests of order, counts and the
   grid run on a manual clock (CRunLoopClock.h), exactly and without
   waiting; those of the real clock (never early, a sleeping loop re-armed
   from another thread) check timing only as lower bounds, or as very
   generous upper bounds. */
#include <CRunLoop.h>
#include "rltest.h"

#include <pthread.h>
#include <stdatomic.h>

/* Timers are converted between wall-clock and monotonic time; allow for
   that much jitter in "not earlier than" checks. */
#define CLOCK_SLACK 1e-4
/* Grid checks: k * interval added up in doubles near 8e8 s. */
#define GRID_EPS    1e-6

/* A timer's date, and when it fired (both clocks). */
typedef struct {
    RLAbsoluteTime fire;
    double mono_start, delay;
    rl_test_fire_note note;
} early_rec;

/* A one-shot timer due `delay` seconds from now, noting its fire in r; the
   caller adds and releases it. */
static RLRunLoopTimerRef early_rec_timer(early_rec *r, double delay) {
    r->mono_start = rl_test_now();
    r->delay = delay;
    r->fire = RLAbsoluteTimeGetCurrent() + delay;
    return rl_test_timer(r->fire, 0, rl_test_note_fire, &r->note);
}

/* Fails if r's timer fired before its date, by either clock. */
static void assert_not_early(const early_rec *r) {
    RL_ASSERT_GE_DBL(r->note.at, r->fire - CLOCK_SLACK);
    RL_ASSERT_GE_DBL(r->note.mono_at - r->mono_start, r->delay - CLOCK_SLACK);
}

static void timer_fires_no_earlier_than_its_fire_date(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    static early_rec rec[6];
    static const double delays[] = {0.0, 0.001, 0.01, 0.03, 0.05, 0.12};
    RLRunLoopTimerRef t[6];
    for (int i = 0; i < 6; i++) {
        t[i] = early_rec_timer(&rec[i], delays[i]);
        RLRunLoopAddTimer(rl, t[i], kRLRunLoopDefaultMode);
    }
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(rl_test_fired, 6);
    for (int i = 0; i < 6; i++) {
        assert_not_early(&rec[i]);
        RLRelease(t[i]);
    }
}

static void timer_callout_gets_the_timer_and_info(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    static rl_test_fire_note note;
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0, 0, rl_test_note_fire, &note);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(rl_test_fired, 1);
    RL_ASSERT(note.at > 0);
    RLRelease(t);
}

static void one_shot_timer_is_invalidated_after_firing(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopTimerRef t = rl_test_timer(0.01, 0, rl_test_count_fire, NULL);
    RL_ASSERT(!RLRunLoopTimerDoesRepeat(t));
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(rl, t, "other");
    rl_test_advance(0.15);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.15, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_fired, 1);
    RL_ASSERT(!RLRunLoopTimerIsValid(t));
    RL_ASSERT(!RLRunLoopContainsTimer(rl, t, kRLRunLoopDefaultMode));
    RL_ASSERT(!RLRunLoopContainsTimer(rl, t, "other"));
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetNextFireDate(t), 0);
    RLRelease(t);
    RLRelease(keep);
}

/* A one-shot timer is invalidated even if its callout moved its date. */
static void move_self(RLRunLoopTimerRef t, void *info) {
    (void)info;
    rl_test_fired++;
    RLRunLoopTimerSetNextFireDate(t, rl_test_loop_time() + 0.01);
}

static void one_shot_timer_moved_in_its_callout_is_still_invalidated(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0, 0, move_self, NULL);
    rl_test_advance(0.1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_fired, 1);
    RL_ASSERT(!RLRunLoopTimerIsValid(t));
    RLRelease(t);
    RLRelease(keep);
}

/* ---- repeating timers: the grid ---- */

typedef struct {
    RLAbsoluteTime fire;
    RLTimeInterval interval;
    int n;
    RLAbsoluteTime at[16];      /* when each callout began */
    RLAbsoluteTime end_first;   /* when the long first callout ended */
    RLAbsoluteTime next[64];    /* next fire dates seen before each sleep */
    RLAbsoluteTime next_at[64]; /* ... and when */
    int nnext;
    RLRunLoopTimerRef timer;
} grid_rec;
static grid_rec g_grid;

static void grid_callout(RLRunLoopTimerRef t, void *info) {
    (void)info;
    RL_ASSERT(t == g_grid.timer);
    if (g_grid.n < 16) g_grid.at[g_grid.n] = rl_test_loop_time();
    g_grid.n++;
    if (g_grid.n == 1) {
        rl_test_advance(4.3 * g_grid.interval); /* the callout takes four intervals and more */
        g_grid.end_first = rl_test_loop_time();
    }
    if (g_grid.n == 4) RLRunLoopStop(RLRunLoopGetCurrent());
}

static void grid_before_waiting(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
    if (g_grid.nnext < 64) {
        g_grid.next[g_grid.nnext] = RLRunLoopTimerGetNextFireDate(g_grid.timer);
        g_grid.next_at[g_grid.nnext] = rl_test_loop_time();
        g_grid.nnext++;
    }
}

static double grid_k(RLAbsoluteTime d) {
    return (d - g_grid.fire) / g_grid.interval;
}

/* On a manual clock: the late first callout advances the clock itself. */
static void repeating_timer_stays_on_its_grid_and_fires_once_when_late(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    g_grid.interval = 0.05;
    g_grid.fire = 0.05;
    g_grid.timer = rl_test_timer(g_grid.fire, g_grid.interval, grid_callout, NULL);
    RL_ASSERT(RLRunLoopTimerDoesRepeat(g_grid.timer));
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetInterval(g_grid.timer), 0.05);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetNextFireDate(g_grid.timer), g_grid.fire);
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopBeforeWaiting, true, 0, grid_before_waiting, NULL);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(rl, g_grid.timer, kRLRunLoopDefaultMode);
    rl_test_advance(1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 30, false), kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(g_grid.n, 4);
    /* Exactly: on its date, then once late at the first grid point after
       the long callout (0.265 s), then on the grid. */
    static const double want[] = {0.05, 0.30, 0.35, 0.40};
    for (int i = 0; i < 4; i++) RL_ASSERT(fabs(g_grid.at[i] - want[i]) < 1e-9);
    /* Every next fire date seen is on the grid, in the future of the moment
       it was seen, at most one interval ahead... */
    RL_ASSERT(g_grid.nnext >= 4);
    for (int i = 0; i < g_grid.nnext; i++) {
        double k = grid_k(g_grid.next[i]);
        RL_ASSERT_LE_DBL(fabs(k - round(k)), GRID_EPS / g_grid.interval);
        RL_ASSERT_GE_DBL(k, -GRID_EPS);
    }
    /* ...each callout came no earlier than its grid point... */
    for (int i = 0; i < 4; i++) {
        double k = grid_k(g_grid.at[i]);
        RL_ASSERT_GE_DBL(k, (double)i - CLOCK_SLACK / g_grid.interval);
    }
    /* ...and after the long first callout it fired once, not a burst: the
       second callout is at or after the first grid point following the end
       of the first callout. */
    double k_end = grid_k(g_grid.end_first);
    RL_ASSERT_GE_DBL(grid_k(g_grid.at[1]), floor(k_end) + 1 - CLOCK_SLACK / g_grid.interval);
    /* No callout comes before the grid point after the previous one (a
       late callout is followed by the next grid point, not a catch-up). */
    for (int i = 0; i + 1 < 4; i++)
        RL_ASSERT_GE_DBL(grid_k(g_grid.at[i + 1]), floor(grid_k(g_grid.at[i])) + 1 - CLOCK_SLACK / g_grid.interval);
    /* The date after all that is still on the grid. */
    double k = grid_k(RLRunLoopTimerGetNextFireDate(g_grid.timer));
    RL_ASSERT_LE_DBL(fabs(k - round(k)), GRID_EPS / g_grid.interval);
    RL_ASSERT(RLRunLoopTimerIsValid(g_grid.timer));
    RLRunLoopTimerInvalidate(g_grid.timer);
    RLRelease(g_grid.timer);
    RLRelease(o);
}

/* A repeating timer whose date was set far behind fires once, then its next
   date is the first grid point in the future. */
static void repeating_timer_far_behind_fires_once_then_skips_ahead(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLAbsoluteTime fire = RLAbsoluteTimeGetCurrent() - 10.0; /* 100 intervals ago */
    RLRunLoopTimerRef t = rl_test_timer(fire, 0.1, rl_test_count_fire, NULL);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_fired, 1);
    RLAbsoluteTime now = RLAbsoluteTimeGetCurrent();
    RLAbsoluteTime next = RLRunLoopTimerGetNextFireDate(t);
    RL_ASSERT_GE_DBL(next, now - 0.1);
    RL_ASSERT_LE_DBL(next, now + 0.1 + 0.01);
    /* Polling again right away does not fire it again. */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LE_INT(rl_test_fired, 2);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
    RLRelease(keep);
}

/* The grid of a timer created with a past date is that date's:
   fire + k * interval (RLRunLoopTimerCreate in CRunLoopCore.h), not the
   moment it was added. */
static void repeating_timer_created_in_the_past_keeps_the_phase_of_its_fire_date(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLAbsoluteTime fire = RLAbsoluteTimeGetCurrent() - 10.03;
    RLRunLoopTimerRef t = rl_test_timer(fire, 0.1, rl_test_count_fire, NULL);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_fired, 1);
    RLAbsoluteTime next = RLRunLoopTimerGetNextFireDate(t);
    double k = (next - fire) / 0.1;
    RL_ASSERT_LE_DBL(fabs(k - round(k)), 1e-4);
    RL_ASSERT_GE_DBL(k, 99.5);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
    RLRelease(keep);
}

static void note_and_stop_at_five(RLRunLoopTimerRef t, void *info) {
    rl_test_note_fire(t, info);
    if (rl_test_fired == 5) RLRunLoopStop(RLRunLoopGetCurrent());
}

static void repeating_timer_fires_repeatedly(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    static rl_test_fire_note note;
    double mono_start = rl_test_now();
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.01, 0.01, note_and_stop_at_five, &note);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 20, true), kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(rl_test_fired, 5);
    /* The fifth callout is no earlier than the fifth grid point. */
    RL_ASSERT_GE_DBL(note.mono_at - mono_start, 0.01 * 5 - CLOCK_SLACK);
    RL_ASSERT(RLRunLoopTimerIsValid(t));
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
}

/* A repeating timer whose callout moves its date later keeps that date. */
static void move_later(RLRunLoopTimerRef t, void *info) {
    RLAbsoluteTime *want = info;
    if (++rl_test_fired == 1) {
        *want = rl_test_loop_time() + 100;
        RLRunLoopTimerSetNextFireDate(t, *want);
    }
}

static void repeating_timer_moved_later_in_its_callout_keeps_the_new_date(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    static RLAbsoluteTime want;
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0, 0.01, move_later, &want);
    rl_test_advance(0.1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_fired, 1);
    RL_ASSERT(fabs(RLRunLoopTimerGetNextFireDate(t) - want) < 1e-3);
    RL_ASSERT(RLRunLoopTimerIsValid(t));
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
    RLRelease(keep);
}

/* ---- ordering ---- */

static void timers_with_the_same_fire_date_fire_in_insertion_order(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    enum { N = 50 };
    RLRunLoopTimerRef t[N];
    RLAbsoluteTime fire = 0.02;
    rl_test_advance(0.02);
    for (int i = 0; i < N; i++) {
        RLRunLoopTimerContext c = {0, (void *)(intptr_t)i, NULL, NULL, NULL};
        /* `order` does not affect firing. */
        t[i] = RLRunLoopTimerCreate(fire, 0, 0, N - i, rl_test_log_fire, &c);
        RLRunLoopAddTimer(rl, t[i], kRLRunLoopDefaultMode);
    }
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(rl_test_callouts.n, N);
    for (int i = 0; i < N; i++) RL_ASSERT_EQ_INT(rl_test_callouts.ev[i], i);
    for (int i = 0; i < N; i++) RLRelease(t[i]);
}

static void timers_fire_in_fire_date_order(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    static const int delay_ms[] = {30, 10, 50, 0, 20, 40, 10};
    enum { N = sizeof delay_ms / sizeof delay_ms[0] };
    RLRunLoopTimerRef t[N];
    RLAbsoluteTime now = rl_test_loop_time();
    rl_test_advance(0.05);
    for (int i = 0; i < N; i++) {
        t[i] = rl_test_indexed_timer(now + delay_ms[i] * 1e-3, i);
        RLRunLoopAddTimer(rl, t[i], kRLRunLoopDefaultMode);
    }
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunFinished);
    RL_ASSERT_LOG(&rl_test_callouts, 3, 1, 6, 4, 0, 5, 2);
    for (int i = 0; i < N; i++) RLRelease(t[i]);
}

/* Thousands due in one pass (sorted by value, not through their timers):
   date order, ties in insertion order. */
enum { MANY_DUE = 3000 }; /* rl_test_callouts holds them all */

static void thousands_of_due_timers_fire_in_date_then_insertion_order(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    static RLRunLoopTimerRef t[MANY_DUE];
    RLAbsoluteTime past = -1;
    unsigned x = 12345;
    static int slot_of[MANY_DUE];
    for (int i = 0; i < MANY_DUE; i++) {
        x = x * 1103515245u + 12345u;
        slot_of[i] = (int)((x >> 16) % 40);
        t[i] = rl_test_indexed_timer(past + slot_of[i] * 1e-3, i);
        RLRunLoopAddTimer(rl, t[i], kRLRunLoopDefaultMode);
    }
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(rl_test_callouts.n, MANY_DUE);
    for (int k = 1; k < MANY_DUE; k++) {
        long a = rl_test_callouts.ev[k - 1], b = rl_test_callouts.ev[k];
        RL_ASSERT(slot_of[a] < slot_of[b] || (slot_of[a] == slot_of[b] && a < b));
    }
    for (int i = 0; i < MANY_DUE; i++) RLRelease(t[i]);
}

/* ---- one loop per timer ---- */

static void *add_timer_to_own_loop(void *arg) {
    RLRunLoopTimerRef t = arg;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(rl, t, "other");
    intptr_t bad = RLRunLoopContainsTimer(rl, t, kRLRunLoopDefaultMode) || RLRunLoopContainsTimer(rl, t, "other");
    /* Its mode is empty: the timer is not there. */
    if (RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false) != kRLRunLoopRunFinished) bad = 1;
    return (void *)bad;
}

static void timer_belongs_to_one_run_loop(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.05, 0, rl_test_count_fire, NULL);
    pthread_t th;
    void *bad = (void *)1;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, add_timer_to_own_loop, t), 0);
    pthread_join(th, &bad);
    RL_ASSERT(bad == NULL);
    RL_ASSERT_EQ_INT(rl_test_fired, 0);
    RL_ASSERT(RLRunLoopContainsTimer(rl, t, kRLRunLoopDefaultMode));
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(rl_test_fired, 1);
    RLRelease(t);
}

/* A timer may be in several modes of its loop; it fires in whichever runs. */
static void timer_in_two_modes_fires_in_either(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLRunLoopTimerRef t = rl_test_add_timer(rl, "A", 0, 0.02, rl_test_count_fire, NULL);
    RLRunLoopAddTimer(rl, t, "B");
    RL_ASSERT(RLRunLoopContainsTimer(rl, t, "A") && RLRunLoopContainsTimer(rl, t, "B"));
    rl_test_advance(0.05);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("A", 0.05, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_fired, 3); /* at 0, 0.02, 0.04 */
    rl_test_advance(0.05);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("B", 0.05, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_fired, 6); /* at 0.06, 0.08, 0.1 */
    RLRunLoopRemoveTimer(rl, t, "A");
    RL_ASSERT(!RLRunLoopContainsTimer(rl, t, "A") && RLRunLoopContainsTimer(rl, t, "B"));
    RL_ASSERT(RLRunLoopTimerIsValid(t));
    RLRunLoopTimerInvalidate(t);
    RL_ASSERT(!RLRunLoopContainsTimer(rl, t, "B"));
    RLRelease(t);
}

static void note_timer(RLRunLoopTimerRef t, void *info) {
    *(RLRunLoopTimerRef *)info = t;
}

/* Fires t in `mode` and answers whether its callout got t itself. */
static bool fires_as_itself(RLRunLoopTimerRef t, RLRunLoopTimerRef *seen, RLRunLoopMode mode) {
    *seen = NULL;
    rl_test_advance(0.05);
    RLRunLoopRunInMode(mode, 0.05, false);
    return *seen == t;
}

/* A timer's first mode uses the slot inside it, later modes slots of their
   own: the callout gets the timer whichever slot fired it, also after the
   first mode's slot was given up and taken again. */
static void timer_in_three_modes_calls_out_with_itself_from_every_slot(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLRunLoopTimerRef seen = NULL;
    RLRunLoopTimerRef t = rl_test_add_timer(rl, "A", 0, 0.01, note_timer, &seen);
    RLRunLoopAddTimer(rl, t, "B");
    RLRunLoopAddTimer(rl, t, "C");
    RLRunLoopRemoveTimer(rl, t, "A");
    RL_ASSERT(fires_as_itself(t, &seen, "C"));
    RL_ASSERT(fires_as_itself(t, &seen, "B"));
    RLRunLoopAddTimer(rl, t, "A");
    RLRunLoopRemoveTimer(rl, t, "B");
    RL_ASSERT(fires_as_itself(t, &seen, "A"));
    RL_ASSERT(fires_as_itself(t, &seen, "C"));
    RL_ASSERT(!fires_as_itself(t, &seen, "B"));
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, "C"), RLRunLoopTimerGetNextFireDate(t));
    RLRunLoopTimerInvalidate(t);
    RL_ASSERT(!RLRunLoopContainsTimer(rl, t, "A") && !RLRunLoopContainsTimer(rl, t, "C"));
    RLRelease(t);
}

/* ---- SetNextFireDate from another thread ---- */

static RLRunLoopRef g_rl;
static atomic_int g_slept;
static void (*g_act)(RLRunLoopTimerRef t);
static void *act_once_the_loop_sleeps(void *arg) {
    if (rl_test_wait_sleeping(g_rl, 10)) atomic_store(&g_slept, 1);
    g_act(arg);
    return NULL;
}

/* Runs the current loop, g_rl, while another thread waits for it to sleep
   and then does `act` to t, whose callout (rl_test_stop_current) must stop
   the run well within its 30 s. */
static void run_while_another_thread_acts_on(RLRunLoopTimerRef t, void (*act)(RLRunLoopTimerRef t)) {
    g_act = act;
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, act_once_the_loop_sleeps, t), 0);
    double t0 = rl_test_now();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 30, false), kRLRunLoopRunStopped);
    RL_ASSERT_LE_DBL(rl_test_now() - t0, 20);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(atomic_load(&g_slept), 1);
}

static void move_soon(RLRunLoopTimerRef t) {
    RLRunLoopTimerSetNextFireDate(t, RLAbsoluteTimeGetCurrent() + 0.05);
}

static void set_next_fire_date_from_another_thread_rearms_a_sleeping_loop(void) {
    g_rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef t = rl_test_add_timer(g_rl, kRLRunLoopDefaultMode, 1000, 0, rl_test_stop_current, NULL);
    run_while_another_thread_acts_on(t, move_soon);
    RL_ASSERT(!RLRunLoopTimerIsValid(t));
    RLRelease(t);
}

static void add_to_the_loop(RLRunLoopTimerRef t) {
    RLRunLoopAddTimer(g_rl, t, kRLRunLoopDefaultMode);
}

static void timer_added_from_another_thread_fires_in_a_sleeping_loop(void) {
    g_rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(g_rl, kRLRunLoopDefaultMode);
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent() + 0.1, 0, rl_test_stop_current, NULL);
    run_while_another_thread_acts_on(t, add_to_the_loop);
    RLRelease(t);
    RLRelease(keep);
}

/* ---- one timer, three threads ---- */

#define HANDED_TIMERS 200
typedef struct {
    RLAbsoluteTime date;
    atomic_int fired;
    double fired_at;
} handed_rec;
static handed_rec g_handed[HANDED_TIMERS], g_children[HANDED_TIMERS];
static RLRunLoopTimerRef g_handed_timers[HANDED_TIMERS];
static atomic_int g_created, g_added, g_handed_fired;

static void note_handed_fire(RLRunLoopTimerRef t, void *info) {
    (void)t;
    handed_rec *r = info;
    r->fired_at = RLAbsoluteTimeGetCurrent();
    atomic_fetch_add(&r->fired, 1);
    if (r >= g_handed && r < g_handed + HANDED_TIMERS && (r - g_handed) % 10 == 0) {
        /* Added from inside a callout, to the loop that is calling out. */
        handed_rec *child = &g_children[r - g_handed];
        child->date = RLAbsoluteTimeGetCurrent() + 0.005;
        RLRunLoopTimerRef c = rl_test_timer(child->date, 0, note_handed_fire, child);
        RLRunLoopAddTimer(RLRunLoopGetCurrent(), c, kRLRunLoopDefaultMode);
        RLRelease(c);
    }
    if (atomic_fetch_add(&g_handed_fired, 1) + 1 == HANDED_TIMERS + HANDED_TIMERS / 10)
        RLRunLoopStop(RLRunLoopGetCurrent());
}

static void *create_handed_timers(void *arg) {
    (void)arg;
    for (int i = 0; i < HANDED_TIMERS; i++) {
        g_handed[i].date = RLAbsoluteTimeGetCurrent() + 0.001 * (i % 50);
        g_handed_timers[i] = rl_test_timer(g_handed[i].date, 0, note_handed_fire, &g_handed[i]);
    }
    atomic_store(&g_created, 1);
    return NULL;
}

static void *add_handed_timers(void *arg) {
    (void)arg;
    rl_test_wait_for(&g_created, 1, 20);
    if (!rl_test_wait_sleeping(g_rl, 10)) return NULL;
    for (int i = 0; i < HANDED_TIMERS; i++) RLRunLoopAddTimer(g_rl, g_handed_timers[i], kRLRunLoopDefaultMode);
    atomic_store(&g_added, 1);
    return NULL;
}

static void *release_handed_timers(void *arg) {
    (void)arg;
    rl_test_wait_for(&g_added, 1, 20);
    for (int i = 0; i < HANDED_TIMERS; i++) RLRelease(g_handed_timers[i]);
    return NULL;
}

/* Timers created on one thread, added on a second while the loop runs on a
   third, and released on a fourth, each fire once and never before their
   date; so do the timers their callouts add to the loop calling them out. */
static void timers_created_added_and_released_on_other_threads_fire_once_on_time(void) {
    g_rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(g_rl, kRLRunLoopDefaultMode);
    pthread_t th[3];
    RL_ASSERT_EQ_INT(pthread_create(&th[0], NULL, create_handed_timers, NULL), 0);
    RL_ASSERT_EQ_INT(pthread_create(&th[1], NULL, add_handed_timers, NULL), 0);
    RL_ASSERT_EQ_INT(pthread_create(&th[2], NULL, release_handed_timers, NULL), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 30, false), kRLRunLoopRunStopped);
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    RL_ASSERT_EQ_INT(atomic_load(&g_added), 1);
    for (int i = 0; i < HANDED_TIMERS; i++) {
        RL_ASSERT_EQ_INT(atomic_load(&g_handed[i].fired), 1);
        RL_ASSERT_GE_DBL(g_handed[i].fired_at, g_handed[i].date - CLOCK_SLACK);
        RL_ASSERT_EQ_INT(atomic_load(&g_children[i].fired), i % 10 == 0);
        if (i % 10 == 0) RL_ASSERT_GE_DBL(g_children[i].fired_at, g_children[i].date - CLOCK_SLACK);
    }
    RLRelease(keep);
}

static void set_next_fire_date_earlier_and_later(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.02, 0, rl_test_count_fire, NULL);
    RLAbsoluteTime later = rl_test_loop_time() + 500;
    RLRunLoopTimerSetNextFireDate(t, later);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetNextFireDate(t), later);
    rl_test_advance(0.1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_fired, 0);
    RLRunLoopTimerSetNextFireDate(t, rl_test_loop_time() - 1);
    rl_test_advance(0.1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_fired, 1);
    RLRelease(t);
    RLRelease(keep);
}

/* ---- tolerance ---- */

static void tolerance_is_clamped(void) {
    RLRunLoopTimerRef once = rl_test_timer(RLAbsoluteTimeGetCurrent() + 10, 0, rl_test_count_fire, NULL);
    RLRunLoopTimerRef rep = rl_test_timer(RLAbsoluteTimeGetCurrent() + 10, 1.0, rl_test_count_fire, NULL);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetTolerance(once), 0);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetTolerance(rep), 0);
    RLRunLoopTimerSetTolerance(once, 5);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetTolerance(once), 5);
    RLRunLoopTimerSetTolerance(once, -1);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetTolerance(once), 0);
    RLRunLoopTimerSetTolerance(once, 0.25);
    RLRunLoopTimerSetTolerance(once, NAN);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetTolerance(once), 0);
    RLRunLoopTimerSetTolerance(rep, 0.3);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetTolerance(rep), 0.3);
    RLRunLoopTimerSetTolerance(rep, 2);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetTolerance(rep), 0.5);
    RLRunLoopTimerSetTolerance(rep, -0.1);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetTolerance(rep), 0);
    RLRunLoopTimerSetTolerance(rep, INFINITY);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetTolerance(rep), 0.5);
    RLRelease(once);
    RLRelease(rep);
}

/* A timer with tolerance still never fires early. */
/* A one-shot timer's extra part, made later for a tolerance, does not make
   it repeat; a repeating timer keeps its interval beside its other extras. */
static void extras_made_after_creation_keep_a_one_shot_timer_one_shot(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef once = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0, rl_test_count_fire, NULL);
    RLRunLoopTimerSetTolerance(once, 0.5);
    RL_ASSERT(!RLRunLoopTimerDoesRepeat(once));
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetInterval(once), 0);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetTolerance(once), 0.5);
    RLRunLoopTimerRef every = rl_test_timer(RLAbsoluteTimeGetCurrent() + 1000, 2.0, rl_test_count_fire, NULL);
    RLRunLoopTimerSetTolerance(every, 5.0);
    RL_ASSERT(RLRunLoopTimerDoesRepeat(every));
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetInterval(every), 2.0);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetTolerance(every), 1.0); /* at most half the interval */
    RLRunLoopAddTimer(rl, once, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(rl, every, kRLRunLoopDefaultMode);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, true);
    RL_ASSERT_EQ_INT(rl_test_fired, 1);
    RL_ASSERT(!RLRunLoopTimerIsValid(once) && RLRunLoopTimerIsValid(every));
    RLRunLoopTimerInvalidate(every);
    RLRelease(once);
    RLRelease(every);
}

static void timer_with_tolerance_fires_no_earlier_than_its_date(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    static early_rec r;
    RLRunLoopTimerRef t = early_rec_timer(&r, 0.05);
    RLRunLoopTimerSetTolerance(t, 0.05);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(rl_test_fired, 1);
    assert_not_early(&r);
    RLRelease(t);
}

/* ---- invalidate ---- */

static void invalidate_self_timer(RLRunLoopTimerRef t, void *info) {
    (void)info;
    rl_test_fired++;
    RLRunLoopTimerInvalidate(t);
    RL_ASSERT(!RLRunLoopTimerIsValid(t));
}

static void repeating_timer_can_invalidate_itself_in_its_callout(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0, 0.001, invalidate_self_timer, NULL);
    RLRunLoopAddTimer(rl, t, kRLRunLoopCommonModes);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(rl_test_fired, 1);
    RL_ASSERT(!RLRunLoopContainsTimer(rl, t, kRLRunLoopCommonModes));
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetNextFireDate(t), 0);
    RLRelease(t);
}

static rl_test_counted g_info;

static void invalidate_releases_the_info_and_getters_work(void) {
    RLRunLoopTimerContext c = {0, &g_info, rl_test_counted_retain, rl_test_counted_release, NULL};
    RLAbsoluteTime fire = RLAbsoluteTimeGetCurrent() + 100;
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(fire, 2.5, 0, 9, rl_test_count_fire, &c);
    RL_ASSERT(t != NULL);
    RL_ASSERT_EQ_INT(g_info.refs, 1);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetNextFireDate(t), fire);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetInterval(t), 2.5);
    RL_ASSERT(RLRunLoopTimerDoesRepeat(t));
    RL_ASSERT_EQ_INT(RLRunLoopTimerGetOrder(t), 9);
    RLRunLoopTimerContext got;
    memset(&got, 0, sizeof got);
    RLRunLoopTimerGetContext(t, &got);
    RL_ASSERT(got.info == &g_info && got.retain == rl_test_counted_retain && got.release == rl_test_counted_release);
    RLRunLoopAddTimer(RLRunLoopGetCurrent(), t, kRLRunLoopDefaultMode);
    RLRunLoopTimerInvalidate(t);
    RL_ASSERT(!RLRunLoopTimerIsValid(t));
    RL_ASSERT_EQ_INT(g_info.refs, 0);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetNextFireDate(t), 0);
    RLRelease(t);
    RL_ASSERT_EQ_INT(g_info.refs, 0);
    RL_ASSERT_EQ_INT(g_info.retains, g_info.releases);
}

/* ---- RLRunLoopGetNextTimerFireDate ---- */

static void next_timer_fire_date_of_a_mode(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, kRLRunLoopDefaultMode), 0);
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, "never-named"), 0);
    RLAbsoluteTime now = RLAbsoluteTimeGetCurrent();
    RLRunLoopTimerRef a = rl_test_timer(now + 10, 0, rl_test_count_fire, NULL);
    RLRunLoopTimerRef b = rl_test_timer(now + 5, 0, rl_test_count_fire, NULL);
    RLRunLoopTimerRef c = rl_test_timer(now + 1, 0, rl_test_count_fire, NULL);
    RLRunLoopTimerRef d = rl_test_timer(now + 3, 0, rl_test_count_fire, NULL);
    RLRunLoopAddTimer(rl, a, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(rl, b, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(rl, c, "other");
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, kRLRunLoopDefaultMode), now + 5);
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, "other"), now + 1);
    /* Common modes: the earliest in any common mode. */
    RLRunLoopAddCommonMode(rl, "other");
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, kRLRunLoopCommonModes), now + 1);
    /* Only valid timers count. */
    RLRunLoopTimerInvalidate(b);
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, kRLRunLoopDefaultMode), now + 10);
    RLRunLoopAddTimer(rl, d, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, kRLRunLoopDefaultMode), now + 3);
    RLRunLoopTimerSetNextFireDate(d, now + 20);
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, kRLRunLoopDefaultMode), now + 10);
    RLRunLoopRemoveTimer(rl, a, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, kRLRunLoopDefaultMode), now + 20);
    RLRunLoopTimerInvalidate(d);
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, kRLRunLoopDefaultMode), 0);
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(NULL, kRLRunLoopDefaultMode), 0);
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, NULL), 0);
    RLRunLoopTimerInvalidate(a);
    RLRunLoopTimerInvalidate(c);
    RLRelease(a);
    RLRelease(b);
    RLRelease(c);
    RLRelease(d);
}

/* ---- many timers ---- */

static unsigned char *g_fired;
static void mark_fired(RLRunLoopTimerRef t, void *info) {
    (void)t;
    g_fired[(intptr_t)info]++;
    rl_test_fired++;
}

static void ten_thousand_timers_all_fire_once(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    long n = rl_test_scaled(10000);
    g_fired = calloc((size_t)n, 1);
    RLRunLoopTimerRef *t = calloc((size_t)n, sizeof *t);
    RLAbsoluteTime now = rl_test_loop_time();
    rl_test_advance(0.1);
    for (long i = 0; i < n; i++) {
        t[i] = rl_test_timer(now + (double)((i * 7919) % 100) * 0.001, 0, mark_fired, (void *)(intptr_t)i);
        RLRunLoopAddTimer(rl, t[i], kRLRunLoopDefaultMode);
        RLRelease(t[i]); /* the loop holds them */
    }
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 60, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(rl_test_fired, n);
    for (long i = 0; i < n; i++) RL_ASSERT_EQ_INT(g_fired[i], 1);
    free(g_fired);
    free(t);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(timer_fires_no_earlier_than_its_fire_date),
        RL_TEST(timer_callout_gets_the_timer_and_info),
        RL_TEST(one_shot_timer_is_invalidated_after_firing),
        RL_TEST(one_shot_timer_moved_in_its_callout_is_still_invalidated),
        RL_TEST(repeating_timer_stays_on_its_grid_and_fires_once_when_late),
        RL_TEST(repeating_timer_far_behind_fires_once_then_skips_ahead),
        RL_TEST(repeating_timer_created_in_the_past_keeps_the_phase_of_its_fire_date),
        RL_TEST(repeating_timer_fires_repeatedly),
        RL_TEST(repeating_timer_moved_later_in_its_callout_keeps_the_new_date),
        RL_TEST(timers_with_the_same_fire_date_fire_in_insertion_order),
        RL_TEST(timers_fire_in_fire_date_order),
        RL_TEST(thousands_of_due_timers_fire_in_date_then_insertion_order),
        RL_TEST(timer_belongs_to_one_run_loop),
        RL_TEST(timer_in_two_modes_fires_in_either),
        RL_TEST(timer_in_three_modes_calls_out_with_itself_from_every_slot),
        RL_TEST(set_next_fire_date_from_another_thread_rearms_a_sleeping_loop),
        RL_TEST(timer_added_from_another_thread_fires_in_a_sleeping_loop),
        RL_TEST(timers_created_added_and_released_on_other_threads_fire_once_on_time),
        RL_TEST(set_next_fire_date_earlier_and_later),
        RL_TEST(tolerance_is_clamped),
        RL_TEST(extras_made_after_creation_keep_a_one_shot_timer_one_shot),
        RL_TEST(timer_with_tolerance_fires_no_earlier_than_its_date),
        RL_TEST(repeating_timer_can_invalidate_itself_in_its_callout),
        RL_TEST(invalidate_releases_the_info_and_getters_work),
        RL_TEST(next_timer_fire_date_of_a_mode),
        RL_TEST(ten_thousand_timers_all_fire_once),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
