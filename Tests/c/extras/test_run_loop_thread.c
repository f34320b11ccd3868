/* test_run_loop_thread.c: RLThread. Invariants checked: the loop is exposed
   once started and sleeps (kept alive by its source) instead of returning;
   other threads schedule timers, sources and requests on it; a stop from any
   thread, including its own, is never lost; Stop joins and tears the loop
   down (queued work dropped and released); start/stop 1,000 times leaks no
   memory (valgrind) and no file descriptors; bad input is harmless. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <CRunLoop.h>
#include "rltest.h"

#include <pthread.h>
#include <stdatomic.h>

static void nothing(void *info) {
    (void)info;
}

static atomic_int g_timer_fired;
static RLRunLoopRef g_timer_loop;
static void timer_fired(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    g_timer_loop = RLRunLoopGetCurrent();
    atomic_fetch_add(&g_timer_fired, 1);
}

static atomic_int g_source_performed;
static void source_performed(void *info) {
    (void)info;
    atomic_fetch_add(&g_source_performed, 1);
}

static void start_schedule_stop(void) {
    RLThreadRef t = RLThreadCreate("rlthread.basic");
    RL_ASSERT(t != NULL);
    RL_ASSERT(RLThreadGetRunLoop(t) == NULL); /* not started */
    RL_ASSERT(RLThreadStart(t));
    RL_ASSERT(!RLThreadStart(t)); /* once */
    RLRunLoopRef rl = RLThreadGetRunLoop(t);
    RL_ASSERT(rl != NULL);
    RL_ASSERT(rl != RLRunLoopGetCurrent());
    RL_ASSERT(!RLThreadIsCurrent(t));
    RL_ASSERT(!RLThreadHasExited(t));
    /* It sleeps instead of returning or spinning. */
    RL_ASSERT(rl_test_wait_sleeping(rl, 5));
    char *mode = RLRunLoopCopyCurrentMode(rl);
    RL_ASSERT_STR_EQ(mode, kRLRunLoopDefaultMode);
    free(mode);

    /* A timer and a source scheduled from here run there. */
    RLRunLoopTimerRef timer = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.01, 0, timer_fired, NULL);
    RLRunLoopWakeUp(rl);
    RLRunLoopSourceRef src = rl_test_source0(0, source_performed, NULL);
    RLRunLoopAddSource(rl, src, kRLRunLoopCommonModes);
    RLRunLoopSourceSignal(src);
    RLRunLoopWakeUp(rl);
    rl_test_wait_for(&g_timer_fired, 1, 10);
    rl_test_wait_for(&g_source_performed, 1, 10);
    RL_ASSERT_EQ_INT(atomic_load(&g_timer_fired), 1);
    RL_ASSERT_EQ_INT(atomic_load(&g_source_performed), 1);
    RL_ASSERT(g_timer_loop == rl);

    RLThreadStop(t);
    RL_ASSERT(RLThreadHasExited(t));
    RLThreadStop(t); /* idempotent */
    /* The loop is dead: its items were removed; requests are dropped. */
    RL_ASSERT(!RLRunLoopContainsSource(rl, src, kRLRunLoopCommonModes));
    RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(rl, NULL, 0, NULL, nothing, NULL, NULL, true, 1),
                     kRLPerformRequestDropped);
    RLRelease(timer);
    RLRelease(src);
    RLThreadRelease(t);
}

static RLThreadRef g_self;
static atomic_int g_is_current;
static void check_current(void *info) {
    (void)info;
    atomic_store(&g_is_current, RLThreadIsCurrent(g_self) ? 1 : -1);
}

static void is_current_on_its_thread(void) {
    g_self = RLThreadCreate(NULL);
    RL_ASSERT(RLThreadStart(g_self));
    RLRunLoopPerformRequest(RLThreadGetRunLoop(g_self), NULL, 0, NULL, check_current, NULL, NULL, true, INFINITY);
    RL_ASSERT_EQ_INT(atomic_load(&g_is_current), 1);
    RLThreadRelease(g_self); /* last reference: stops and joins */
}

static void start_and_stop_1000_times(void) {
    long n = rl_test_scaled(1000);
    RLRunLoopGetCurrent(); /* this thread's own loop (made by the first wait) is not a leak */
    int fds = rl_test_open_fds();
    for (long i = 0; i < n; i++) {
        RLThreadRef t = RLThreadCreate("rlthread.cycle");
        RL_ASSERT(RLThreadStart(t));
        RLRunLoopRef rl = RLThreadGetRunLoop(t);
        RL_ASSERT(rl != NULL);
        if (i % 2) /* half of them do a round trip first, half stop at once */
            RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(rl, NULL, 0, NULL, nothing, NULL, NULL, true, INFINITY),
                             kRLPerformRequestDone);
        RLThreadStop(t);
        RL_ASSERT(RLThreadHasExited(t));
        RLThreadRelease(t);
    }
    RL_ASSERT_EQ_INT(rl_test_open_fds(), fds);
}

static void stop_before_the_loop_runs_is_not_lost(void) {
    /* Stop right after Start, before the thread got to its run: many times. */
    long n = rl_test_scaled(300);
    for (long i = 0; i < n; i++) {
        RLThreadRef t = RLThreadCreate("rlthread.quick");
        RL_ASSERT(RLThreadStart(t));
        RLThreadStop(t);
        RL_ASSERT(RLThreadHasExited(t));
        RLThreadRelease(t);
    }
}

static void stop_user_run(void *info) {
    (void)info;
    RLRunLoopStop(RLRunLoopGetCurrent());
}

static void a_stopped_run_is_re_entered(void) {
    RLThreadRef t = RLThreadCreate("rlthread.rerun");
    RLThreadStart(t);
    RLRunLoopRef rl = RLThreadGetRunLoop(t);
    /* Someone stops the loop's run: the thread runs it again. */
    RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(rl, NULL, 0, NULL, stop_user_run, NULL, NULL, true, INFINITY),
                     kRLPerformRequestDone);
    RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(rl, NULL, 0, NULL, nothing, NULL, NULL, true, 10), kRLPerformRequestDone);
    RL_ASSERT(!RLThreadHasExited(t));
    RLThreadStop(t);
    RLThreadRelease(t);
}

static RLThreadRef g_stopper;
static void stop_myself(void *info) {
    (void)info;
    RLThreadStop(g_stopper); /* on the thread: asks, does not join itself */
}

static void stop_from_its_own_thread(void) {
    g_stopper = RLThreadCreate("rlthread.self");
    RLThreadStart(g_stopper);
    RLRunLoopRef rl = RLThreadGetRunLoop(g_stopper);
    RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(rl, NULL, 0, NULL, stop_myself, NULL, NULL, true, INFINITY),
                     kRLPerformRequestDone);
    double end = rl_test_now() + 10;
    while (!RLThreadHasExited(g_stopper) && rl_test_now() < end) rl_test_sleep(0.001);
    RL_ASSERT(RLThreadHasExited(g_stopper));
    RLThreadStop(g_stopper); /* joins */
    RLThreadRelease(g_stopper);
}

/* The last reference dropped on the thread itself: it stops and detaches. */
static atomic_int g_dropped;
static void note_dropped(void *info) {
    (void)info;
    atomic_store(&g_dropped, 1);
}
static void release_last(void *info) {
    RLThreadRelease((RLThreadRef)info);
}

static void last_release_on_its_own_thread(void) {
    RLThreadRef t = RLThreadCreate("rlthread.detach");
    RLThreadStart(t);
    RLRunLoopRef rl = RLThreadGetRunLoop(t);
    RLRunLoopMode never[] = {"never.run"};
    /* Dropped at the thread's exit: tells us the thread is gone. */
    RLRunLoopPerformRequest(rl, never, 1, NULL, nothing, NULL, note_dropped, false, 0);
    RLRunLoopPerformRequest(rl, NULL, 0, NULL, release_last, t, NULL, false, 0);
    rl_test_wait_for(&g_dropped, 1, 10);
    RL_ASSERT_EQ_INT(atomic_load(&g_dropped), 1);
    rl_test_sleep(0.05); /* let the detached thread finish exiting */
}

static void *stop_thread(void *arg) {
    RLThreadStop(arg);
    if (!RLThreadHasExited(arg)) abort();
    return NULL;
}

static void concurrent_stops_all_return_after_the_join(void) {
    RLThreadRef t = RLThreadCreate("rlthread.multi");
    RLThreadStart(t);
    RLThreadGetRunLoop(t);
    pthread_t th[4];
    for (int i = 0; i < 4; i++) RL_ASSERT_EQ_INT(pthread_create(&th[i], NULL, stop_thread, t), 0);
    RLThreadStop(t);
    RL_ASSERT(RLThreadHasExited(t));
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    RLThreadRelease(t);
}

static void bad_input_and_never_started(void) {
    RL_ASSERT(!RLThreadStart(NULL));
    RL_ASSERT(RLThreadGetRunLoop(NULL) == NULL);
    RLThreadStop(NULL);
    RL_ASSERT(!RLThreadIsCurrent(NULL));
    RL_ASSERT(!RLThreadHasExited(NULL));
    RL_ASSERT(RLThreadRetain(NULL) == NULL);
    RLThreadRelease(NULL);
    RLThreadRef t = RLThreadCreate("a name much longer than fifteen bytes");
    RL_ASSERT(t != NULL);
    RLThreadStop(t); /* never started: nothing */
    RL_ASSERT(!RLThreadHasExited(t));
    RL_ASSERT(RLThreadRetain(t) == t);
    RLThreadRelease(t);
    RLThreadRelease(t);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(start_schedule_stop),
        RL_TEST(is_current_on_its_thread),
        RL_TEST(start_and_stop_1000_times),
        RL_TEST(stop_before_the_loop_runs_is_not_lost),
        RL_TEST(a_stopped_run_is_re_entered),
        RL_TEST(stop_from_its_own_thread),
        RL_TEST(last_release_on_its_own_thread),
        RL_TEST(concurrent_stops_all_return_after_the_join),
        RL_TEST(bad_input_and_never_started),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
