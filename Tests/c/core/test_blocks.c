/* test_blocks.c: RLRunLoopPerformFunction: FIFO, no wake-up, work queued
   while queued work runs waits for the next block point, mode matching
   (including the common modes), dropped at thread exit. */
#include <CRunLoop.h>
#include "rltest.h"

#include <pthread.h>
#include <stdatomic.h>

static void queued_functions_run_fifo(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    for (long i = 0; i < 100; i++)
        RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, rl_test_log_perform, (void *)(intptr_t)i);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_callouts.n, 100);
    for (long i = 0; i < 100; i++) RL_ASSERT_EQ_INT(rl_test_callouts.ev[i], i);
    /* Each ran once. */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_callouts.n, 100);
    RLRelease(keep);
}

/* ---- no wake-up ---- */

static RLRunLoopRef g_rl;
static atomic_int g_ran;
static atomic_int g_before_wake;
static void ran_and_stop(void *info) {
    (void)info;
    atomic_fetch_add(&g_ran, 1);
    RLRunLoopStop(RLRunLoopGetCurrent());
}

static void *queue_then_wake(void *arg) {
    (void)arg;
    if (!rl_test_wait_sleeping(g_rl, 10)) {
        atomic_store(&g_before_wake, -1);
        RLRunLoopStop(g_rl);
        return NULL;
    }
    RLRunLoopPerformFunction(g_rl, kRLRunLoopDefaultMode, ran_and_stop, NULL);
    rl_test_sleep(0.2);
    atomic_store(&g_before_wake, atomic_load(&g_ran) + (RLRunLoopIsWaiting(g_rl) ? 0 : 100));
    RLRunLoopWakeUp(g_rl);
    return NULL;
}

static void perform_does_not_wake_the_loop_but_wakeup_runs_it(void) {
    g_rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(g_rl, kRLRunLoopDefaultMode);
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, queue_then_wake, NULL), 0);
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 20, false);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(atomic_load(&g_before_wake), 0); /* still asleep, not run */
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(atomic_load(&g_ran), 1);
    RLRelease(keep);
}

/* ---- work queued while work runs waits for the next block point ---- */

enum { A = 1, B = 2, P = 3 };
static void queue_b(void *info) {
    (void)info;
    rl_test_log_add(&rl_test_callouts, A);
    RLRunLoopPerformFunction(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, rl_test_log_perform, (void *)B);
}
static void log_perform(void *info) {
    (void)info;
    rl_test_log_add(&rl_test_callouts, P);
}

static void work_queued_by_work_waits_for_the_next_block_point(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    /* Block points of one polling pass: before sources0, after them (a
       source ran), after the wait. B, queued by A, must not run in A's
       round: it runs after the source. */
    RLRunLoopSourceRef s = rl_test_source0(0, log_perform, NULL);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(s);
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, queue_b, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, A, P, B);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
}

/* A function that queues itself again runs once per block point, so it does
   not starve the loop. */
static int g_requeues;
static void requeue_self(void *info) {
    (void)info;
    if (++g_requeues < 1000000)
        RLRunLoopPerformFunction(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, requeue_self, NULL);
}

static void self_requeueing_work_does_not_starve_the_pass(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, requeue_self, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    /* One polling pass has at most three block points. */
    RL_ASSERT_GE_INT(g_requeues, 1);
    RL_ASSERT_LE_INT(g_requeues, 3);
    RLRelease(keep);
}

/* ---- mode matching ---- */

static void work_runs_only_in_its_mode_and_keeps_its_order(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef k1 = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopSourceRef k2 = rl_test_keep_mode(rl, "other");
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, rl_test_log_perform, (void *)1);
    RLRunLoopPerformFunction(rl, "other", rl_test_log_perform, (void *)2);
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, rl_test_log_perform, (void *)3);
    RLRunLoopPerformFunction(rl, "other", rl_test_log_perform, (void *)4);
    RLRunLoopPerformFunction(rl, kRLRunLoopCommonModes, rl_test_log_perform, (void *)5);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("other", 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 2, 4);
    RLRunLoopPerformFunction(rl, "other", rl_test_log_perform, (void *)6);
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, rl_test_log_perform, (void *)7);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 2, 4, 1, 3, 5, 7);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("other", 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 2, 4, 1, 3, 5, 7, 6);
    RLRelease(k1);
    RLRelease(k2);
}

static void common_mode_work_runs_in_modes_made_common_later(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef k = rl_test_keep_mode(rl, "M");
    RLRunLoopPerformFunction(rl, kRLRunLoopCommonModes, rl_test_log_perform, (void *)1);
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, rl_test_log_perform, (void *)2);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("M", 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_callouts.n, 0);
    RLRunLoopAddCommonMode(rl, "M");
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("M", 0, false), kRLRunLoopRunTimedOut);
    /* Work for the default mode does not run in M although both are common. */
    RL_ASSERT_LOG(&rl_test_callouts, 1);
    /* The default mode still has work, so it is not empty: a polling run
       runs it (a run with a timeout would, as CF, sleep it out after). */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 1, 2);
    RL_ASSERT(RLRunLoopModeIsEmpty(rl, kRLRunLoopDefaultMode));
    RLRelease(k);
}

/* Work queued for a copy of a mode's name runs in that mode. */
static void work_mode_names_are_equal_by_content(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    char m1[] = "blk.mode", m2[] = "blk.mode";
    char common[] = "kCFRunLoopCommonModes";
    RLRunLoopPerformFunction(rl, m1, rl_test_log_perform, (void *)1);
    RLRunLoopPerformFunction(rl, common, rl_test_log_perform, (void *)2);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(m2, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 1, 2);
}

/* ---- dropped at thread exit ---- */

static atomic_int g_thread_fn_calls;
static void thread_fn(void *info) {
    (void)info;
    atomic_fetch_add(&g_thread_fn_calls, 1);
}

static void *queue_and_exit(void *arg) {
    (void)arg;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, thread_fn, NULL);
    RLRunLoopPerformFunction(rl, kRLRunLoopCommonModes, thread_fn, NULL);
    RLRunLoopPerformFunction(rl, "x", thread_fn, NULL);
    return NULL;
}

static void work_is_dropped_without_a_call_when_the_thread_exits(void) {
    for (int i = 0; i < 5; i++) {
        pthread_t th;
        RL_ASSERT_EQ_INT(pthread_create(&th, NULL, queue_and_exit, NULL), 0);
        pthread_join(th, NULL);
    }
    rl_test_sleep(0.05);
    RL_ASSERT_EQ_INT(atomic_load(&g_thread_fn_calls), 0);
}

/* Work queued on another thread's loop runs there, in order. */
static atomic_int g_other_ok;
static RLRunLoopRef g_other;
static atomic_int g_other_ready;
static atomic_long g_next;
static void ordered_fn(void *info) {
    long want = atomic_fetch_add(&g_next, 1);
    if ((long)(intptr_t)info != want) atomic_store(&g_other_ok, 0);
    if (want == 999) RLRunLoopStop(RLRunLoopGetCurrent());
}

static void *run_until_stopped(void *arg) {
    (void)arg;
    /* Retained for the other thread, which uses it until after we exit. */
    g_other = (RLRunLoopRef)RLRetain(RLRunLoopGetCurrent());
    RLRunLoopSourceRef keep = rl_test_keep_mode(g_other, kRLRunLoopDefaultMode);
    atomic_store(&g_other_ready, 1);
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 60, false);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
    return (void *)(intptr_t)r;
}

static void work_queued_from_another_thread_runs_in_order(void) {
    atomic_store(&g_other_ok, 1);
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, run_until_stopped, NULL), 0);
    while (!atomic_load(&g_other_ready)) rl_test_sleep(0.001);
    for (long i = 0; i < 1000; i++) {
        RLRunLoopPerformFunction(g_other, kRLRunLoopDefaultMode, ordered_fn, (void *)(intptr_t)i);
        if (i % 7 == 0) RLRunLoopWakeUp(g_other);
    }
    RLRunLoopWakeUp(g_other);
    void *r = NULL;
    pthread_join(th, &r);
    RL_ASSERT_EQ_INT((intptr_t)r, kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(atomic_load(&g_next), 1000);
    RL_ASSERT_EQ_INT(atomic_load(&g_other_ok), 1);
    RLRelease(g_other);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(queued_functions_run_fifo),
        RL_TEST(perform_does_not_wake_the_loop_but_wakeup_runs_it),
        RL_TEST(work_queued_by_work_waits_for_the_next_block_point),
        RL_TEST(self_requeueing_work_does_not_starve_the_pass),
        RL_TEST(work_runs_only_in_its_mode_and_keeps_its_order),
        RL_TEST(common_mode_work_runs_in_modes_made_common_later),
        RL_TEST(work_mode_names_are_equal_by_content),
        RL_TEST(work_is_dropped_without_a_call_when_the_thread_exits),
        RL_TEST(work_queued_from_another_thread_runs_in_order),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
