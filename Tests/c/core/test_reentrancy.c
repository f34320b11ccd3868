/* test_reentrancy.c: callouts that re-enter the loop: nested runs from
   timers, sources and observers; removing or invalidating the item being
   called out, or another item due in the same pass; adding items. */
#include <CRunLoop.h>
#include "rltest.h"

#include <fcntl.h>

static int g_count;

/* ---- nested runs ---- */

static RLRunLoopSourceRef g_inner_src;
static RLRunLoopRunResult g_nested_result;

static void timer_runs_nested(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    rl_test_log_add(&rl_test_callouts, 1);
    RLRunLoopSourceSignal(g_inner_src);
    g_nested_result = RLRunLoopRunInMode("inner", 5, true);
    rl_test_log_add(&rl_test_callouts, 3);
    RLRunLoopStop(RLRunLoopGetCurrent());
}

static void timer_callout_runs_the_loop_nested_in_another_mode(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    g_inner_src = rl_test_source0(0, rl_test_log_perform, (void *)2);
    RLRunLoopAddSource(rl, g_inner_src, "inner");
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.01, 0, timer_runs_nested, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(g_nested_result, kRLRunLoopRunHandledSource);
    RL_ASSERT_LOG(&rl_test_callouts, 1, 2, 3);
    RLRunLoopSourceInvalidate(g_inner_src);
    RLRelease(g_inner_src);
    RLRelease(t);
    RLRelease(keep);
}

/* A source's perform runs the same mode nested: other signalled sources run
   inside; the source itself (its signal cleared) does not run again. */
static RLRunLoopSourceRef g_a, g_b;
static int g_depth;
static void a_runs_nested(void *info) {
    (void)info;
    rl_test_log_add(&rl_test_callouts, 10 + g_depth);
    g_depth++;
    RLRunLoopSourceSignal(g_b);
    g_nested_result = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    g_depth--;
    rl_test_log_add(&rl_test_callouts, 19);
}
static void b_logs(void *info) {
    (void)info;
    rl_test_log_add(&rl_test_callouts, 20 + g_depth);
}

static void source_perform_runs_the_same_mode_nested(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    g_a = rl_test_source0(0, a_runs_nested, NULL);
    g_b = rl_test_source0(1, b_logs, NULL);
    RLRunLoopAddSource(rl, g_a, kRLRunLoopDefaultMode);
    RLRunLoopAddSource(rl, g_b, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(g_a);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(g_nested_result, kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 10, 21, 19);
    RLRunLoopSourceInvalidate(g_a);
    RLRunLoopSourceInvalidate(g_b);
    RLRelease(g_a);
    RLRelease(g_b);
}

/* An observer runs the loop nested in another mode from BeforeWaiting. */
static RLRunLoopTimerRef g_inner_timer;
static void observer_runs_nested(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
    if (g_count++ == 0) {
        rl_test_log_add(&rl_test_callouts, 1);
        g_nested_result = RLRunLoopRunInMode("inner", 5, false);
        rl_test_log_add(&rl_test_callouts, 3);
    }
}

static void observer_callout_runs_the_loop_nested(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    g_inner_timer = rl_test_add_timer(rl, "inner", 0.01, 0, rl_test_log_fire, (void *)2);
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopBeforeWaiting, true, 0, observer_runs_nested, NULL);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RLRunLoopTimerRef stop = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.05, 0, rl_test_stop_current, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunStopped);
    /* The inner one-shot timer fired, then "inner" was empty. */
    RL_ASSERT_EQ_INT(g_nested_result, kRLRunLoopRunFinished);
    RL_ASSERT_LOG(&rl_test_callouts, 1, 2, 3);
    RLRelease(g_inner_timer);
    RLRelease(stop);
    RLRelease(o);
    RLRelease(keep);
}

/* An observer is not re-entered by a nested run inside its own callout. */
static void observer_nests_same_mode(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)info;
    rl_test_log_add(&rl_test_callouts, (long)a);
    if (g_depth == 0 && a == kRLRunLoopBeforeTimers) {
        g_depth++;
        RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
        g_depth--;
    }
}

static void observer_is_not_reentered_by_a_nested_run_in_its_callout(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o =
        RLRunLoopObserverCreate(kRLRunLoopBeforeTimers | kRLRunLoopExit, true, 0, observer_nests_same_mode, NULL);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    /* Outer BeforeTimers, (nested run: nothing for this observer), outer Exit. */
    RL_ASSERT_LOG(&rl_test_callouts, kRLRunLoopBeforeTimers, kRLRunLoopExit);
    RLRelease(o);
    RLRelease(keep);
}

/* A repeating timer is not fired again by a nested run inside its callout. */
static void timer_nests(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    rl_test_log_add(&rl_test_callouts, 100 + g_depth);
    if (g_depth == 0) {
        g_depth++;
        RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false);
        g_depth--;
        RLRunLoopTimerInvalidate(t);
        RLRunLoopStop(RLRunLoopGetCurrent());
    }
}

static void firing_timer_is_not_fired_by_a_nested_run_in_its_callout(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0.005, timer_nests, NULL);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunStopped);
    RL_ASSERT_LOG(&rl_test_callouts, 100);
    RLRelease(t);
    RLRelease(keep);
}

/* ---- the item being called out removes / invalidates itself ---- */

static RLRunLoopSourceRef g_self;
static int g_cancels;
static void self_cancel(void *info, RLRunLoopRef rl, RLRunLoopMode mode) {
    (void)info;
    (void)rl;
    (void)mode;
    g_cancels++;
}
static void invalidate_self(void *info) {
    (void)info;
    g_count++;
    RLRunLoopSourceInvalidate(g_self);
    RLRunLoopSourceSignal(g_self); /* ignored: invalid */
}
static void remove_self(void *info) {
    (void)info;
    g_count++;
    RLRunLoopRemoveSource(RLRunLoopGetCurrent(), g_self, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(g_self); /* still valid, but not in the mode */
}

static RLRunLoopSourceRef cancel_source(void (*perform)(void *)) {
    RLRunLoopSourceContext c;
    memset(&c, 0, sizeof c);
    c.cancel = self_cancel;
    c.perform = perform;
    return RLRunLoopSourceCreate(0, &c);
}

static void source_invalidates_itself_in_its_perform(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    g_self = cancel_source(invalidate_self);
    RLRunLoopAddSource(rl, g_self, kRLRunLoopDefaultMode);
    RLRunLoopAddSource(rl, g_self, "other");
    RLRelease(g_self); /* the loop holds it, also while it performs */
    RLRunLoopSourceSignal(g_self);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(g_count, 1);
    RL_ASSERT_EQ_INT(g_cancels, 2);
    RLRelease(keep);
}

static void source_removes_itself_in_its_perform(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    g_self = cancel_source(remove_self);
    RLRunLoopAddSource(rl, g_self, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(g_self);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(g_count, 1);
    RL_ASSERT_EQ_INT(g_cancels, 1);
    RL_ASSERT(RLRunLoopSourceIsValid(g_self));
    RL_ASSERT(!RLRunLoopContainsSource(rl, g_self, kRLRunLoopDefaultMode));
    /* Added back, its pending signal makes it perform. */
    RLRunLoopAddSource(rl, g_self, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(g_count, 2);
    RLRunLoopSourceInvalidate(g_self);
    RLRelease(g_self);
    RLRelease(keep);
}

static RLRunLoopTimerRef g_tself;
static void timer_removes_and_releases_itself(RLRunLoopTimerRef t, void *info) {
    (void)info;
    g_count++;
    RLRunLoopRemoveTimer(RLRunLoopGetCurrent(), t, kRLRunLoopDefaultMode);
    RL_ASSERT(!RLRunLoopContainsTimer(RLRunLoopGetCurrent(), t, kRLRunLoopDefaultMode));
}

static void timer_removes_itself_in_its_callout_after_its_last_release(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    g_tself = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0.001, timer_removes_and_releases_itself, NULL);
    RLRunLoopAddTimer(rl, g_tself, kRLRunLoopDefaultMode);
    RLRelease(g_tself); /* only the loop holds it now */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(g_count, 1);
    RLRelease(keep);
}

/* ---- removing / invalidating another item due in the same pass ---- */

static RLRunLoopSourceRef g_victim;
static void kill_victim_invalidate(void *info) {
    rl_test_log_add(&rl_test_callouts, (long)(intptr_t)info);
    RLRunLoopSourceInvalidate(g_victim);
}
static void kill_victim_remove(void *info) {
    rl_test_log_add(&rl_test_callouts, (long)(intptr_t)info);
    RLRunLoopRemoveSource(RLRunLoopGetCurrent(), g_victim, kRLRunLoopDefaultMode);
}

static void source_invalidated_by_an_earlier_perform_in_the_pass_is_not_called(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef killer = rl_test_source0(0, kill_victim_invalidate, (void *)1);
    g_victim = rl_test_source0(1, rl_test_log_perform, (void *)2);
    RLRunLoopSourceRef after = rl_test_source0(2, rl_test_log_perform, (void *)3);
    RLRunLoopAddSource(rl, killer, kRLRunLoopDefaultMode);
    RLRunLoopAddSource(rl, g_victim, kRLRunLoopDefaultMode);
    RLRunLoopAddSource(rl, after, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(g_victim);
    RLRunLoopSourceSignal(killer);
    RLRunLoopSourceSignal(after);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 1, 3);
    RLRunLoopSourceInvalidate(killer);
    RLRunLoopSourceInvalidate(after);
    RLRelease(killer);
    RLRelease(g_victim);
    RLRelease(after);
}

/* CF collects the pass's signalled sources before the first perform, and
   performs each that is still valid and signalled: one an earlier perform
   only removed from the mode performs all the same. */
static void source_removed_by_an_earlier_perform_in_the_pass_still_performs(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef killer = rl_test_source0(0, kill_victim_remove, (void *)1);
    g_victim = rl_test_source0(1, rl_test_log_perform, (void *)2);
    RLRunLoopSourceRef after = rl_test_source0(2, rl_test_log_perform, (void *)3);
    RLRunLoopAddSource(rl, killer, kRLRunLoopDefaultMode);
    RLRunLoopAddSource(rl, g_victim, kRLRunLoopDefaultMode);
    RLRunLoopAddSource(rl, after, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(killer);
    RLRunLoopSourceSignal(g_victim);
    RLRunLoopSourceSignal(after);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 1, 2, 3);
    RL_ASSERT(!RLRunLoopContainsSource(rl, g_victim, kRLRunLoopDefaultMode));
    RLRunLoopSourceInvalidate(killer);
    RLRunLoopSourceInvalidate(after);
    RLRunLoopSourceInvalidate(g_victim);
    RLRelease(killer);
    RLRelease(g_victim);
    RLRelease(after);
}

static RLRunLoopTimerRef g_tvictim;
static void timer_kills_invalidate(RLRunLoopTimerRef t, void *info) {
    (void)t;
    rl_test_log_add(&rl_test_callouts, (long)(intptr_t)info);
    RLRunLoopTimerInvalidate(g_tvictim);
}
static void timer_kills_remove(RLRunLoopTimerRef t, void *info) {
    (void)t;
    rl_test_log_add(&rl_test_callouts, (long)(intptr_t)info);
    RLRunLoopRemoveTimer(RLRunLoopGetCurrent(), g_tvictim, kRLRunLoopDefaultMode);
}

static void timer_killed_in_pass(int mode) {
    {
        RLRunLoopRef rl = RLRunLoopGetCurrent();
        RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
        RLAbsoluteTime due = RLAbsoluteTimeGetCurrent() - 0.01;
        RLRunLoopTimerRef killer = rl_test_timer(due, 0, mode ? timer_kills_remove : timer_kills_invalidate, (void *)1);
        g_tvictim = rl_test_timer(due, 0, rl_test_log_fire, (void *)2);
        RLRunLoopTimerRef after = rl_test_timer(due, 0, rl_test_log_fire, (void *)3);
        RLRunLoopAddTimer(rl, killer, kRLRunLoopDefaultMode);
        RLRunLoopAddTimer(rl, g_tvictim, kRLRunLoopDefaultMode);
        RLRunLoopAddTimer(rl, after, kRLRunLoopDefaultMode);
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false), kRLRunLoopRunTimedOut);
        RL_ASSERT_LOG(&rl_test_callouts, 1, 3);
        rl_test_callouts.n = 0;
        RLRunLoopTimerInvalidate(g_tvictim);
        RLRelease(killer);
        RLRelease(g_tvictim);
        RLRelease(after);
        RLRunLoopSourceInvalidate(keep);
        RLRelease(keep);
    }
}

static RLRunLoopObserverRef g_ovictim;
static void obs_kills(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    rl_test_log_add(&rl_test_callouts, (long)(intptr_t)info);
    if (g_count++ == 0) RLRunLoopObserverInvalidate(g_ovictim);
}
static void obs_kills_remove(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    rl_test_log_add(&rl_test_callouts, (long)(intptr_t)info);
    if (g_count++ == 0) RLRunLoopRemoveObserver(RLRunLoopGetCurrent(), g_ovictim, kRLRunLoopDefaultMode);
}

static void observer_killed_in_pass(int mode) {
    {
        RLRunLoopRef rl = RLRunLoopGetCurrent();
        RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
        RLRunLoopObserverContext c1 = {0, (void *)1, NULL, NULL, NULL};
        RLRunLoopObserverContext c2 = {0, (void *)2, NULL, NULL, NULL};
        RLRunLoopObserverContext c3 = {0, (void *)3, NULL, NULL, NULL};
        RLRunLoopObserverRef killer =
            RLRunLoopObserverCreate(kRLRunLoopEntry, true, 0, mode ? obs_kills_remove : obs_kills, &c1);
        g_ovictim = RLRunLoopObserverCreate(kRLRunLoopEntry, true, 1, rl_test_log_observe, &c2);
        RLRunLoopObserverRef after = RLRunLoopObserverCreate(kRLRunLoopEntry, true, 2, rl_test_log_observe, &c3);
        RLRunLoopAddObserver(rl, killer, kRLRunLoopDefaultMode);
        RLRunLoopAddObserver(rl, g_ovictim, kRLRunLoopDefaultMode);
        RLRunLoopAddObserver(rl, after, kRLRunLoopDefaultMode);
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
        RL_ASSERT_LOG(&rl_test_callouts, 1, 3);
        rl_test_callouts.n = 0;
        g_count = 0;
        RLRunLoopObserverInvalidate(killer);
        RLRunLoopObserverInvalidate(g_ovictim);
        RLRunLoopObserverInvalidate(after);
        RLRelease(killer);
        RLRelease(g_ovictim);
        RLRelease(after);
        RLRunLoopSourceInvalidate(keep);
        RLRelease(keep);
    }
}

static void timer_invalidated_by_an_earlier_timer_in_the_pass_is_not_fired(void) {
    timer_killed_in_pass(0);
}
static void timer_removed_by_an_earlier_timer_in_the_pass_is_not_fired(void) {
    timer_killed_in_pass(1);
}
static void observer_invalidated_by_an_earlier_observer_is_not_called(void) {
    observer_killed_in_pass(0);
}
static void observer_removed_by_an_earlier_observer_is_not_called(void) {
    observer_killed_in_pass(1);
}

/* Two readable fds: whichever source performs first removes the other; that
   one is not called, although its fd is still readable (its stale event in
   the same wait is dropped). */
static int g_p[2][2];
static RLRunLoopSourceRef g_fdsrc[2];
static int fd0_of(void *info) {
    (void)info;
    return g_p[0][0];
}
static int fd1_of(void *info) {
    (void)info;
    return g_p[1][0];
}
static void fd_perform(void *info) {
    intptr_t i = (intptr_t)info;
    char b[8];
    while (read(g_p[i][0], b, sizeof b) > 0) {}
    rl_test_log_add(&rl_test_callouts, i);
    RLRunLoopRemoveSource(RLRunLoopGetCurrent(), g_fdsrc[1 - i], kRLRunLoopDefaultMode);
}

static void fd_source_removed_by_another_fd_perform_is_not_called(void) {
    RL_ASSERT_EQ_INT(pipe2(g_p[0], O_NONBLOCK | O_CLOEXEC), 0);
    RL_ASSERT_EQ_INT(pipe2(g_p[1], O_NONBLOCK | O_CLOEXEC), 0);
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    for (intptr_t i = 0; i < 2; i++) {
        g_fdsrc[i] = rl_test_source1(0, i ? fd1_of : fd0_of, fd_perform, (void *)i);
        RLRunLoopAddSource(rl, g_fdsrc[i], kRLRunLoopDefaultMode);
    }
    RL_ASSERT_EQ_INT(write(g_p[0][1], "x", 1), 1);
    RL_ASSERT_EQ_INT(write(g_p[1][1], "x", 1), 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_callouts.n, 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_callouts.n, 1);
    for (int i = 0; i < 2; i++) {
        RLRunLoopSourceInvalidate(g_fdsrc[i]);
        RLRelease(g_fdsrc[i]);
        close(g_p[i][0]);
        close(g_p[i][1]);
    }
    RLRelease(keep);
}

/* ---- adding items from callouts ---- */

static RLRunLoopSourceRef g_new_src;
static RLRunLoopTimerRef g_new_timer;
static RLRunLoopObserverRef g_new_obs;
static void adder(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    rl_test_log_add(&rl_test_callouts, 1);
    g_new_src = rl_test_source0(0, rl_test_log_perform, (void *)2);
    RLRunLoopAddSource(rl, g_new_src, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(g_new_src);
    g_new_timer = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0, rl_test_log_fire, (void *)3);
    RLRunLoopAddTimer(rl, g_new_timer, kRLRunLoopDefaultMode);
    RLRunLoopObserverContext c = {0, (void *)4, NULL, NULL, NULL};
    g_new_obs = RLRunLoopObserverCreate(kRLRunLoopExit, true, 0, rl_test_log_observe, &c);
    RLRunLoopAddObserver(rl, g_new_obs, kRLRunLoopDefaultMode);
    RLRunLoopTimerRef stop = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.05, 0, rl_test_stop_current, NULL);
    RLRelease(stop);
}

static void items_added_from_a_callout_are_serviced(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0, adder, NULL);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(rl_test_callouts.n, 4);
    RL_ASSERT_EQ_INT(rl_test_callouts.ev[0], 1);
    /* The source and the new timer ran (either order), then Exit. */
    RL_ASSERT((rl_test_callouts.ev[1] == 2 && rl_test_callouts.ev[2] == 3) ||
              (rl_test_callouts.ev[1] == 3 && rl_test_callouts.ev[2] == 2));
    RL_ASSERT_EQ_INT(rl_test_callouts.ev[3], 4);
    RLRunLoopSourceInvalidate(g_new_src);
    RLRelease(g_new_src);
    RLRelease(g_new_timer);
    RLRunLoopObserverInvalidate(g_new_obs);
    RLRelease(g_new_obs);
    RLRelease(t);
}

/* A timer whose callout adds an already-due timer: the new one fires too. */
static int g_chain;
static void chain(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    if (++g_chain < 20) {
        RLRunLoopTimerRef n = rl_test_timer(RLAbsoluteTimeGetCurrent() - 1, 0, chain, NULL);
        RLRunLoopAddTimer(RLRunLoopGetCurrent(), n, kRLRunLoopDefaultMode);
        RLRelease(n);
    }
}

static void timers_added_by_timers_fire(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0, chain, NULL);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(g_chain, 20);
    RLRelease(t);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(timer_callout_runs_the_loop_nested_in_another_mode),
        RL_TEST(source_perform_runs_the_same_mode_nested),
        RL_TEST(observer_callout_runs_the_loop_nested),
        RL_TEST(observer_is_not_reentered_by_a_nested_run_in_its_callout),
        RL_TEST(firing_timer_is_not_fired_by_a_nested_run_in_its_callout),
        RL_TEST(source_invalidates_itself_in_its_perform),
        RL_TEST(source_removes_itself_in_its_perform),
        RL_TEST(timer_removes_itself_in_its_callout_after_its_last_release),
        RL_TEST(source_invalidated_by_an_earlier_perform_in_the_pass_is_not_called),
        RL_TEST(source_removed_by_an_earlier_perform_in_the_pass_still_performs),
        RL_TEST(timer_invalidated_by_an_earlier_timer_in_the_pass_is_not_fired),
        RL_TEST(timer_removed_by_an_earlier_timer_in_the_pass_is_not_fired),
        RL_TEST(observer_invalidated_by_an_earlier_observer_is_not_called),
        RL_TEST(observer_removed_by_an_earlier_observer_is_not_called),
        RL_TEST(fd_source_removed_by_another_fd_perform_is_not_called),
        RL_TEST(items_added_from_a_callout_are_serviced),
        RL_TEST(timers_added_by_timers_fire),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
