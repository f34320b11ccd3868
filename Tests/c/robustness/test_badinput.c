/* test_badinput.c: every bad argument the core's headers name (NULL
   objects, NULL or empty mode names, bad context versions, NaN, negative and
   huge dates, intervals, timeouts and tolerances, invalid descriptors,
   objects of another loop or already invalidated) is ignored or clamped as
   documented, never crashes, and leaves the loop working. */
#include <CRunLoop.h>
#include "rltest.h"
#include "rltest_badinput.h"

#include <fcntl.h>
#include <pthread.h>

static void null_objects_are_ignored(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RL_ASSERT(RLRetain(NULL) == NULL);
    RLRelease(NULL);
    RL_ASSERT(RLRunLoopCopyCurrentMode(NULL) == NULL);
    RL_ASSERT(RLRunLoopCopyAllModes(NULL) == NULL);
    RLRunLoopAddCommonMode(NULL, "x");
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(NULL, kRLRunLoopDefaultMode), 0);
    RL_ASSERT(!RLRunLoopIsWaiting(NULL));
    RLRunLoopWakeUp(NULL);
    RLRunLoopStop(NULL);
    RLRunLoopPerformFunction(NULL, kRLRunLoopDefaultMode, rl_test_count_perform, NULL);
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, NULL, NULL);

    RL_ASSERT(!RLRunLoopContainsSource(NULL, NULL, kRLRunLoopDefaultMode));
    RL_ASSERT(!RLRunLoopContainsSource(rl, NULL, kRLRunLoopDefaultMode));
    RLRunLoopAddSource(NULL, NULL, kRLRunLoopDefaultMode);
    RLRunLoopAddSource(rl, NULL, kRLRunLoopDefaultMode);
    RLRunLoopAddSource(rl, NULL, kRLRunLoopCommonModes);
    RLRunLoopRemoveSource(rl, NULL, kRLRunLoopDefaultMode);
    RLRunLoopRemoveSource(NULL, NULL, kRLRunLoopCommonModes);
    RL_ASSERT(!RLRunLoopContainsObserver(rl, NULL, kRLRunLoopDefaultMode));
    RLRunLoopAddObserver(rl, NULL, kRLRunLoopDefaultMode);
    RLRunLoopAddObserver(NULL, NULL, kRLRunLoopCommonModes);
    RLRunLoopRemoveObserver(rl, NULL, kRLRunLoopDefaultMode);
    RL_ASSERT(!RLRunLoopContainsTimer(rl, NULL, kRLRunLoopDefaultMode));
    RLRunLoopAddTimer(rl, NULL, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(NULL, NULL, kRLRunLoopCommonModes);
    RLRunLoopRemoveTimer(rl, NULL, kRLRunLoopDefaultMode);

    RL_ASSERT(RLRunLoopSourceCreate(0, NULL) == NULL);
    RL_ASSERT_EQ_INT(RLRunLoopSourceGetOrder(NULL), 0);
    RLRunLoopSourceInvalidate(NULL);
    RL_ASSERT(!RLRunLoopSourceIsValid(NULL));
    RLRunLoopSourceSignal(NULL);
    RLRunLoopSourceContext sc;
    memset(&sc, 0x5A, sizeof sc);
    RLRunLoopSourceGetContext(NULL, &sc);
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopSourceGetContext(s, NULL);
    RLRelease(s);

    RL_ASSERT(RLRunLoopObserverCreate(kRLRunLoopAllActivities, true, 0, NULL, NULL) == NULL);
    RL_ASSERT_EQ_INT(RLRunLoopObserverGetActivities(NULL), 0);
    RL_ASSERT(!RLRunLoopObserverDoesRepeat(NULL));
    RL_ASSERT_EQ_INT(RLRunLoopObserverGetOrder(NULL), 0);
    RLRunLoopObserverInvalidate(NULL);
    RL_ASSERT(!RLRunLoopObserverIsValid(NULL));
    RLRunLoopObserverContext oc;
    RLRunLoopObserverGetContext(NULL, &oc);
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopEntry, true, 0, rl_test_count_observe, NULL);
    RLRunLoopObserverGetContext(o, NULL);
    RLRelease(o);

    RL_ASSERT(RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent(), 1, 0, 0, NULL, NULL) == NULL);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetNextFireDate(NULL), 0);
    RLRunLoopTimerSetNextFireDate(NULL, 0);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetInterval(NULL), 0);
    RL_ASSERT(!RLRunLoopTimerDoesRepeat(NULL));
    RL_ASSERT_EQ_INT(RLRunLoopTimerGetOrder(NULL), 0);
    RLRunLoopTimerInvalidate(NULL);
    RL_ASSERT(!RLRunLoopTimerIsValid(NULL));
    RLRunLoopTimerSetTolerance(NULL, 1);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetTolerance(NULL), 0);
    RLRunLoopTimerContext tc;
    RLRunLoopTimerGetContext(NULL, &tc);
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0, rl_test_count_fire, NULL);
    RLRunLoopTimerGetContext(t, NULL);
    RLRelease(t);

    char *d = RLCopyDescription(NULL);
    RL_ASSERT_STR_EQ(d, "(null)");
    free(d);
    RL_ASSERT_EQ_INT(rl_test_calls, 0);
    assert_loop_still_works();
}

static void null_and_empty_mode_names_are_ignored(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0, rl_test_count_fire, NULL);
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopAllActivities, true, 0, rl_test_count_observe, NULL);
    RLRunLoopMode bad[] = {NULL, ""};
    for (int i = 0; i < 2; i++) {
        RLRunLoopAddSource(rl, s, bad[i]);
        RLRunLoopAddTimer(rl, t, bad[i]);
        RLRunLoopAddObserver(rl, o, bad[i]);
        RL_ASSERT(!RLRunLoopContainsSource(rl, s, bad[i]));
        RL_ASSERT(!RLRunLoopContainsTimer(rl, t, bad[i]));
        RL_ASSERT(!RLRunLoopContainsObserver(rl, o, bad[i]));
        RLRunLoopRemoveSource(rl, s, bad[i]);
        RLRunLoopRemoveTimer(rl, t, bad[i]);
        RLRunLoopRemoveObserver(rl, o, bad[i]);
        RLRunLoopAddCommonMode(rl, bad[i]);
        RLRunLoopPerformFunction(rl, bad[i], rl_test_count_perform, NULL);
        RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, bad[i]), 0);
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(bad[i], 0.1, false), kRLRunLoopRunFinished);
    }
    RLRunLoopAddCommonMode(rl, kRLRunLoopCommonModes);
    /* Nothing landed anywhere: the default mode is still empty and no mode
       named "" exists. */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false), kRLRunLoopRunFinished);
    char **m = RLRunLoopCopyAllModes(rl);
    RL_ASSERT(!rl_test_list_has(m, ""));
    RL_ASSERT(!rl_test_list_has(m, "kCFRunLoopCommonModes"));
    rl_test_free_list(m);
    RL_ASSERT_EQ_INT(rl_test_calls, 0);
    /* The items themselves still work. */
    RLRunLoopAddSource(rl, s, "fine");
    RLRunLoopSourceSignal(s);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("fine", 1, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    RLRelease(t);
    RLRelease(o);
    assert_loop_still_works();
}

static void source_context_with_a_bad_version_is_refused(void) {
    RLRunLoopSourceContext c;
    memset(&c, 0, sizeof c);
    c.perform = rl_test_count_perform;
    c.version = 2;
    RL_ASSERT(RLRunLoopSourceCreate(0, &c) == NULL);
    c.version = -1;
    RL_ASSERT(RLRunLoopSourceCreate(0, &c) == NULL);
    assert_loop_still_works();
}

/* ---- timers: NaN, negative and huge dates and intervals ---- */

static void bad_intervals_are_clamped(void) {
    RLAbsoluteTime now = RLAbsoluteTimeGetCurrent();
    RLRunLoopTimerRef nan_i = rl_test_timer(now, NAN, rl_test_count_fire, NULL);
    RLRunLoopTimerRef neg_i = rl_test_timer(now, -5, rl_test_count_fire, NULL);
    RLRunLoopTimerRef ninf_i = rl_test_timer(now, -INFINITY, rl_test_count_fire, NULL);
    RLRunLoopTimerRef huge_i = rl_test_timer(now, 1e300, rl_test_count_fire, NULL);
    RLRunLoopTimerRef inf_i = rl_test_timer(now, INFINITY, rl_test_count_fire, NULL);
    RLRunLoopTimerRef tiny_i = rl_test_timer(now + 1000, 1e-12, rl_test_count_fire, NULL);
    RL_ASSERT(nan_i && neg_i && ninf_i && huge_i && inf_i && tiny_i);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetInterval(nan_i), 0);
    RL_ASSERT(!RLRunLoopTimerDoesRepeat(nan_i));
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetInterval(neg_i), 0);
    RL_ASSERT(!RLRunLoopTimerDoesRepeat(neg_i));
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetInterval(ninf_i), 0);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetInterval(huge_i), 504911232.0);
    RL_ASSERT(RLRunLoopTimerDoesRepeat(huge_i));
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetInterval(inf_i), 504911232.0);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetInterval(tiny_i), 1e-6);
    RL_ASSERT(RLRunLoopTimerDoesRepeat(tiny_i));
    /* The clamped one-shots fire once; the huge-interval ones fire once and
       are not due again for 16 years. */
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef all[] = {nan_i, neg_i, ninf_i, huge_i, inf_i};
    for (int i = 0; i < 5; i++) RLRunLoopAddTimer(rl, all[i], kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 5);
    RL_ASSERT(!RLRunLoopTimerIsValid(nan_i) && !RLRunLoopTimerIsValid(neg_i) && !RLRunLoopTimerIsValid(ninf_i));
    RL_ASSERT(RLRunLoopTimerIsValid(huge_i) && RLRunLoopTimerIsValid(inf_i));
    RL_ASSERT_GE_DBL(RLRunLoopTimerGetNextFireDate(huge_i), now + 504911232.0 - 1);
    RL_ASSERT(isfinite(RLRunLoopTimerGetNextFireDate(inf_i)));
    RLRunLoopTimerInvalidate(huge_i);
    RLRunLoopTimerInvalidate(inf_i);
    for (int i = 0; i < 5; i++) RLRelease(all[i]);
    RLRelease(tiny_i);
    assert_loop_still_works();
}

/* A 1 µs repeating timer keeps firing without hanging the loop or starving
   a source. */
static int g_fast;
static void fast_timer(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    g_fast++;
}

static void tiny_interval_timer_does_not_hang_the_loop(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent(), 1e-9, fast_timer, NULL);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(s);
    double t0 = rl_test_now();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LE_DBL(rl_test_now() - t0, 10);
    RL_ASSERT_GE_INT(g_fast, 2);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    assert_loop_still_works();
}

static void bad_fire_dates_are_clamped(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLAbsoluteTime before = RLAbsoluteTimeGetCurrent();
    RLRunLoopTimerRef nan_d = rl_test_timer(NAN, 0, rl_test_count_fire, NULL);
    RLRunLoopTimerRef ninf_d = rl_test_timer(-INFINITY, 0, rl_test_count_fire, NULL);
    RLRunLoopTimerRef past = rl_test_timer(-1e300, 0, rl_test_count_fire, NULL);
    RLRunLoopTimerRef inf_d = rl_test_timer(INFINITY, 0, rl_test_count_fire, NULL);
    RLRunLoopTimerRef huge_d = rl_test_timer(1e300, 1, rl_test_count_fire, NULL);
    RL_ASSERT(nan_d && ninf_d && past && inf_d && huge_d);
    /* NaN means now. */
    RLAbsoluteTime d = RLRunLoopTimerGetNextFireDate(nan_d);
    RL_ASSERT(!isnan(d));
    RL_ASSERT_GE_DBL(d, before - 1);
    RL_ASSERT_LE_DBL(d, RLAbsoluteTimeGetCurrent() + 1);
    /* Beyond 2129: clamped there (finite, about 4.04e9). */
    RL_ASSERT(isfinite(RLRunLoopTimerGetNextFireDate(inf_d)));
    RL_ASSERT_LE_DBL(RLRunLoopTimerGetNextFireDate(inf_d), 4039289856.0 + 1);
    RL_ASSERT_GE_DBL(RLRunLoopTimerGetNextFireDate(inf_d), 4039289856.0 - 86400 * 366);
    RL_ASSERT_LE_DBL(RLRunLoopTimerGetNextFireDate(huge_d), 4039289856.0 + 1);
    RLRunLoopTimerRef all[] = {nan_d, ninf_d, past, inf_d, huge_d};
    for (int i = 0; i < 5; i++) RLRunLoopAddTimer(rl, all[i], kRLRunLoopDefaultMode);
    /* The NaN and past ones fire now; the far ones do not. */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 3);
    RL_ASSERT_GE_DBL(RLRunLoopGetNextTimerFireDate(rl, kRLRunLoopDefaultMode), before + 1e6);
    /* SetNextFireDate clamps the same way. */
    RLRunLoopTimerSetNextFireDate(inf_d, NAN);
    RL_ASSERT(!isnan(RLRunLoopTimerGetNextFireDate(inf_d)));
    RL_ASSERT_LE_DBL(RLRunLoopTimerGetNextFireDate(inf_d), RLAbsoluteTimeGetCurrent() + 1);
    RLRunLoopTimerSetNextFireDate(huge_d, INFINITY);
    RL_ASSERT_LE_DBL(RLRunLoopTimerGetNextFireDate(huge_d), 4039289856.0 + 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 4);
    for (int i = 0; i < 5; i++) {
        RLRunLoopTimerInvalidate(all[i]);
        RLRelease(all[i]);
    }
    RLRelease(keep);
    assert_loop_still_works();
}

static void bad_run_timeouts(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, NAN, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, -NAN, true), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, -1e300, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1e-300, false), kRLRunLoopRunTimedOut);
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.02, 0, rl_test_stop_current, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1e300, false), kRLRunLoopRunStopped);
    RLRelease(t);
    RLRelease(keep);
    assert_loop_still_works();
}

static void bad_tolerances_are_clamped(void) {
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent() + 10, 0, rl_test_count_fire, NULL);
    RLRunLoopTimerSetTolerance(t, NAN);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetTolerance(t), 0);
    RLRunLoopTimerSetTolerance(t, -INFINITY);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetTolerance(t), 0);
    RLRunLoopTimerSetTolerance(t, INFINITY); /* must not make it never fire */
    RLRunLoopTimerSetNextFireDate(t, RLAbsoluteTimeGetCurrent());
    RLRunLoopAddTimer(RLRunLoopGetCurrent(), t, kRLRunLoopDefaultMode);
    RL_ASSERT(!isnan(RLRunLoopTimerGetTolerance(t)));
    RLRunLoopTimerSetTolerance(t, 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RLRelease(t);
    assert_loop_still_works();
}

/* ---- file descriptors ---- */

static int g_bad_fd;
static int bad_fd(void *info) {
    (void)info;
    return g_bad_fd;
}

static RLRunLoopSourceRef bad_fd_source(void) {
    return rl_test_source1(0, bad_fd, rl_test_count_perform, NULL);
}

static int g_waits;

static void invalid_fds_stay_in_the_mode_unwatched(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int p[2];
    RL_ASSERT_EQ_INT(pipe2(p, O_CLOEXEC), 0);
    close(p[0]);
    close(p[1]);
    int fds[] = {-1, -100, p[0], 1000000, 0x7fffffff};
    RLRunLoopObserverRef o = rl_test_counting_observer(rl, kRLRunLoopCommonModes, kRLRunLoopBeforeWaiting, &g_waits);
    for (int i = 0; i < 5; i++) {
        g_bad_fd = fds[i];
        RLRunLoopSourceRef s = bad_fd_source();
        RL_ASSERT(s != NULL);
        RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
        RL_ASSERT(RLRunLoopContainsSource(rl, s, kRLRunLoopDefaultMode));
        g_waits = 0;
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false), kRLRunLoopRunTimedOut);
        RL_ASSERT_EQ_INT(rl_test_calls, 0);
        RL_ASSERT_LE_INT(g_waits, 2);
        RLRunLoopRemoveSource(rl, s, kRLRunLoopDefaultMode);
        RLRelease(s);
    }
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
    assert_loop_still_works();
}

static int g_fd_p[2];
static int pipe_fd(void *info) {
    (void)info;
    return g_fd_p[0];
}
static void drain(void *info) {
    (void)info;
    char b[16];
    while (read(g_fd_p[0], b, sizeof b) > 0) {}
    rl_test_calls++;
}

static void fd_closed_while_in_a_mode_does_not_break_the_loop(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RL_ASSERT_EQ_INT(pipe2(g_fd_p, O_NONBLOCK | O_CLOEXEC), 0);
    RLRunLoopSourceRef s = rl_test_source1(0, pipe_fd, drain, NULL);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(write(g_fd_p[1], "x", 1), 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    /* Close both ends behind the loop's back, then keep running. */
    close(g_fd_p[0]);
    close(g_fd_p[1]);
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false);
    RL_ASSERT(r == kRLRunLoopRunTimedOut);
    RLRunLoopRemoveSource(rl, s, kRLRunLoopDefaultMode);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    int before = rl_test_calls;
    assert_loop_still_works();
    RL_ASSERT_EQ_INT(rl_test_calls, before + 2);
}

static void same_fd_in_two_sources_of_a_mode_is_watched_once(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RL_ASSERT_EQ_INT(pipe2(g_fd_p, O_NONBLOCK | O_CLOEXEC), 0);
    RLRunLoopSourceRef a = rl_test_source1(0, pipe_fd, drain, NULL);
    /* does not consume: would spin if watched */
    RLRunLoopSourceRef b = rl_test_source1(0, pipe_fd, rl_test_count_perform, NULL);
    RLRunLoopAddSource(rl, a, kRLRunLoopDefaultMode);
    RLRunLoopAddSource(rl, b, kRLRunLoopDefaultMode);
    RL_ASSERT(RLRunLoopContainsSource(rl, b, kRLRunLoopDefaultMode));
    RL_ASSERT_EQ_INT(write(g_fd_p[1], "x", 1), 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RLRunLoopSourceInvalidate(a);
    RLRunLoopSourceInvalidate(b);
    RLRelease(a);
    RLRelease(b);
    close(g_fd_p[0]);
    close(g_fd_p[1]);
    assert_loop_still_works();
}

/* ---- one loop per observer / timer; release while scheduled ---- */

static RLRunLoopTimerRef g_shared_timer;
static RLRunLoopObserverRef g_shared_obs;
static void *add_elsewhere(void *arg) {
    (void)arg;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopAddTimer(rl, g_shared_timer, kRLRunLoopCommonModes);
    RLRunLoopAddObserver(rl, g_shared_obs, kRLRunLoopDefaultMode);
    RLRunLoopRemoveTimer(rl, g_shared_timer, kRLRunLoopDefaultMode);
    RLRunLoopRemoveObserver(rl, g_shared_obs, kRLRunLoopDefaultMode);
    return (void *)(intptr_t)(RLRunLoopContainsTimer(rl, g_shared_timer, kRLRunLoopCommonModes) ||
                              RLRunLoopContainsObserver(rl, g_shared_obs, kRLRunLoopDefaultMode));
}

static void timer_and_observer_added_to_a_second_loop_are_ignored(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    g_shared_timer = rl_test_timer(RLAbsoluteTimeGetCurrent() + 0.02, 0, rl_test_count_fire, NULL);
    g_shared_obs = RLRunLoopObserverCreate(kRLRunLoopEntry, true, 0, rl_test_count_observe, NULL);
    RLRunLoopAddTimer(rl, g_shared_timer, kRLRunLoopDefaultMode);
    RLRunLoopAddObserver(rl, g_shared_obs, kRLRunLoopDefaultMode);
    pthread_t th;
    void *bad = (void *)1;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, add_elsewhere, NULL), 0);
    pthread_join(th, &bad);
    RL_ASSERT(bad == NULL);
    /* Still in ours, and its removal from the other loop did not touch ours. */
    RL_ASSERT(RLRunLoopContainsTimer(rl, g_shared_timer, kRLRunLoopDefaultMode));
    RL_ASSERT(RLRunLoopContainsObserver(rl, g_shared_obs, kRLRunLoopDefaultMode));
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(rl_test_calls, 2); /* Entry observer + timer */
    RLRunLoopObserverInvalidate(g_shared_obs);
    RLRelease(g_shared_obs);
    RLRelease(g_shared_timer);
    assert_loop_still_works();
}

static void objects_released_while_scheduled_live_on(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent() + 0.01, 0, rl_test_count_fire, NULL);
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopEntry, false, 0, rl_test_count_observe, NULL);
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RLRelease(t);
    RLRelease(o);
    RLRelease(s);
    RLRunLoopSourceSignal(s); /* still alive: the loop holds it */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.2, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 3);                  /* observer once, source, timer */
    RLRunLoopRemoveSource(rl, s, kRLRunLoopDefaultMode); /* last reference: freed */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false), kRLRunLoopRunFinished);
    assert_loop_still_works();
}

/* ---- calls on invalidated objects ---- */

static void invalidated_objects_are_ignored(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent(), 1, rl_test_count_fire, NULL);
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopAllActivities, true, 0, rl_test_count_observe, NULL);
    RLRunLoopSourceInvalidate(s);
    RLRunLoopTimerInvalidate(t);
    RLRunLoopObserverInvalidate(o);
    for (int i = 0; i < 2; i++) { /* twice: invalidate is idempotent */
        RLRunLoopSourceInvalidate(s);
        RLRunLoopTimerInvalidate(t);
        RLRunLoopObserverInvalidate(o);
        RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
        RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
        RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
        RLRunLoopAddSource(rl, s, kRLRunLoopCommonModes);
        RLRunLoopAddTimer(rl, t, kRLRunLoopCommonModes);
        RLRunLoopAddObserver(rl, o, kRLRunLoopCommonModes);
        RL_ASSERT(!RLRunLoopContainsSource(rl, s, kRLRunLoopDefaultMode));
        RL_ASSERT(!RLRunLoopContainsTimer(rl, t, kRLRunLoopDefaultMode));
        RL_ASSERT(!RLRunLoopContainsObserver(rl, o, kRLRunLoopDefaultMode));
        RL_ASSERT(!RLRunLoopContainsSource(rl, s, kRLRunLoopCommonModes));
        RLRunLoopSourceSignal(s);
        RLRunLoopTimerSetNextFireDate(t, RLAbsoluteTimeGetCurrent());
        RL_ASSERT_EQ_DBL(RLRunLoopTimerGetNextFireDate(t), 0);
        RLRunLoopTimerSetTolerance(t, 0.1);
        RLRunLoopRemoveSource(rl, s, kRLRunLoopDefaultMode);
        RLRunLoopRemoveTimer(rl, t, kRLRunLoopDefaultMode);
        RLRunLoopRemoveObserver(rl, o, kRLRunLoopDefaultMode);
    }
    RL_ASSERT(!RLRunLoopSourceIsValid(s) && !RLRunLoopTimerIsValid(t) && !RLRunLoopObserverIsValid(o));
    /* Getters still answer. */
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetInterval(t), 1);
    RL_ASSERT_EQ_INT(RLRunLoopObserverGetActivities(o), kRLRunLoopAllActivities);
    /* The default mode is empty: nothing was added. */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(rl_test_calls, 0);
    RLRelease(s);
    RLRelease(t);
    RLRelease(o);
    assert_loop_still_works();
}

/* Removing items that are not there, from modes that do not exist. */
static void removing_what_is_not_there_is_ignored(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent() + 100, 0, rl_test_count_fire, NULL);
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopEntry, true, 0, rl_test_count_observe, NULL);
    RLRunLoopRemoveSource(rl, s, "nowhere");
    RLRunLoopRemoveTimer(rl, t, "nowhere");
    RLRunLoopRemoveObserver(rl, o, "nowhere");
    RLRunLoopRemoveSource(rl, s, kRLRunLoopCommonModes);
    RLRunLoopRemoveTimer(rl, t, kRLRunLoopCommonModes);
    RLRunLoopRemoveObserver(rl, o, kRLRunLoopCommonModes);
    RLRunLoopAddSource(rl, s, "here");
    RLRunLoopRemoveSource(rl, s, "there");
    RL_ASSERT(RLRunLoopContainsSource(rl, s, "here"));
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    RLRelease(t);
    RLRelease(o);
    assert_loop_still_works();
}

static void very_long_mode_names_work(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    size_t n = 100000;
    char *name = malloc(n + 1);
    memset(name, 'm', n);
    name[n] = 0;
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopAddSource(rl, s, name);
    RLRunLoopSourceSignal(s);
    name[n - 1] = 'm'; /* same content, checked after the add copied it */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(name, 1, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    name[n - 1] = 'x';
    RL_ASSERT(!RLRunLoopContainsSource(rl, s, name));
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    free(name);
    assert_loop_still_works();
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(null_objects_are_ignored),
        RL_TEST(null_and_empty_mode_names_are_ignored),
        RL_TEST(source_context_with_a_bad_version_is_refused),
        RL_TEST(bad_intervals_are_clamped),
        RL_TEST(tiny_interval_timer_does_not_hang_the_loop),
        RL_TEST(bad_fire_dates_are_clamped),
        RL_TEST(bad_run_timeouts),
        RL_TEST(bad_tolerances_are_clamped),
        RL_TEST(invalid_fds_stay_in_the_mode_unwatched),
        RL_TEST(fd_closed_while_in_a_mode_does_not_break_the_loop),
        RL_TEST(same_fd_in_two_sources_of_a_mode_is_watched_once),
        RL_TEST(timer_and_observer_added_to_a_second_loop_are_ignored),
        RL_TEST(objects_released_while_scheduled_live_on),
        RL_TEST(invalidated_objects_are_ignored),
        RL_TEST(removing_what_is_not_there_is_ignored),
        RL_TEST(very_long_mode_names_work),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
