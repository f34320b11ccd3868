/* test_results.c: what RLRunLoopRunInMode returns, and when (Finished,
   Stopped, TimedOut, HandledSource), and RLRunLoopRun. */
#include <CRunLoop.h>
#include "rltest.h"

#include <pthread.h>

static RLRunLoopObserverRef observe_entry_exit(RLRunLoopMode mode) {
    RLRunLoopObserverRef o = rl_test_log_observer(kRLRunLoopEntry | kRLRunLoopExit, 0, &rl_test_callouts);
    RLRunLoopAddObserver(RLRunLoopGetCurrent(), o, mode);
    return o;
}

static void empty_mode_finishes_at_once_without_entry_or_exit(void) {
    RLRunLoopObserverRef o = observe_entry_exit(kRLRunLoopDefaultMode);
    double t0 = rl_test_now();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 2, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, true), kRLRunLoopRunFinished);
    RL_ASSERT_LE_DBL(rl_test_now() - t0, 1.5);
    RL_ASSERT_EQ_INT(rl_test_callouts.n, 0);
    RLRelease(o);
}

static void unknown_null_empty_and_common_mode_finish_without_entry_or_exit(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    /* The default (a common mode) is not empty, so common-mode runs would
       have something to do if they ran. */
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopCommonModes);
    RLRunLoopObserverRef o = rl_test_log_observer(kRLRunLoopEntry | kRLRunLoopExit, 0, &rl_test_callouts);
    RLRunLoopAddObserver(rl, o, kRLRunLoopCommonModes);
    RLRunLoopObserverRef o2 = observe_entry_exit("unknown-mode");
    double t0 = rl_test_now();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("unknown-mode", 2, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("never-named", 2, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(NULL, 2, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("", 2, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopCommonModes, 2, false), kRLRunLoopRunFinished);
    char common_copy[] = "kCFRunLoopCommonModes"; /* equal by content */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(common_copy, 2, false), kRLRunLoopRunFinished);
    RL_ASSERT_LE_DBL(rl_test_now() - t0, 1.5);
    RL_ASSERT_EQ_INT(rl_test_callouts.n, 0);
    /* The default mode itself runs. */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, kRLRunLoopEntry, kRLRunLoopExit);
    RLRelease(o);
    RLRelease(o2);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
}

static void observers_do_not_make_a_mode_non_empty(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopObserverRef o = rl_test_log_observer(kRLRunLoopAllActivities, 0, &rl_test_callouts);
    RLRunLoopAddObserver(rl, o, "obs-only");
    RL_ASSERT(RLRunLoopContainsObserver(rl, o, "obs-only"));
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("obs-only", 1, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(rl_test_callouts.n, 0);
    RLRelease(o);
}

static void pending_work_makes_a_mode_non_empty(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopObserverRef o = observe_entry_exit("work-mode");
    RLRunLoopPerformFunction(rl, "work-mode", rl_test_count_perform, NULL);
    /* Work for another mode does not make the default non-empty. */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(rl_test_calls, 0);
    /* It runs; the pass then sleeps out its short timeout, as CF's. */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("work-mode", 0.01, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RL_ASSERT_LOG(&rl_test_callouts, kRLRunLoopEntry, kRLRunLoopExit);
    /* Now the mode is empty: Finished at once, without Entry or Exit. */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("work-mode", 5, false), kRLRunLoopRunFinished);
    RL_ASSERT_LOG(&rl_test_callouts, kRLRunLoopEntry, kRLRunLoopExit);
    RLRelease(o);
}

/* RLRunLoopModeIsEmpty answers exactly when a run would finish at once. */
static void mode_is_empty_agrees_with_finished_runs(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    char **before = RLRunLoopCopyAllModes(rl);
    RL_ASSERT(RLRunLoopModeIsEmpty(rl, "never-named"));
    RL_ASSERT(RLRunLoopModeIsEmpty(rl, kRLRunLoopCommonModes));
    RL_ASSERT(RLRunLoopModeIsEmpty(rl, NULL));
    RL_ASSERT(RLRunLoopModeIsEmpty(rl, ""));
    RL_ASSERT(RLRunLoopModeIsEmpty(NULL, kRLRunLoopDefaultMode));
    RL_ASSERT(RLRunLoopModeIsEmpty(rl, kRLRunLoopDefaultMode));
    /* Asking creates no mode. */
    char **after = RLRunLoopCopyAllModes(rl);
    int n_before = 0, n_after = 0;
    while (before[n_before]) n_before++;
    while (after[n_after]) n_after++;
    RL_ASSERT_EQ_INT(n_after, n_before);
    RL_ASSERT(!rl_test_list_has(after, "never-named"));
    rl_test_free_list(before);
    rl_test_free_list(after);
    /* Observers do not count; queued work and sources do. */
    RLRunLoopObserverRef o = rl_test_log_observer(kRLRunLoopAllActivities, 0, &rl_test_callouts);
    RLRunLoopAddObserver(rl, o, "m");
    RL_ASSERT(RLRunLoopModeIsEmpty(rl, "m"));
    RLRunLoopPerformFunction(rl, "m", rl_test_count_perform, NULL);
    RL_ASSERT(!RLRunLoopModeIsEmpty(rl, "m"));
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("m", 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT(RLRunLoopModeIsEmpty(rl, "m"));
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("m", 0, false), kRLRunLoopRunFinished);
    RLRunLoopSourceRef s = rl_test_keep_mode(rl, kRLRunLoopCommonModes);
    RL_ASSERT(!RLRunLoopModeIsEmpty(rl, kRLRunLoopDefaultMode));
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    RL_ASSERT(RLRunLoopModeIsEmpty(rl, kRLRunLoopDefaultMode));
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
}

static void handled_source_after_exactly_one_of_three_signalled(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s3 = rl_test_source0(3, rl_test_log_perform, (void *)3);
    RLRunLoopSourceRef s1 = rl_test_source0(1, rl_test_log_perform, (void *)1);
    RLRunLoopSourceRef s2 = rl_test_source0(2, rl_test_log_perform, (void *)2);
    RLRunLoopAddSource(rl, s3, kRLRunLoopDefaultMode);
    RLRunLoopAddSource(rl, s1, kRLRunLoopDefaultMode);
    RLRunLoopAddSource(rl, s2, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(s3);
    RLRunLoopSourceSignal(s1);
    RLRunLoopSourceSignal(s2);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_LOG(&rl_test_callouts, 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_LOG(&rl_test_callouts, 1, 2);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_LOG(&rl_test_callouts, 1, 2, 3);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, true), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 1, 2, 3);
    RLRunLoopSourceInvalidate(s1);
    RLRunLoopSourceInvalidate(s2);
    RLRunLoopSourceInvalidate(s3);
    RLRelease(s1);
    RLRelease(s2);
    RLRelease(s3);
}

static void without_return_after_source_all_signalled_run_in_one_poll(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s[3];
    for (int i = 0; i < 3; i++) {
        s[i] = rl_test_source0(i, rl_test_log_perform, (void *)(intptr_t)i);
        RLRunLoopAddSource(rl, s[i], kRLRunLoopDefaultMode);
        RLRunLoopSourceSignal(s[i]);
    }
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 0, 1, 2);
    for (int i = 0; i < 3; i++) {
        RLRunLoopSourceInvalidate(s[i]);
        RLRelease(s[i]);
    }
}

static void timed_out_after_the_given_seconds(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    double t0 = rl_test_now();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.2, true), kRLRunLoopRunTimedOut);
    double el = rl_test_now() - t0;
    RL_ASSERT_GE_DBL(el, 0.199);
    RL_ASSERT_LE_DBL(el, 10.0);
    RLRelease(keep);
}

/* On a manual clock: the runs' timeouts are its time. */
static void timers_never_make_a_run_return_handled_source(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.01, 0, rl_test_count_fire, NULL);
    rl_test_advance(0.2);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.2, true), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    /* Without the keeper, the mode empties once the one-shot timer fired. */
    RLRunLoopRemoveSource(rl, keep, kRLRunLoopDefaultMode);
    RLRunLoopTimerRef t2 = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.01, 0, rl_test_count_fire, NULL);
    rl_test_advance(5);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, true), kRLRunLoopRunFinished);
    RL_ASSERT(fabs(rl_test_loop_time() - 0.21) < 1e-9); /* finished when it fired */
    RL_ASSERT_EQ_INT(rl_test_calls, 2);
    RLRelease(t);
    RLRelease(t2);
    RLRelease(keep);
}

static void blocks_never_make_a_run_return_handled_source(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, rl_test_count_perform, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, true), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RLRelease(keep);
}

static void handled_source_beats_timed_out_when_polling(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(s);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RLRunLoopSourceSignal(s);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 2);
    RLRelease(s);
}

static void stopped_by_a_callout(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.02, 0, rl_test_stop_current, NULL);
    double t0 = rl_test_now();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 20, false), kRLRunLoopRunStopped);
    RL_ASSERT_LE_DBL(rl_test_now() - t0, 10.0);
    RLRelease(t);
    RLRelease(keep);
}

static void stop_on_a_loop_that_is_not_running_does_nothing(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopStop(rl);
    RLRunLoopStop(rl);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RLRelease(keep);
}

static RLRunLoopRunResult g_inner_result;
static void run_nested_then_continue(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    g_inner_result = RLRunLoopRunInMode("inner", 10, false);
}

/* On a manual clock: the outer run goes on to its own deadline. */
static void stop_in_nested_runs_stops_only_the_innermost(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopTimerRef outer = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.01, 0, run_nested_then_continue, NULL);
    RLRunLoopTimerRef inner = rl_test_add_timer(rl, "inner", 0.03, 0, rl_test_stop_current, NULL);
    RLRunLoopSourceRef keep2 = rl_test_keep_mode(rl, "inner");
    rl_test_advance(1);
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.3, false);
    RL_ASSERT_EQ_INT(g_inner_result, kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunTimedOut);
    RL_ASSERT(fabs(rl_test_loop_time() - 0.3) < 1e-9);
    RLRelease(outer);
    RLRelease(inner);
    RLRelease(keep);
    RLRelease(keep2);
}

static void run_returns_when_stopped(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o = observe_entry_exit(kRLRunLoopDefaultMode);
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.02, 0, rl_test_stop_current, NULL);
    RLRunLoopRun();
    RL_ASSERT_LOG(&rl_test_callouts, kRLRunLoopEntry, kRLRunLoopExit);
    RL_ASSERT(!RLRunLoopTimerIsValid(t));
    RLRelease(t);
    RLRelease(o);
    RLRelease(keep);
}

static void run_returns_when_the_default_mode_empties(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.02, 0, rl_test_count_fire, NULL);
    RLRunLoopRun();
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    /* Nothing left: returns at once. */
    RLRunLoopRun();
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RLRelease(t);
}

/* RLRunLoopRun repeats default-mode runs: a source that removes itself
   makes the mode empty and ends it. */
static RLRunLoopSourceRef g_self;
static void remove_self_after_three(void *info) {
    (void)info;
    if (++rl_test_calls == 3) RLRunLoopRemoveSource(RLRunLoopGetCurrent(), g_self, kRLRunLoopDefaultMode);
    else RLRunLoopSourceSignal(g_self);
}

static void run_keeps_going_until_the_mode_is_empty(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    g_self = rl_test_source0(0, remove_self_after_three, NULL);
    RLRunLoopAddSource(rl, g_self, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(g_self);
    RLRunLoopRun();
    RL_ASSERT_EQ_INT(rl_test_calls, 3);
    RLRelease(g_self);
}

static void nan_and_negative_seconds_poll_once(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o =
        rl_test_log_observer(kRLRunLoopBeforeTimers | kRLRunLoopBeforeWaiting, 0, &rl_test_callouts);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, NAN, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, -INFINITY, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, -5, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, kRLRunLoopBeforeTimers, kRLRunLoopBeforeTimers, kRLRunLoopBeforeTimers);
    RLRelease(o);
    RLRelease(keep);
}

static void huge_seconds_means_no_time_limit(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLTimeInterval secs[] = {1e10, 1e300, INFINITY};
    for (int i = 0; i < 3; i++) {
        RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.02, 0, rl_test_stop_current, NULL);
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, secs[i], false), kRLRunLoopRunStopped);
        RLRelease(t);
    }
    RLRelease(keep);
}

/* ---- a mode whose only content is queued work ---- */

/* As CF, the pass that runs a mode's only blocks then sleeps like any
   other: out to its timeout (TimedOut, checked before Finished). */
static void blocks_only_mode_sleeps_out_its_timeout(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopObserverRef o = rl_test_log_observer(kRLRunLoopAllActivities, 0, &rl_test_callouts);
    RLRunLoopAddObserver(rl, o, "blocks-only");
    RLRunLoopPerformFunction(rl, "blocks-only", rl_test_count_perform, NULL);
    double t0 = rl_test_now();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("blocks-only", 0.05, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_GE_DBL(rl_test_now() - t0, 0.049);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RL_ASSERT_LOG(&rl_test_callouts, kRLRunLoopEntry, kRLRunLoopBeforeTimers, kRLRunLoopBeforeSources,
                  kRLRunLoopBeforeWaiting, kRLRunLoopAfterWaiting, kRLRunLoopExit);
    RLRelease(o);
}

typedef struct {
    RLRunLoopRef rl;
    RLRunLoopTimerRef timer; /* added by the thread once the loop sleeps; NULL: wake it up instead */
} sleeper_poke;

static void *poke_once_asleep(void *arg) {
    sleeper_poke *p = arg;
    if (!rl_test_wait_sleeping(p->rl, 30)) return NULL;
    if (p->timer) RLRunLoopAddTimer(p->rl, p->timer, "blocks-only");
    else RLRunLoopWakeUp(p->rl);
    return NULL;
}

static RLRunLoopRunResult run_blocks_only_mode_poked(RLRunLoopTimerRef timer) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopPerformFunction(rl, "blocks-only", rl_test_count_perform, NULL);
    sleeper_poke poke = {rl, timer};
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, poke_once_asleep, &poke), 0);
    RLRunLoopRunResult result = RLRunLoopRunInMode("blocks-only", 60, false);
    pthread_join(th, NULL);
    return result;
}

/* The sleep ends for a timer another thread adds meanwhile, which fires;
   the mode is then empty: Finished. */
static void blocks_only_mode_fires_a_timer_added_while_it_sleeps(void) {
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0, rl_test_count_fire, NULL);
    RL_ASSERT_EQ_INT(run_blocks_only_mode_poked(t), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(rl_test_performed, 1);
    RL_ASSERT_EQ_INT(rl_test_fired, 1);
    RLRelease(t);
}

/* Or for a wake-up: the mode is empty by then, so Finished. */
static void blocks_only_mode_finishes_when_woken(void) {
    RL_ASSERT_EQ_INT(run_blocks_only_mode_poked(NULL), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(rl_test_performed, 1);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(empty_mode_finishes_at_once_without_entry_or_exit),
        RL_TEST(unknown_null_empty_and_common_mode_finish_without_entry_or_exit),
        RL_TEST(observers_do_not_make_a_mode_non_empty),
        RL_TEST(pending_work_makes_a_mode_non_empty),
        RL_TEST(blocks_only_mode_sleeps_out_its_timeout),
        RL_TEST(blocks_only_mode_fires_a_timer_added_while_it_sleeps),
        RL_TEST(blocks_only_mode_finishes_when_woken),
        RL_TEST(mode_is_empty_agrees_with_finished_runs),
        RL_TEST(handled_source_after_exactly_one_of_three_signalled),
        RL_TEST(without_return_after_source_all_signalled_run_in_one_poll),
        RL_TEST(timed_out_after_the_given_seconds),
        RL_TEST(timers_never_make_a_run_return_handled_source),
        RL_TEST(blocks_never_make_a_run_return_handled_source),
        RL_TEST(handled_source_beats_timed_out_when_polling),
        RL_TEST(stopped_by_a_callout),
        RL_TEST(stop_on_a_loop_that_is_not_running_does_nothing),
        RL_TEST(stop_in_nested_runs_stops_only_the_innermost),
        RL_TEST(run_returns_when_stopped),
        RL_TEST(run_returns_when_the_default_mode_empties),
        RL_TEST(run_keeps_going_until_the_mode_is_empty),
        RL_TEST(nan_and_negative_seconds_poll_once),
        RL_TEST(huge_seconds_means_no_time_limit),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
