/*
 * test_idle_tasks.c: RLIdleQueue. Tasks run in FIFO order only on passes that
 * would sleep (kRLRunLoopBeforeWaiting), one or a bounded slice per pass, the
 * loop does not sleep while tasks remain, cancellation and invalidation call
 * each release exactly once, and submission works from any thread.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <CRunLoop.h>
#include "rltest.h"

static rl_test_log order_log;
static _Atomic int released;

static void log_task(void *info) {
    rl_test_log_add(&order_log, (long)(intptr_t)info);
}

static void count_release(void *info) {
    (void)info;
    atomic_fetch_add(&released, 1);
}

static void stop_when_done(void *info) {
    (void)info;
    RLRunLoopStop(RLRunLoopGetCurrent());
}

static void tasks_run_in_fifo_order_then_the_run_finishes(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLIdleQueueRef q = RLIdleQueueCreate(rl, kRLRunLoopDefaultMode, 0);
    for (long i = 1; i <= 5; i++) RL_ASSERT_NE_INT(RLIdleQueueSubmit(q, log_task, (void *)i, count_release), 0);
    RL_ASSERT_EQ_INT(RLIdleQueueGetPendingCount(q), 5);
    /* Nothing else is in the mode: the pending tasks keep it alive, and the
       run finishes once they are done. */
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunFinished);
    RL_ASSERT_LOG(&order_log, 1, 2, 3, 4, 5);
    RL_ASSERT_EQ_INT(atomic_load(&released), 5);
    RL_ASSERT_EQ_INT(RLIdleQueueGetPendingCount(q), 0);
    RL_ASSERT_EQ_INT(RLIdleQueueGetCompletedCount(q), 5);
    RLIdleQueueRelease(q);
}

/* One task per idle pass: count BeforeWaiting passes and tasks between them. */
static int tasks_this_pass, max_tasks_per_pass, idle_passes;

static void count_task(void *info) {
    (void)info;
    tasks_this_pass++;
}

/* A task that takes *info seconds of the loop's manual clock. */
static void busy_task(void *info) {
    tasks_this_pass++;
    rl_test_advance(*(double *)info);
}

static void pass_boundary(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
    if (tasks_this_pass > max_tasks_per_pass) max_tasks_per_pass = tasks_this_pass;
    if (tasks_this_pass) idle_passes++;
    tasks_this_pass = 0;
}

static void add_pass_counter(RLRunLoopRef rl) {
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopAfterWaiting, true, 0, pass_boundary, NULL);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RLRelease(o);
}

static void one_task_per_idle_pass_by_default(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    add_pass_counter(rl);
    RLIdleQueueRef q = RLIdleQueueCreate(rl, kRLRunLoopDefaultMode, 0);
    long n = rl_test_scaled(200);
    for (long i = 0; i < n; i++) RLIdleQueueSubmit(q, count_task, NULL, NULL);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 30, false);
    RL_ASSERT_EQ_INT(RLIdleQueueGetCompletedCount(q), n);
    RL_ASSERT_EQ_INT(max_tasks_per_pass, 1);
    RL_ASSERT_EQ_INT(idle_passes, n);
    RLIdleQueueRelease(q);
}

/* On a manual clock: each task takes 10 ms of it. */
static void slice_bounds_the_tasks_of_a_pass(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    add_pass_counter(rl);
    RLIdleQueueRef q = RLIdleQueueCreate(rl, kRLRunLoopDefaultMode, 0.025);
    RL_ASSERT_EQ_DBL(RLIdleQueueGetSlice(q), 0.025);
    static double task_seconds = 0.01;
    for (int i = 0; i < 12; i++) RLIdleQueueSubmit(q, busy_task, &task_seconds, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 30, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(RLIdleQueueGetCompletedCount(q), 12);
    RL_ASSERT(fabs(rl_test_loop_time() - 0.12) < 1e-9);
    /* Tasks start while less than 25 ms passed: 3 of 10 ms each. */
    RL_ASSERT_EQ_INT(max_tasks_per_pass, 3);
    RL_ASSERT_EQ_INT(idle_passes, 4);
    RLIdleQueueRelease(q);
}

/* A timer due while idle work is pending waits at most one slice: on a
   manual clock, where each task takes 5 ms of it, the timer due at 50 ms
   fires right after the tenth task, at 50 ms. */
static double timer_fired_at;
static uint64_t tasks_done_when_fired;
static RLIdleQueueRef timed_queue;
static void note_time(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    timer_fired_at = rl_test_loop_time();
    tasks_done_when_fired = RLIdleQueueGetCompletedCount(timed_queue);
}

static void timers_are_serviced_between_slices(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLIdleQueueRef q = timed_queue = RLIdleQueueCreate(rl, kRLRunLoopDefaultMode, 0);
    static double task_seconds = 0.005;
    for (int i = 0; i < 100; i++) RLIdleQueueSubmit(q, busy_task, &task_seconds, NULL);
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.05, 0, note_time, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 30, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(RLIdleQueueGetCompletedCount(q), 100);
    RL_ASSERT(fabs(timer_fired_at - 0.05) < 1e-9);
    RL_ASSERT_EQ_INT(tasks_done_when_fired, 10);
    RLRelease(t);
    RLIdleQueueRelease(q);
}

/* Policy: a source signalled on every pass keeps the loop from ever reaching
   BeforeWaiting, so idle tasks wait until a pass has nothing else to do. */
static int busy_left;
static RLRunLoopSourceRef busy_source;

static void busy_perform(void *info) {
    (void)info;
    if (--busy_left > 0) RLRunLoopSourceSignal(busy_source);
}

static void busy_source_starves_idle_tasks_until_it_stops(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLIdleQueueRef q = RLIdleQueueCreate(rl, kRLRunLoopDefaultMode, 0);
    busy_source = rl_test_source0(0, busy_perform, NULL);
    RLRunLoopAddSource(rl, busy_source, kRLRunLoopDefaultMode);
    busy_left = 50;
    RLRunLoopSourceSignal(busy_source);
    RLIdleQueueSubmit(q, log_task, (void *)1L, NULL);
    RLIdleQueueSubmit(q, stop_when_done, NULL, NULL);
    /* Polling passes never sleep, so they never run idle tasks either. */
    for (int i = 0; i < 10; i++) RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    RL_ASSERT_EQ_INT(order_log.n, 0);
    RL_ASSERT_EQ_INT(busy_left, 40);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 30, false);
    RL_ASSERT_EQ_INT(busy_left, 0); /* every busy pass came first */
    RL_ASSERT_LOG(&order_log, 1);
    RLRunLoopSourceInvalidate(busy_source);
    RLRelease(busy_source);
    RLIdleQueueRelease(q);
}

static void cancelled_tasks_do_not_run_and_are_released(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLIdleQueueRef q = RLIdleQueueCreate(rl, kRLRunLoopDefaultMode, 0);
    RLIdleTaskToken tokens[6];
    for (long i = 0; i < 6; i++) tokens[i] = RLIdleQueueSubmit(q, log_task, (void *)i, count_release);
    RL_ASSERT(RLIdleQueueCancel(q, tokens[0]));
    RL_ASSERT(RLIdleQueueCancel(q, tokens[3]));
    RL_ASSERT(RLIdleQueueCancel(q, tokens[5]));
    RL_ASSERT(!RLIdleQueueCancel(q, tokens[5])); /* twice */
    RL_ASSERT(!RLIdleQueueCancel(q, 0));
    RL_ASSERT(!RLIdleQueueCancel(q, 12345));
    RL_ASSERT_EQ_INT(atomic_load(&released), 3);
    RL_ASSERT_EQ_INT(RLIdleQueueGetPendingCount(q), 3);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false);
    RL_ASSERT_LOG(&order_log, 1, 2, 4);
    RL_ASSERT(!RLIdleQueueCancel(q, tokens[1])); /* already ran */
    RL_ASSERT_EQ_INT(atomic_load(&released), 6);
    /* Cancelling every task empties the mode: the run finishes at once. */
    RLIdleTaskToken t = RLIdleQueueSubmit(q, log_task, (void *)9L, count_release);
    RL_ASSERT(RLIdleQueueCancel(q, t));
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(order_log.n, 3);
    RLIdleQueueRelease(q);
}

/* A task can cancel a later task and submit new ones (queued after the rest). */
static RLIdleQueueRef self_q;
static RLIdleTaskToken victim;

static void cancel_victim(void *info) {
    (void)info;
    rl_test_log_add(&order_log, 100);
    RL_ASSERT(RLIdleQueueCancel(self_q, victim));
    RLIdleQueueSubmit(self_q, log_task, (void *)300L, NULL);
}

static void tasks_may_cancel_and_submit(void) {
    self_q = RLIdleQueueCreate(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, 1.0);
    RLIdleQueueSubmit(self_q, cancel_victim, NULL, NULL);
    victim = RLIdleQueueSubmit(self_q, log_task, (void *)200L, NULL);
    RLIdleQueueSubmit(self_q, log_task, (void *)250L, NULL);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false);
    RL_ASSERT_LOG(&order_log, 100, 250, 300);
    RLIdleQueueRelease(self_q);
}

/* Submission from other threads wakes the sleeping loop. */
typedef struct {
    RLIdleQueueRef q;
    long base;
    long count;
} submitter_arg;

static _Atomic long ran_from_threads;

static void count_atomic(void *info) {
    (void)info;
    atomic_fetch_add(&ran_from_threads, 1);
}

static void *submitter(void *arg) {
    submitter_arg *a = arg;
    for (long i = 0; i < a->count; i++) {
        RL_ASSERT_NE_INT(RLIdleQueueSubmit(a->q, count_atomic, NULL, count_release), 0);
        if (i % 16 == 0) rl_test_sleep(0.0005);
    }
    return NULL;
}

static void submission_from_other_threads_wakes_the_loop(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode); /* so the loop sleeps when idle */
    RLIdleQueueRef q = RLIdleQueueCreate(rl, kRLRunLoopDefaultMode, 0.002);
    long per = rl_test_scaled(400);
    submitter_arg args[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        args[i] = (submitter_arg){q, i * 1000, per};
        pthread_create(&th[i], NULL, submitter, &args[i]);
    }
    double end = rl_test_now() + 30;
    while (atomic_load(&ran_from_threads) < 3 * per && rl_test_now() < end)
        RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.5, true);
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    RL_ASSERT_EQ_INT(atomic_load(&ran_from_threads), 3 * per);
    RL_ASSERT_EQ_INT(atomic_load(&released), 3 * per);
    /* The loop sleeps again once the queue is empty. */
    RLIdleQueueSubmit(q, stop_when_done, NULL, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunStopped);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
    RLIdleQueueRelease(q);
}

static void *submit_after_delay(void *arg) {
    rl_test_sleep(0.1);
    RLIdleQueueSubmit(arg, stop_when_done, NULL, NULL);
    return NULL;
}

static void sleeping_loop_wakes_for_a_task(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLIdleQueueRef q = RLIdleQueueCreate(rl, kRLRunLoopDefaultMode, 0);
    pthread_t th;
    double start = rl_test_now(); /* before the thread starts its 0.1 s sleep */
    pthread_create(&th, NULL, submit_after_delay, q);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 20, false), kRLRunLoopRunStopped);
    RL_ASSERT_GE_DBL(rl_test_now() - start, 0.1);
    RL_ASSERT(rl_test_now() - start < 15);
    pthread_join(th, NULL);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
    RLIdleQueueRelease(q);
}

static void invalidate_drops_pending_tasks(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLIdleQueueRef q = RLIdleQueueCreate(rl, kRLRunLoopDefaultMode, 0);
    for (long i = 0; i < 4; i++) RLIdleQueueSubmit(q, log_task, (void *)i, count_release);
    RLIdleQueueInvalidate(q);
    RL_ASSERT(!RLIdleQueueIsValid(q));
    RL_ASSERT_EQ_INT(atomic_load(&released), 4);
    RL_ASSERT_EQ_INT(RLIdleQueueSubmit(q, log_task, (void *)9L, count_release), 0);
    RL_ASSERT_EQ_INT(atomic_load(&released), 5); /* released at once */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(order_log.n, 0);
    RLIdleQueueRelease(q);
}

static RLIdleQueueRef invalidating_q;
static void invalidate_self(void *info) {
    (void)info;
    rl_test_log_add(&order_log, 1);
    RLIdleQueueInvalidate(invalidating_q);
}

static void task_may_invalidate_its_queue(void) {
    invalidating_q = RLIdleQueueCreate(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, 1.0);
    RLIdleQueueSubmit(invalidating_q, invalidate_self, NULL, count_release);
    RLIdleQueueSubmit(invalidating_q, log_task, (void *)2L, count_release);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunFinished);
    RL_ASSERT_LOG(&order_log, 1);
    RL_ASSERT_EQ_INT(atomic_load(&released), 2);
    RLIdleQueueRelease(invalidating_q);
}

static void common_modes_queue_runs_in_a_common_mode(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLRunLoopAddCommonMode(rl, "tracking");
    RLIdleQueueRef q = RLIdleQueueCreate(rl, kRLRunLoopCommonModes, 0);
    RLIdleQueueSubmit(q, log_task, (void *)1L, NULL);
    RLIdleQueueSubmit(q, log_task, (void *)2L, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("tracking", 10, false), kRLRunLoopRunFinished);
    RL_ASSERT_LOG(&order_log, 1, 2);
    /* A mode that is not common does not run them. */
    RLIdleQueueSubmit(q, log_task, (void *)3L, NULL);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, "other");
    rl_test_advance(0.1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("other", 0.1, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(order_log.n, 2);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
    RLIdleQueueRelease(q);
}

static void bad_input_is_ignored(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RL_ASSERT(RLIdleQueueCreate(NULL, kRLRunLoopDefaultMode, 0) == NULL);
    RL_ASSERT(RLIdleQueueCreate(rl, NULL, 0) == NULL);
    RL_ASSERT(RLIdleQueueCreate(rl, "", 0) == NULL);
    RL_ASSERT_EQ_INT(RLIdleQueueSubmit(NULL, log_task, NULL, count_release), 0);
    RL_ASSERT_EQ_INT(atomic_load(&released), 1);
    RL_ASSERT(!RLIdleQueueCancel(NULL, 1));
    RL_ASSERT_EQ_INT(RLIdleQueueGetPendingCount(NULL), 0);
    RL_ASSERT_EQ_INT(RLIdleQueueGetCompletedCount(NULL), 0);
    RL_ASSERT_EQ_DBL(RLIdleQueueGetSlice(NULL), 0);
    RLIdleQueueSetSlice(NULL, 1);
    RLIdleQueueInvalidate(NULL);
    RLIdleQueueRelease(NULL);
    RL_ASSERT(!RLIdleQueueIsValid(NULL));
    RLIdleQueueRef q = RLIdleQueueCreate(rl, kRLRunLoopDefaultMode, NAN);
    RL_ASSERT_EQ_DBL(RLIdleQueueGetSlice(q), 0);
    RLIdleQueueSetSlice(q, -1);
    RL_ASSERT_EQ_DBL(RLIdleQueueGetSlice(q), 0);
    RLIdleQueueSetSlice(q, 1e9);
    RL_ASSERT_EQ_DBL(RLIdleQueueGetSlice(q), 10);
    RL_ASSERT_EQ_INT(RLIdleQueueSubmit(q, NULL, NULL, count_release), 0);
    RL_ASSERT_EQ_INT(atomic_load(&released), 2);
    RLIdleQueueInvalidate(q);
    RLIdleQueueInvalidate(q);
    RLIdleQueueRelease(q);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(tasks_run_in_fifo_order_then_the_run_finishes),
        RL_TEST(one_task_per_idle_pass_by_default),
        RL_TEST(slice_bounds_the_tasks_of_a_pass),
        RL_TEST(timers_are_serviced_between_slices),
        RL_TEST(busy_source_starves_idle_tasks_until_it_stops),
        RL_TEST(cancelled_tasks_do_not_run_and_are_released),
        RL_TEST(tasks_may_cancel_and_submit),
        RL_TEST(submission_from_other_threads_wakes_the_loop),
        RL_TEST(sleeping_loop_wakes_for_a_task),
        RL_TEST(invalidate_drops_pending_tasks),
        RL_TEST(task_may_invalidate_its_queue),
        RL_TEST(common_modes_queue_runs_in_a_common_mode),
        RL_TEST(bad_input_is_ignored),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
