/* test_pass.c: the activities of one pass of RLRunLoopRunInMode, in order
   (__CFRunLoopRun): Entry; BeforeTimers, BeforeSources, blocks, sources0,
   blocks again if a source ran, [BeforeWaiting, sleep, AfterWaiting] unless
   polling, one of: the due timers, one version-1 source, the wake-up;
   blocks; Exit. */
#include <CRunLoop.h>
#include "rltest.h"

enum {
    E = kRLRunLoopEntry,
    BT = kRLRunLoopBeforeTimers,
    BS = kRLRunLoopBeforeSources,
    BW = kRLRunLoopBeforeWaiting,
    AW = kRLRunLoopAfterWaiting,
    X = kRLRunLoopExit,
    PERFORM = 1000, /* a source0 perform */
    BLOCK = 2000,   /* a queued function */
    TIMER = 3000,   /* a timer callout */
    BLOCK2 = 2001
};

static rl_test_log g_log;

static void log_perform(void *info) {
    (void)info;
    rl_test_log_add(&g_log, PERFORM);
}
static void log_block(void *info) {
    (void)info;
    rl_test_log_add(&g_log, BLOCK);
}
static void log_block2(void *info) {
    (void)info;
    rl_test_log_add(&g_log, BLOCK2);
}
static void log_timer(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    rl_test_log_add(&g_log, TIMER);
}
static void log_timer_and_stop(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    rl_test_log_add(&g_log, TIMER);
    RLRunLoopStop(RLRunLoopGetCurrent());
}

static RLRunLoopObserverRef observe_all(void) {
    RLRunLoopObserverRef o = rl_test_log_observer(kRLRunLoopAllActivities, 0, &g_log);
    RLRunLoopAddObserver(RLRunLoopGetCurrent(), o, kRLRunLoopDefaultMode);
    return o;
}

static void sleeping_pass_has_every_activity_in_order(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopObserverRef o = observe_all();
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.05, 0, log_timer_and_stop, NULL);
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunStopped);
    RL_ASSERT_LOG(&g_log, E, BT, BS, BW, AW, TIMER, X);
    RLRelease(t);
    RLRelease(o);
}

static void polling_pass_has_no_waiting_activities(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o = observe_all();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&g_log, E, BT, BS, X);
    g_log.n = 0;
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, -1, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&g_log, E, BT, BS, X);
    g_log.n = 0;
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, true), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&g_log, E, BT, BS, X);
    RLRelease(o);
    RLRelease(keep);
}

static void pass_where_a_source_ran_polls(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = rl_test_source0(0, log_perform, NULL);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o = observe_all();
    RLRunLoopSourceSignal(s);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_LOG(&g_log, E, BT, BS, PERFORM, X);

    /* Without returnAfterSourceHandled: the pass that ran the source polls,
       the next one sleeps until the timer. */
    g_log.n = 0;
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.05, 0, log_timer_and_stop, NULL);
    RLRunLoopSourceSignal(s);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunStopped);
    RL_ASSERT_LOG(&g_log, E, BT, BS, PERFORM, BT, BS, BW, AW, TIMER, X);
    RLRelease(t);
    RLRelease(o);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
}

static void timeout_pass_sleeps_once_then_exits(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o = observe_all();
    double t0 = rl_test_now();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_GE_DBL(rl_test_now() - t0, 0.099);
    RL_ASSERT_LOG(&g_log, E, BT, BS, BW, AW, X);
    RLRelease(o);
    RLRelease(keep);
}

/* Blocks run after BeforeSources and before sources0. */
static void blocks_run_before_sources(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = rl_test_source0(0, log_perform, NULL);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o = observe_all();
    RLRunLoopSourceSignal(s);
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, log_block, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&g_log, E, BT, BS, BLOCK, PERFORM, X);
    RLRelease(o);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
}

/* Work queued by a source's perform runs at the block point right after the
   sources, before the timers that ended the (polling) wait. */
static void queue_and_perform(void *info) {
    (void)info;
    rl_test_log_add(&g_log, PERFORM);
    RLRunLoopPerformFunction(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, log_block, NULL);
}

static void blocks_run_again_after_a_source_ran(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = rl_test_source0(0, queue_and_perform, NULL);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o = observe_all();
    /* A timer already due: it is handled after the (polling) wait. */
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent() - 1, 0, log_timer, NULL);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(s);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&g_log, E, BT, BS, PERFORM, BLOCK, TIMER, X);
    RLRelease(t);
    RLRelease(o);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
}

/* Work queued by a timer callout runs at the block point after the timers,
   in the same pass (before Exit). */
static void queue_from_timer(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    rl_test_log_add(&g_log, TIMER);
    RLRunLoopPerformFunction(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, log_block2, NULL);
    RLRunLoopStop(RLRunLoopGetCurrent());
}

static void blocks_run_after_timers_before_exit(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o = observe_all();
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.03, 0, queue_from_timer, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunStopped);
    RL_ASSERT_LOG(&g_log, E, BT, BS, BW, AW, TIMER, BLOCK2, X);
    RLRelease(t);
    RLRelease(o);
    RLRelease(keep);
}

/* Each nested run has its own Entry and Exit. */
static RLRunLoopObserverRef g_inner_obs;
static void nested_from_timer(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    rl_test_log_add(&g_log, TIMER);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("inner", 0, false), kRLRunLoopRunTimedOut);
    RLRunLoopStop(RLRunLoopGetCurrent());
}

static void nested_run_has_its_own_entry_and_exit(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopSourceRef keep2 = rl_test_keep_mode(rl, "inner");
    RLRunLoopObserverRef o = observe_all();
    g_inner_obs = rl_test_log_observer(kRLRunLoopEntry | kRLRunLoopExit, 0, &g_log);
    RLRunLoopAddObserver(rl, g_inner_obs, "inner");
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.02, 0, nested_from_timer, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunStopped);
    RL_ASSERT_LOG(&g_log, E, BT, BS, BW, AW, TIMER, E, X, X);
    RLRelease(t);
    RLRelease(o);
    RLRelease(g_inner_obs);
    RLRelease(keep);
    RLRelease(keep2);
}

/* RLRunLoopStop from a callout ends the run at the end of that pass: the
   stop wakes the loop, so it does not sleep until the next timer. */
static void stop_from_block(void *info) {
    (void)info;
    rl_test_log_add(&g_log, BLOCK);
    RLRunLoopStop(RLRunLoopGetCurrent());
}

static void stop_in_a_callout_ends_the_pass_without_sleeping(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o = observe_all();
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, stop_from_block, NULL);
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 5, 0, log_timer, NULL);
    double t0 = rl_test_now();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunStopped);
    RL_ASSERT(g_log.n >= 4);
    RL_ASSERT_EQ_INT(g_log.ev[0], E);
    RL_ASSERT_EQ_INT(g_log.ev[1], BT);
    RL_ASSERT_EQ_INT(g_log.ev[2], BS);
    RL_ASSERT_EQ_INT(g_log.ev[3], BLOCK);
    RL_ASSERT_EQ_INT(g_log.ev[g_log.n - 1], X);
    /* The timer (5 s away) did not have to fire for the run to end. */
    RL_ASSERT_LE_DBL(rl_test_now() - t0, 4.0);
    for (int i = 0; i < g_log.n; i++) RL_ASSERT_NE_INT(g_log.ev[i], TIMER);
    RLRelease(t);
    RLRelease(o);
    RLRelease(keep);
}

/* ---- one wake-up source per pass ---- */

/* Two pipes made readable before the run: the fd sources of one wake-up. */
enum { FD_FIRST = 4000, FD_SECOND = 4001, MORE_WORK = 5000 };

typedef struct {
    int fds[2][2];
    RLRunLoopSourceRef sources[2];
    RLRunLoopSourceRef work; /* a version-0 source the first fd callout signals */
    int performed;
} two_ready_fds;
static two_ready_fds g_two;

static int fd_of_pipe(void *info) {
    return g_two.fds[(intptr_t)info][0];
}

static void log_more_work(void *info) {
    (void)info;
    rl_test_log_add(&g_log, MORE_WORK);
}

/* The first fd to perform queues a block and signals a source; the second
   stops the run. Either pipe may be reported first. */
static void fd_perform(void *info) {
    char buf[8];
    RL_ASSERT_EQ_INT(read(g_two.fds[(intptr_t)info][0], buf, sizeof buf), 1);
    if (g_two.performed++ == 0) {
        rl_test_log_add(&g_log, FD_FIRST);
        RLRunLoopPerformFunction(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, log_block, NULL);
        RLRunLoopSourceSignal(g_two.work);
    } else {
        rl_test_log_add(&g_log, FD_SECOND);
        RLRunLoopStop(RLRunLoopGetCurrent());
    }
}

static void make_two_ready_fds(RLRunLoopRef rl) {
    g_two = (two_ready_fds){.performed = 0};
    for (intptr_t i = 0; i < 2; i++) {
        RL_ASSERT_EQ_INT(pipe(g_two.fds[i]), 0);
        g_two.sources[i] = rl_test_source1(0, fd_of_pipe, fd_perform, (void *)i);
        RLRunLoopAddSource(rl, g_two.sources[i], kRLRunLoopDefaultMode);
    }
    g_two.work = rl_test_source0(0, log_more_work, NULL);
    RLRunLoopAddSource(rl, g_two.work, kRLRunLoopDefaultMode);
    for (int i = 0; i < 2; i++) RL_ASSERT_EQ_INT(write(g_two.fds[i][1], "x", 1), 1);
}

static void free_two_ready_fds(void) {
    for (int i = 0; i < 2; i++) {
        RLRunLoopSourceInvalidate(g_two.sources[i]);
        RLRelease(g_two.sources[i]);
        close(g_two.fds[i][0]);
        close(g_two.fds[i][1]);
    }
    RLRunLoopSourceInvalidate(g_two.work);
    RLRelease(g_two.work);
}

/* As CF: each pass handles one version-1 source; the block and the source
   its callout queued run before the next descriptor, in a pass of their own
   that polls (a source ran) and so has no waiting activities. */
static void ready_descriptors_are_handled_one_per_pass(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    make_two_ready_fds(rl);
    RLRunLoopObserverRef o = observe_all();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunStopped);
    RL_ASSERT_LOG(&g_log, E, BT, BS, BW, AW, FD_FIRST, BLOCK, BT, BS, MORE_WORK, FD_SECOND, X);
    RLRelease(o);
    free_two_ready_fds();
}

/* A source that performed makes the pass poll; returning after a handled
   source, CF still handles what that poll finds before returning. */
static void return_after_source_handled_also_performs_a_ready_descriptor(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    make_two_ready_fds(rl);
    RLRunLoopSourceSignal(g_two.work);
    RLRunLoopObserverRef o = observe_all();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_LOG(&g_log, E, BT, BS, MORE_WORK, FD_FIRST, BLOCK, X);
    RLRelease(o);
    free_two_ready_fds();
}

/* Due timers and a ready descriptor in one wake-up: the timers' pass, then
   a pass of its own (with its waiting activities: firing timers handles no
   source) for the descriptor. */
static void due_timers_and_a_ready_descriptor_take_a_pass_each(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    make_two_ready_fds(rl);
    RLRunLoopRemoveSource(rl, g_two.sources[1], kRLRunLoopDefaultMode);
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, -1, 0, log_timer, NULL);
    RLRunLoopObserverRef o = observe_all();
    g_two.performed = 1; /* the one fd stops the run */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunStopped);
    RL_ASSERT_LOG(&g_log, E, BT, BS, BW, AW, TIMER, BT, BS, BW, AW, FD_SECOND, X);
    RLRelease(t);
    RLRelease(o);
    free_two_ready_fds();
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(sleeping_pass_has_every_activity_in_order),
        RL_TEST(polling_pass_has_no_waiting_activities),
        RL_TEST(pass_where_a_source_ran_polls),
        RL_TEST(timeout_pass_sleeps_once_then_exits),
        RL_TEST(blocks_run_before_sources),
        RL_TEST(blocks_run_again_after_a_source_ran),
        RL_TEST(blocks_run_after_timers_before_exit),
        RL_TEST(nested_run_has_its_own_entry_and_exit),
        RL_TEST(stop_in_a_callout_ends_the_pass_without_sleeping),
        RL_TEST(ready_descriptors_are_handled_one_per_pass),
        RL_TEST(return_after_source_handled_also_performs_a_ready_descriptor),
        RL_TEST(due_timers_and_a_ready_descriptor_take_a_pass_each),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
