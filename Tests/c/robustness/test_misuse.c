/* test_misuse.c: the core used against its rules, one case at a time, each
   against what CRunLoop.h promises: items invalidated while in the common
   set, added twice or to two loops, their last reference released from
   inside their own callout; extreme dates and grids, a due timer re-dated by
   an earlier callout of the pass; runs in the common modes' name, stop and
   wake-up of loops that do not run, work queued to a dead loop, sources
   without callbacks. Each ends by checking that the loop still works.
   (test_badinput.c gives the core bad arguments; test_badinput_extras.c the
   Linux extras.) */
#include <CRunLoop.h>
#include "rltest.h"
#include "rltest_badinput.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <pthread.h>
#include <stdatomic.h>

/* Counting context callbacks. */
typedef struct {
    int retains, releases, schedules, cancels;
} counts;
static const void *c_retain(const void *info) {
    ((counts *)info)->retains++;
    return info;
}
static void c_release(const void *info) {
    ((counts *)info)->releases++;
}
static void c_schedule(void *info, RLRunLoopRef rl, RLRunLoopMode mode) {
    (void)rl;
    (void)mode;
    ((counts *)info)->schedules++;
}
static void c_cancel(void *info, RLRunLoopRef rl, RLRunLoopMode mode) {
    (void)rl;
    (void)mode;
    ((counts *)info)->cancels++;
}

static RLRunLoopSourceRef counted_source(counts *c, void (*perform)(void *)) {
    RLRunLoopSourceContext ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.info = c;
    ctx.retain = c_retain;
    ctx.release = c_release;
    ctx.schedule = c_schedule;
    ctx.cancel = c_cancel;
    ctx.perform = perform;
    return RLRunLoopSourceCreate(0, &ctx);
}

/* ---- invalidation leaves nothing behind, the common set included ---- */

/* CRunLoop.h: RLRunLoopSourceInvalidate "removes the source from every mode
   of every loop". A source added to the common modes and then removed from
   each common mode by name is still in the loop's common set (Contains with
   kRLRunLoopCommonModes is true); invalidating it must take it out of that
   set too, or the loop keeps a reference and the info is never released
   while the loop lives. */
static void invalidated_source_leaves_the_common_set(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    counts c = {0};
    RLRunLoopSourceRef s = counted_source(&c, rl_test_count_perform);
    RLRunLoopAddSource(rl, s, kRLRunLoopCommonModes);
    RLRunLoopRemoveSource(rl, s, kRLRunLoopDefaultMode); /* the only common mode */
    RL_ASSERT(!RLRunLoopContainsSource(rl, s, kRLRunLoopDefaultMode));
    RL_ASSERT(RLRunLoopContainsSource(rl, s, kRLRunLoopCommonModes));
    RLRunLoopSourceInvalidate(s);
    RL_ASSERT(!RLRunLoopContainsSource(rl, s, kRLRunLoopCommonModes));
    RLRelease(s);
    RL_ASSERT_EQ_INT(c.releases, 1); /* freed: nothing holds it */
    RL_ASSERT_EQ_INT(c.schedules, c.cancels);
    /* A mode made common later must not receive the invalid source. */
    RLRunLoopAddCommonMode(rl, "later");
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("later", 0.01, false), kRLRunLoopRunFinished);
    assert_loop_still_works();
}

/* The same for timers and observers (these pass: they track the common set). */
static void invalidated_timer_and_observer_leave_the_common_set(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    counts ct = {0}, co = {0};
    RLRunLoopTimerContext tc = {0, &ct, c_retain, c_release, NULL};
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 100, 0, 0, 0, rl_test_count_fire, &tc);
    RLRunLoopObserverContext oc = {0, &co, c_retain, c_release, NULL};
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopAllActivities, true, 0, rl_test_count_observe, &oc);
    RLRunLoopAddTimer(rl, t, kRLRunLoopCommonModes);
    RLRunLoopAddObserver(rl, o, kRLRunLoopCommonModes);
    RLRunLoopRemoveTimer(rl, t, kRLRunLoopDefaultMode);
    RLRunLoopRemoveObserver(rl, o, kRLRunLoopDefaultMode);
    RL_ASSERT(RLRunLoopContainsTimer(rl, t, kRLRunLoopCommonModes));
    RL_ASSERT(RLRunLoopContainsObserver(rl, o, kRLRunLoopCommonModes));
    RLRunLoopTimerInvalidate(t);
    RLRunLoopObserverInvalidate(o);
    RL_ASSERT(!RLRunLoopContainsTimer(rl, t, kRLRunLoopCommonModes));
    RL_ASSERT(!RLRunLoopContainsObserver(rl, o, kRLRunLoopCommonModes));
    RLRelease(t);
    RLRelease(o);
    RL_ASSERT_EQ_INT(ct.releases, 1);
    RL_ASSERT_EQ_INT(co.releases, 1);
    assert_loop_still_works();
}

/* ---- the same item added twice; a source in two loops ---- */

static void same_item_added_twice_is_there_once(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    counts c = {0};
    RLRunLoopSourceRef s = counted_source(&c, rl_test_count_perform);
    rl_test_log log = {0};
    RLRunLoopObserverRef o = rl_test_log_observer(kRLRunLoopEntry, 0, &log);
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0, rl_test_count_fire, NULL);
    for (int i = 0; i < 3; i++) {
        RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
        RLRunLoopAddSource(rl, s, kRLRunLoopCommonModes); /* default is common: already there */
        RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
        RLRunLoopAddObserver(rl, o, kRLRunLoopCommonModes);
        RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
        RLRunLoopAddTimer(rl, t, kRLRunLoopCommonModes);
    }
    RL_ASSERT_EQ_INT(c.schedules, 1);
    RLRunLoopSourceSignal(s);
    RLRunLoopSourceSignal(s);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 2);   /* one perform, one timer fire */
    RL_ASSERT_LOG(&log, kRLRunLoopEntry); /* the observer once */
    /* One removal by name takes it out of the mode, though added twice; it
       stays in the common set until removed from it. */
    RLRunLoopRemoveSource(rl, s, kRLRunLoopDefaultMode);
    RL_ASSERT(!RLRunLoopContainsSource(rl, s, kRLRunLoopDefaultMode));
    RL_ASSERT_EQ_INT(c.cancels, 1);
    RLRunLoopRemoveSource(rl, s, kRLRunLoopCommonModes);
    RL_ASSERT(!RLRunLoopContainsSource(rl, s, kRLRunLoopCommonModes));
    RL_ASSERT_EQ_INT(c.cancels, 1);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
    RLRelease(t);
    RLRelease(s);
    RL_ASSERT_EQ_INT(c.releases, 1);
    assert_loop_still_works();
}

static RLRunLoopSourceRef g_two_loop_src;
static atomic_int g_peer_state;
static RLRunLoopRef g_peer_rl;
static void *hold_source_in_own_loop(void *arg) {
    (void)arg;
    g_peer_rl = RLRunLoopGetCurrent();
    RLRunLoopAddSource(g_peer_rl, g_two_loop_src, "peer");
    atomic_store(&g_peer_state, 1);
    while (atomic_load(&g_peer_state) != 2) rl_test_sleep(0.001);
    /* Invalidated by the other thread: gone from this loop too. */
    int still = RLRunLoopContainsSource(g_peer_rl, g_two_loop_src, "peer");
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("peer", 0.01, false), kRLRunLoopRunFinished);
    return (void *)(intptr_t)still;
}

static void source_in_two_loops_is_invalidated_in_both(void) {
    counts c = {0};
    g_two_loop_src = counted_source(&c, rl_test_count_perform);
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopAddSource(rl, g_two_loop_src, kRLRunLoopDefaultMode);
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, hold_source_in_own_loop, NULL), 0);
    while (atomic_load(&g_peer_state) != 1) rl_test_sleep(0.001);
    RL_ASSERT_EQ_INT(c.schedules, 2);
    RLRunLoopSourceInvalidate(g_two_loop_src);
    RL_ASSERT_EQ_INT(c.cancels, 2);
    atomic_store(&g_peer_state, 2);
    void *still = (void *)1;
    pthread_join(th, &still);
    RL_ASSERT(still == NULL);
    RL_ASSERT(!RLRunLoopContainsSource(rl, g_two_loop_src, kRLRunLoopDefaultMode));
    RLRelease(g_two_loop_src);
    RL_ASSERT_EQ_INT(c.releases, 1);
    assert_loop_still_works();
}

/* ---- release of the last reference from inside the item's own callout ---- */

static RLRunLoopSourceRef g_self_src;
static RLRunLoopTimerRef g_self_timer;
static RLRunLoopObserverRef g_self_obs;
static void release_self_source(void *info) {
    (void)info;
    rl_test_calls++;
    RLRunLoopSourceInvalidate(g_self_src);
    RLRelease(g_self_src); /* our last reference; the loop's callout holds one */
}
static void release_self_timer(RLRunLoopTimerRef t, void *info) {
    (void)info;
    rl_test_calls++;
    RLRunLoopTimerInvalidate(t);
    RLRelease(g_self_timer);
}
static void release_self_obs(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)a;
    (void)info;
    rl_test_calls++;
    RLRunLoopObserverInvalidate(o);
    RLRelease(g_self_obs);
}

static void last_reference_released_inside_own_callout(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    g_self_src = rl_test_source0(0, release_self_source, NULL);
    g_self_timer = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0.001, release_self_timer, NULL);
    g_self_obs = RLRunLoopObserverCreate(kRLRunLoopBeforeSources, true, 0, release_self_obs, NULL);
    RLRunLoopAddSource(rl, g_self_src, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(rl, g_self_timer, kRLRunLoopDefaultMode);
    RLRunLoopAddObserver(rl, g_self_obs, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(g_self_src);
    /* A generous limit: the run ends as soon as the mode is empty, and a
       loaded machine under valgrind may need more than a tenth of a second. */
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false);
    RL_ASSERT(r == kRLRunLoopRunFinished); /* everything left the mode */
    RL_ASSERT_EQ_INT(rl_test_calls, 3);
    assert_loop_still_works();
}

/* ---- extreme dates ---- */

static void extreme_fire_dates_and_grids(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    /* A 1 µs grid that starts in the distant past: fires once (however
       late), lands on a finite future date, and does not hang the loop. */
    RLRunLoopTimerRef old_fast = rl_test_timer(-1e300, 1e-9, rl_test_count_fire, NULL);
    RLRunLoopTimerRef dmax = rl_test_timer(DBL_MAX, 0, rl_test_count_fire, NULL);
    RLRunLoopTimerRef dmin = rl_test_timer(-DBL_MAX, 0, rl_test_count_fire, NULL);
    RLRunLoopTimerRef denorm = rl_test_timer(DBL_MIN / 4, 0, rl_test_count_fire, NULL); /* 2001 + tiny: past */
    RLRunLoopTimerRef all[] = {old_fast, dmax, dmin, denorm};
    for (int i = 0; i < 4; i++) {
        RL_ASSERT(all[i] != NULL);
        RL_ASSERT(isfinite(RLRunLoopTimerGetNextFireDate(all[i])));
        RLRunLoopAddTimer(rl, all[i], kRLRunLoopDefaultMode);
    }
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 3); /* old_fast, dmin, denorm */
    RLAbsoluteTime next = RLRunLoopTimerGetNextFireDate(old_fast);
    RL_ASSERT(isfinite(next));
    RL_ASSERT_GE_DBL(next, RLAbsoluteTimeGetCurrent() - 1);
    /* SetNextFireDate with the same extremes, on a valid repeating timer. */
    RLRunLoopTimerSetNextFireDate(old_fast, DBL_MAX);
    RL_ASSERT_LE_DBL(RLRunLoopTimerGetNextFireDate(old_fast), 4039289856.0 + 1);
    RLRunLoopTimerSetNextFireDate(old_fast, -DBL_MAX);
    RL_ASSERT(isfinite(RLRunLoopTimerGetNextFireDate(old_fast)));
    double t0 = rl_test_now();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LE_DBL(rl_test_now() - t0, 10);
    RL_ASSERT_GE_INT(rl_test_calls, 4);
    /* The earliest date of the mode stays finite with a clamped timer in it. */
    RL_ASSERT(isfinite(RLRunLoopGetNextTimerFireDate(rl, kRLRunLoopDefaultMode)));
    for (int i = 0; i < 4; i++) {
        RLRunLoopTimerInvalidate(all[i]);
        RLRelease(all[i]);
    }
    RLRelease(keep);
    rl_test_calls = 0;
    assert_loop_still_works();
}

static void repeating_timer_tolerance_is_clamped_to_half_the_interval(void) {
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent() + 10, 0.01, rl_test_count_fire, NULL);
    RLRunLoopTimerSetTolerance(t, 1e300);
    RL_ASSERT_LE_DBL(RLRunLoopTimerGetTolerance(t), 0.005);
    RLRunLoopTimerSetTolerance(t, INFINITY);
    RL_ASSERT_LE_DBL(RLRunLoopTimerGetTolerance(t), 0.005);
    RLRunLoopTimerSetTolerance(t, -0.0);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetTolerance(t), 0);
    RLRunLoopTimerSetTolerance(t, NAN);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetTolerance(t), 0);
    RLRunLoopTimerInvalidate(t);
    RLRunLoopTimerSetTolerance(t, 0.001); /* invalidated: no crash */
    RLRelease(t);
    assert_loop_still_works();
}

/* ---- a due timer re-dated into the future before it fires ---- */

/* README "Timers fire no earlier than their date". Two timers are due in the
   same pass; the first one's callout moves the second one's date 10 s into
   the future. CF re-checks the date before each callout of the batch
   (__CFRunLoopDoTimer: fireTSR <= now), so the second one must not fire
   now. (Found by the fuzz target; the same happens when another thread
   re-dates a timer the loop has just collected.) */
static RLRunLoopTimerRef g_later;
static int g_later_fires;
static void redate_the_other(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    rl_test_calls++;
    RLRunLoopTimerSetNextFireDate(g_later, RLAbsoluteTimeGetCurrent() + 10);
}
static void later_fired(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    g_later_fires++;
}

static void timer_redated_by_an_earlier_callout_of_the_pass_waits(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLAbsoluteTime past = RLAbsoluteTimeGetCurrent() - 1;
    RLRunLoopTimerRef first = rl_test_timer(past, 0, redate_the_other, NULL);
    g_later = rl_test_timer(past + 0.001, 0, later_fired, NULL);
    RLRunLoopAddTimer(rl, first, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(rl, g_later, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RL_ASSERT_EQ_INT(g_later_fires, 0);
    RL_ASSERT(RLRunLoopTimerIsValid(g_later));
    RL_ASSERT_GE_DBL(RLRunLoopTimerGetNextFireDate(g_later), RLAbsoluteTimeGetCurrent() + 5);
    RLRunLoopTimerInvalidate(g_later);
    RLRelease(g_later);
    RLRelease(first);
    RLRelease(keep);
    rl_test_calls = 0;
    assert_loop_still_works();
}

/* ---- run, stop and wake-up edge cases ---- */

static void run_in_the_common_modes_name_finishes_at_once(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopCommonModes);
    rl_test_log log = {0};
    RLRunLoopObserverRef o = rl_test_log_observer(kRLRunLoopAllActivities, 0, &log);
    RLRunLoopAddObserver(rl, o, kRLRunLoopCommonModes);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopCommonModes, 0.05, false), kRLRunLoopRunFinished);
    char name[] = "kCFRunLoopCommonModes"; /* equal by content */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(name, 0.05, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(log.n, 0);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
    assert_loop_still_works();
}

static void stop_and_wakeup_of_a_loop_that_is_not_running_are_forgotten(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopStop(rl);
    RLRunLoopStop(rl);
    RLRunLoopWakeUp(rl);
    double t0 = rl_test_now();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_GE_DBL(rl_test_now() - t0, 0.04); /* it slept: the early wake-up was dropped */
    RLRelease(keep);
    assert_loop_still_works();
}

/* ---- queued work refused: release still called exactly once ---- */

static int g_fn_runs, g_releases;
static void fn_run(void *info) {
    (void)info;
    g_fn_runs++;
}
static void fn_release(void *info) {
    (void)info;
    g_releases++;
}

static void refused_work_is_released_once(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopPerformFunctionWithRelease(NULL, kRLRunLoopDefaultMode, fn_run, NULL, fn_release);
    RLRunLoopPerformFunctionWithRelease(rl, NULL, fn_run, NULL, fn_release);
    RLRunLoopPerformFunctionWithRelease(rl, "", fn_run, NULL, fn_release);
    RLRunLoopPerformFunctionWithRelease(rl, kRLRunLoopDefaultMode, NULL, NULL, fn_release);
    RLRunLoopPerformFunctionWithRelease(rl, kRLRunLoopDefaultMode, fn_run, NULL, NULL); /* fine: no release */
    RL_ASSERT_EQ_INT(g_releases, 4);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(g_fn_runs, 1);
    RL_ASSERT_EQ_INT(g_releases, 4);
    assert_loop_still_works();
}

/* A retained loop whose thread exited: adds, queued work and runs are
   ignored (CRunLoop.h, RLRunLoopGetCurrent). */
static void *return_retained_loop(void *arg) {
    (void)arg;
    return (void *)RLRetain(RLRunLoopGetCurrent());
}

static void dead_loop_ignores_everything(void) {
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, return_retained_loop, NULL), 0);
    void *p = NULL;
    pthread_join(th, &p);
    RLRunLoopRef dead = p;
    RL_ASSERT(dead != NULL);
    counts c = {0};
    RLRunLoopSourceRef s = counted_source(&c, rl_test_count_perform);
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0, rl_test_count_fire, NULL);
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopAllActivities, true, 0, rl_test_count_observe, NULL);
    RLRunLoopAddSource(dead, s, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(dead, t, kRLRunLoopCommonModes);
    RLRunLoopAddObserver(dead, o, "m");
    RLRunLoopAddCommonMode(dead, "m");
    RL_ASSERT(!RLRunLoopContainsSource(dead, s, kRLRunLoopDefaultMode));
    RL_ASSERT(!RLRunLoopContainsTimer(dead, t, kRLRunLoopCommonModes));
    RL_ASSERT(!RLRunLoopContainsObserver(dead, o, "m"));
    RL_ASSERT_EQ_INT(c.schedules, 0);
    RLRunLoopPerformFunctionWithRelease(dead, kRLRunLoopDefaultMode, fn_run, NULL, fn_release);
    RL_ASSERT_EQ_INT(g_releases, 1);
    RLRunLoopWakeUp(dead);
    RLRunLoopStop(dead);
    RL_ASSERT(!RLRunLoopIsWaiting(dead));
    RL_ASSERT(RLRunLoopCopyCurrentMode(dead) == NULL);
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(dead, kRLRunLoopDefaultMode), 0);
    char **modes = RLRunLoopCopyAllModes(dead);
    rl_test_free_list(modes);
    char *d = RLCopyDescription(dead);
    RL_ASSERT(d != NULL);
    free(d);
    /* The items still work on a live loop. */
    RLRunLoopAddTimer(RLRunLoopGetCurrent(), t, kRLRunLoopDefaultMode);
    RL_ASSERT(RLRunLoopContainsTimer(RLRunLoopGetCurrent(), t, kRLRunLoopDefaultMode));
    /* Finished as soon as the one-shot timer fired (generous limit: valgrind). */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RLRelease(s);
    RLRelease(t);
    RLRelease(o);
    RLRelease(dead);
    RL_ASSERT_EQ_INT(g_fn_runs, 0);
    assert_loop_still_works();
}

/* ---- version-0 source with no perform; version-1 with no fd callback ---- */

static void sources_without_callbacks_do_not_crash(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceContext c0;
    memset(&c0, 0, sizeof c0);
    RLRunLoopSourceRef s0 = RLRunLoopSourceCreate(0, &c0); /* no perform */
    RLRunLoopSourceContext1 c1;
    memset(&c1, 0, sizeof c1);
    c1.version = 1;
    RLRunLoopSourceRef s1 = RLRunLoopSourceCreate(0, (RLRunLoopSourceContext *)&c1); /* no getFileDescriptor */
    RL_ASSERT(s0 != NULL && s1 != NULL);
    RLRunLoopAddSource(rl, s0, kRLRunLoopDefaultMode);
    RLRunLoopAddSource(rl, s1, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(s0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.02, false), kRLRunLoopRunTimedOut);
    char *d = RLCopyDescription(rl);
    RL_ASSERT(d != NULL);
    free(d);
    RLRunLoopSourceInvalidate(s0);
    RLRunLoopSourceInvalidate(s1);
    RLRelease(s0);
    RLRelease(s1);
    assert_loop_still_works();
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(invalidated_source_leaves_the_common_set),
        RL_TEST(invalidated_timer_and_observer_leave_the_common_set),
        RL_TEST(same_item_added_twice_is_there_once),
        RL_TEST(source_in_two_loops_is_invalidated_in_both),
        RL_TEST(last_reference_released_inside_own_callout),
        RL_TEST(extreme_fire_dates_and_grids),
        RL_TEST(repeating_timer_tolerance_is_clamped_to_half_the_interval),
        RL_TEST(timer_redated_by_an_earlier_callout_of_the_pass_waits),
        RL_TEST(run_in_the_common_modes_name_finishes_at_once),
        RL_TEST(stop_and_wakeup_of_a_loop_that_is_not_running_are_forgotten),
        RL_TEST(refused_work_is_released_once),
        RL_TEST(dead_loop_ignores_everything),
        RL_TEST(sources_without_callbacks_do_not_crash),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
