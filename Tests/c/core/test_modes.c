/* test_modes.c: items are serviced only in their mode, items of other modes
   neither wake the loop nor make it spin, common modes, CopyAllModes and
   CopyCurrentMode. */
#include <CRunLoop.h>
#include "rltest.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>

static int g_waits; /* BeforeWaiting callouts: one per sleep */

static void count_wait(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
    g_waits++;
}

static RLRunLoopObserverRef count_waits_in(RLRunLoopMode mode) {
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopBeforeWaiting, true, 0, count_wait, NULL);
    RLRunLoopAddObserver(RLRunLoopGetCurrent(), o, mode);
    return o;
}

static void source_is_serviced_only_in_its_mode(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopAddSource(rl, s, "A");
    RLRunLoopSourceSignal(s);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, true), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("A", 1, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RLRelease(s);
    RLRelease(keep);
}

static void timer_is_serviced_only_in_its_mode(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent() - 0.01, 0, rl_test_count_fire, NULL);
    RLRunLoopAddTimer(rl, t, "A");
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 0);
    RL_ASSERT(RLRunLoopTimerIsValid(t));
    /* The one-shot timer fires, then "A" is empty. */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("A", 5, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RLRelease(t);
    RLRelease(keep);
}

static void work_for_another_mode_waits_for_that_mode(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopSourceRef keepA = rl_test_keep_mode(rl, "A");
    RLRunLoopPerformFunction(rl, "A", rl_test_count_perform, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("A", 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RLRelease(keep);
    RLRelease(keepA);
}

/* ---- items of other modes do not wake the loop nor make it spin ---- */

static int g_pipe[2];
static void read_pipe(void *info) {
    (void)info;
    char buf[64];
    while (read(g_pipe[0], buf, sizeof buf) > 0) {}
    rl_test_calls++;
}
static int pipe_fd(void *info) {
    (void)info;
    return g_pipe[0];
}

static RLRunLoopSourceRef pipe_source(void) {
    return rl_test_source1(0, pipe_fd, read_pipe, NULL);
}

static void readable_fd_in_another_mode_neither_wakes_nor_spins(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RL_ASSERT_EQ_INT(pipe2(g_pipe, O_NONBLOCK | O_CLOEXEC), 0);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopSourceRef s = pipe_source();
    RLRunLoopAddSource(rl, s, "other");
    RL_ASSERT_EQ_INT(write(g_pipe[1], "x", 1), 1);
    RLRunLoopObserverRef o = count_waits_in(kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.2, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 0);
    RL_ASSERT_LE_INT(g_waits, 2);
    /* In its own mode it performs. */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("other", 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    RLRelease(o);
    RLRelease(keep);
    close(g_pipe[0]);
    close(g_pipe[1]);
}

static void due_timers_in_another_mode_neither_wake_nor_spin(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopTimerRef t1 = rl_test_timer(RLAbsoluteTimeGetCurrent() - 1, 0, rl_test_count_fire, NULL);
    RLRunLoopTimerRef t2 = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0.001, rl_test_count_fire, NULL);
    RLRunLoopTimerRef t3 = rl_test_timer(RLAbsoluteTimeGetCurrent() + 0.05, 0, rl_test_count_fire, NULL);
    RLRunLoopAddTimer(rl, t1, "other");
    RLRunLoopAddTimer(rl, t2, "other");
    RLRunLoopAddTimer(rl, t3, "other");
    RLRunLoopObserverRef o = count_waits_in(kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.2, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 0);
    RL_ASSERT_LE_INT(g_waits, 2);
    RLRunLoopTimerInvalidate(t1);
    RLRunLoopTimerInvalidate(t2);
    RLRunLoopTimerInvalidate(t3);
    RLRelease(t1);
    RLRelease(t2);
    RLRelease(t3);
    RLRelease(o);
    RLRelease(keep);
}

static void signalled_source_in_another_mode_does_not_spin(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopAddSource(rl, s, "other");
    RLRunLoopSourceSignal(s);
    RLRunLoopPerformFunction(rl, "other", rl_test_count_perform, NULL);
    RLRunLoopObserverRef o = count_waits_in(kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.2, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 0);
    RL_ASSERT_LE_INT(g_waits, 2);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    RLRelease(o);
    RLRelease(keep);
}

/* A mode's timers keep going only in that mode: a timer in the default mode
   does not fire while the loop runs "other" for a while (on a manual clock:
   that run waits once, straight to its own deadline). */
static void timer_in_default_mode_waits_while_another_mode_runs(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, "other");
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.02, 0, rl_test_count_fire, NULL);
    RLRunLoopObserverRef o = count_waits_in("other");
    rl_test_advance(0.15);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("other", 0.15, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 0);
    RL_ASSERT_EQ_INT(g_waits, 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RLRelease(t);
    RLRelease(o);
    RLRelease(keep);
}

/* ---- common modes ---- */

static void default_mode_is_common(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopAddSource(rl, s, kRLRunLoopCommonModes);
    RL_ASSERT(RLRunLoopContainsSource(rl, s, kRLRunLoopCommonModes));
    RL_ASSERT(RLRunLoopContainsSource(rl, s, kRLRunLoopDefaultMode));
    RLRunLoopSourceSignal(s);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    /* Added to the default mode only: not "in the common modes as such". */
    RLRunLoopSourceRef s2 = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopAddSource(rl, s2, kRLRunLoopDefaultMode);
    RL_ASSERT(!RLRunLoopContainsSource(rl, s2, kRLRunLoopCommonModes));
    /* Removing from the common modes removes from the default mode too. */
    RLRunLoopRemoveSource(rl, s, kRLRunLoopCommonModes);
    RL_ASSERT(!RLRunLoopContainsSource(rl, s, kRLRunLoopCommonModes));
    RL_ASSERT(!RLRunLoopContainsSource(rl, s, kRLRunLoopDefaultMode));
    RL_ASSERT(RLRunLoopContainsSource(rl, s2, kRLRunLoopDefaultMode));
    RLRelease(s);
    RLRunLoopSourceInvalidate(s2);
    RLRelease(s2);
}

static void common_mode_items_reach_a_mode_made_common_later(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopTimerRef t = rl_test_timer(1000, 0, rl_test_count_fire, NULL);
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopBeforeWaiting, true, 0, count_wait, NULL);
    RLRunLoopAddSource(rl, s, kRLRunLoopCommonModes);
    RLRunLoopAddTimer(rl, t, kRLRunLoopCommonModes);
    RLRunLoopAddObserver(rl, o, kRLRunLoopCommonModes);
    RL_ASSERT(!RLRunLoopContainsSource(rl, s, "M"));
    RLRunLoopAddCommonMode(rl, "M");
    RL_ASSERT(RLRunLoopContainsSource(rl, s, "M"));
    RL_ASSERT(RLRunLoopContainsTimer(rl, t, "M"));
    RL_ASSERT(RLRunLoopContainsObserver(rl, o, "M"));
    /* Added to the common modes after M joined them: in M too. */
    RLRunLoopSourceRef s2 = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopAddSource(rl, s2, kRLRunLoopCommonModes);
    RL_ASSERT(RLRunLoopContainsSource(rl, s2, "M"));
    /* Each is serviced in M. */
    RLRunLoopSourceSignal(s);
    RLRunLoopSourceSignal(s2);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("M", 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 2);
    RLRunLoopTimerSetNextFireDate(t, rl_test_loop_time() + 0.01);
    rl_test_advance(0.3);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("M", 0.3, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 3);
    RL_ASSERT_GE_INT(g_waits, 1);
    /* Adding M again, or the default mode, changes nothing. */
    RLRunLoopAddCommonMode(rl, "M");
    RLRunLoopAddCommonMode(rl, kRLRunLoopDefaultMode);
    RL_ASSERT(RLRunLoopContainsSource(rl, s, "M"));
    /* Removing from the common modes removes from M. */
    RLRunLoopRemoveSource(rl, s, kRLRunLoopCommonModes);
    RL_ASSERT(!RLRunLoopContainsSource(rl, s, "M"));
    RL_ASSERT(RLRunLoopContainsSource(rl, s2, "M"));
    RLRunLoopSourceInvalidate(s2);
    RL_ASSERT(!RLRunLoopContainsSource(rl, s2, "M"));
    RL_ASSERT(!RLRunLoopContainsSource(rl, s2, kRLRunLoopCommonModes));
    RLRelease(s);
    RLRelease(s2);
    RLRelease(t);
    RLRelease(o);
}

static void common_mode_work_runs_in_every_common_mode(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keepM = rl_test_keep_mode(rl, "M");
    RLRunLoopSourceRef keepN = rl_test_keep_mode(rl, "N");
    RLRunLoopSourceRef keepD = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopAddCommonMode(rl, "M");
    RLRunLoopPerformFunction(rl, kRLRunLoopCommonModes, rl_test_count_perform, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("N", 0, false), kRLRunLoopRunTimedOut); /* N is not common */
    RL_ASSERT_EQ_INT(rl_test_calls, 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("M", 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RLRunLoopPerformFunction(rl, kRLRunLoopCommonModes, rl_test_count_perform, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 2);
    RLRelease(keepM);
    RLRelease(keepN);
    RLRelease(keepD);
}

static void mode_names_are_equal_by_content(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    char a[] = "my.mode", b[] = "my.mode";
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopAddSource(rl, s, a);
    RL_ASSERT(RLRunLoopContainsSource(rl, s, b));
    RLRunLoopSourceSignal(s);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(b, 1, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    /* A copy of the common-modes name means the common modes. */
    char common[] = "kCFRunLoopCommonModes";
    RLRunLoopSourceRef s2 = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopAddSource(rl, s2, common);
    RL_ASSERT(RLRunLoopContainsSource(rl, s2, kRLRunLoopCommonModes));
    RL_ASSERT(RLRunLoopContainsSource(rl, s2, kRLRunLoopDefaultMode));
    char dflt[] = "kCFRunLoopDefaultMode";
    RL_ASSERT(RLRunLoopContainsSource(rl, s2, dflt));
    RLRunLoopSourceInvalidate(s);
    RLRunLoopSourceInvalidate(s2);
    RLRelease(s);
    RLRelease(s2);
}

/* ---- CopyAllModes / CopyCurrentMode ---- */

static void all_modes_lists_every_named_mode(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    char **m = RLRunLoopCopyAllModes(rl);
    RL_ASSERT(m != NULL);
    RL_ASSERT(rl_test_list_has(m, "kCFRunLoopDefaultMode"));
    RL_ASSERT(!rl_test_list_has(m, "X1"));
    rl_test_free_list(m);

    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent() + 100, 0, rl_test_count_fire, NULL);
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopEntry, true, 0, count_wait, NULL);
    RLRunLoopAddSource(rl, s, "X1");
    RLRunLoopAddTimer(rl, t, "X2");
    RLRunLoopAddObserver(rl, o, "X3");
    RLRunLoopAddCommonMode(rl, "X4");
    RLRunLoopAddSource(rl, s, kRLRunLoopCommonModes);
    m = RLRunLoopCopyAllModes(rl);
    RL_ASSERT(rl_test_list_has(m, "kCFRunLoopDefaultMode"));
    RL_ASSERT(rl_test_list_has(m, "X1"));
    RL_ASSERT(rl_test_list_has(m, "X2"));
    RL_ASSERT(rl_test_list_has(m, "X3"));
    RL_ASSERT(rl_test_list_has(m, "X4"));
    /* The common-modes name is not a mode. */
    RL_ASSERT(!rl_test_list_has(m, "kCFRunLoopCommonModes"));
    int n = 0;
    for (char **p = m; *p; p++) n++;
    RL_ASSERT_EQ_INT(n, 5);
    rl_test_free_list(m);
    RLRunLoopSourceInvalidate(s);
    RLRunLoopTimerInvalidate(t);
    RLRunLoopObserverInvalidate(o);
    RLRelease(s);
    RLRelease(t);
    RLRelease(o);
}

static char *g_modes[8];
static int g_nmodes;
static void record_mode_and_nest(RLRunLoopTimerRef t, void *info) {
    (void)t;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    g_modes[g_nmodes++] = RLRunLoopCopyCurrentMode(rl);
    if (info) {
        RLRunLoopRunInMode("inner", 2, false);
        g_modes[g_nmodes++] = RLRunLoopCopyCurrentMode(rl);
        RLRunLoopStop(rl);
    }
}

static void current_mode_is_the_innermost_running_mode(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RL_ASSERT(RLRunLoopCopyCurrentMode(rl) == NULL);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, "outer");
    RLRunLoopTimerRef outer = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0, record_mode_and_nest, (void *)1);
    RLRunLoopTimerRef inner = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0, record_mode_and_nest, NULL);
    RLRunLoopAddTimer(rl, outer, "outer");
    RLRunLoopAddTimer(rl, inner, "inner");
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("outer", 5, false), kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(g_nmodes, 3);
    RL_ASSERT_STR_EQ(g_modes[0], "outer");
    RL_ASSERT_STR_EQ(g_modes[1], "inner");
    RL_ASSERT_STR_EQ(g_modes[2], "outer");
    RL_ASSERT(RLRunLoopCopyCurrentMode(rl) == NULL);
    for (int i = 0; i < g_nmodes; i++) free(g_modes[i]);
    RLRelease(outer);
    RLRelease(inner);
    RLRelease(keep);
}

/* Another thread sees the mode a loop runs in. */
static RLRunLoopRef g_rl;
static atomic_int g_seen_ok;
static void *peek_mode(void *arg) {
    (void)arg;
    if (rl_test_wait_sleeping(g_rl, 10)) {
        char *m = RLRunLoopCopyCurrentMode(g_rl);
        atomic_store(&g_seen_ok, m && strcmp(m, "peeked") == 0 ? 1 : 2);
        free(m);
    }
    RLRunLoopStop(g_rl);
    return NULL;
}

static void current_mode_is_visible_from_another_thread(void) {
    g_rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(g_rl, "peeked");
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, peek_mode, NULL), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("peeked", 20, false), kRLRunLoopRunStopped);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(atomic_load(&g_seen_ok), 1);
    RLRelease(keep);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(source_is_serviced_only_in_its_mode),
        RL_TEST(timer_is_serviced_only_in_its_mode),
        RL_TEST(work_for_another_mode_waits_for_that_mode),
        RL_TEST(readable_fd_in_another_mode_neither_wakes_nor_spins),
        RL_TEST(due_timers_in_another_mode_neither_wake_nor_spin),
        RL_TEST(signalled_source_in_another_mode_does_not_spin),
        RL_TEST(timer_in_default_mode_waits_while_another_mode_runs),
        RL_TEST(default_mode_is_common),
        RL_TEST(common_mode_items_reach_a_mode_made_common_later),
        RL_TEST(common_mode_work_runs_in_every_common_mode),
        RL_TEST(mode_names_are_equal_by_content),
        RL_TEST(all_modes_lists_every_named_mode),
        RL_TEST(current_mode_is_the_innermost_running_mode),
        RL_TEST(current_mode_is_visible_from_another_thread),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
