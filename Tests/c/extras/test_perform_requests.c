/* test_perform_requests.c: perform requests across threads. Invariants
   checked: wait-until-done from another thread and inline on the loop's own
   thread; timeouts and dropped requests never hang the caller; requests run
   only in their modes and at most once; delayed requests fire in their modes
   only, not before their delay; cancellation before and at fire time (by
   request and by target); release(info) exactly once in every outcome;
   requests from several threads run in the order each thread made them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <CRunLoop.h>
#include "rltest.h"

#include <pthread.h>
#include <stdatomic.h>

/* ---- helpers ---- */

typedef struct {
    atomic_int ran;
    atomic_int released;
    atomic_int ran_before_release; /* ran was seen when release came */
    RLRunLoopRef ran_on;
    double ran_at;
} counter;

static void count_run(void *info) {
    counter *c = info;
    c->ran_on = RLRunLoopGetCurrent();
    c->ran_at = rl_test_now();
    atomic_fetch_add(&c->ran, 1);
}

static void count_release(void *info) {
    counter *c = info;
    if (atomic_load(&c->ran)) atomic_store(&c->ran_before_release, 1);
    atomic_fetch_add(&c->released, 1);
}

static RLThreadRef started_thread(const char *name) {
    RLThreadRef t = RLThreadCreate(name);
    RL_ASSERT(t != NULL);
    RL_ASSERT(RLThreadStart(t));
    RL_ASSERT(RLThreadGetRunLoop(t) != NULL);
    return t;
}

static void nothing(void *info) {
    (void)info;
}

/* ---- wait until done ---- */

static void wait_until_done_from_another_thread(void) {
    RLThreadRef t = started_thread("pr.wait");
    RLRunLoopRef rl = RLThreadGetRunLoop(t);
    for (int i = 0; i < 100; i++) {
        counter c = {0};
        RLPerformRequestStatus s =
            RLRunLoopPerformRequest(rl, NULL, 0, NULL, count_run, &c, count_release, true, INFINITY);
        RL_ASSERT_EQ_INT(s, kRLPerformRequestDone);
        RL_ASSERT_EQ_INT(atomic_load(&c.ran), 1);
        RL_ASSERT_EQ_INT(atomic_load(&c.released), 1); /* released before the wait returned */
        RL_ASSERT_EQ_INT(atomic_load(&c.ran_before_release), 1);
        RL_ASSERT(c.ran_on == rl);
    }
    RLThreadStop(t);
    RLThreadRelease(t);
}

static void wait_until_done_on_own_loop_runs_inline(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    counter c = {0};
    /* The loop is not running and the mode is one it never runs: still inline. */
    RLRunLoopMode modes[] = {"never.run"};
    RLPerformRequestStatus s = RLRunLoopPerformRequest(rl, modes, 1, NULL, count_run, &c, count_release, true, 0);
    RL_ASSERT_EQ_INT(s, kRLPerformRequestDone);
    RL_ASSERT_EQ_INT(atomic_load(&c.ran), 1);
    RL_ASSERT_EQ_INT(atomic_load(&c.released), 1);
    RL_ASSERT(c.ran_on == rl);
}

/* From inside a request running on a thread's loop, wait for another request
   to the same loop: inline, no deadlock. */
static counter g_inner;
static void nested_wait(void *info) {
    RLRunLoopRef rl = info;
    RLPerformRequestStatus s =
        RLRunLoopPerformRequest(rl, NULL, 0, NULL, count_run, &g_inner, count_release, true, INFINITY);
    if (s != kRLPerformRequestDone) abort();
}

static void wait_from_a_callout_of_the_same_loop_does_not_deadlock(void) {
    RLThreadRef t = started_thread("pr.nested");
    RLRunLoopRef rl = RLThreadGetRunLoop(t);
    RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(rl, NULL, 0, NULL, nested_wait, rl, NULL, true, 10),
                     kRLPerformRequestDone);
    RL_ASSERT_EQ_INT(atomic_load(&g_inner.ran), 1);
    RL_ASSERT(g_inner.ran_on == rl);
    RLThreadStop(t);
    RLThreadRelease(t);
}

/* A thread that has a loop but does not run it until told to. */
typedef struct {
    RLRunLoopRef rl;
    atomic_int ready;
    atomic_int go; /* 1: run the loop briefly then exit; 2: exit at once */
} idle_thread;

/* Makes this thread's loop before another thread's loop can be torn down.
   tear_down_loop used to read the `main_loop` global unsynchronized while the
   main thread could be making it in pthread_once (a TSan report); the core
   is moving to `rl->is_main`. Harmless either way. */
static void make_own_loop_first(void) {
    RLRunLoopGetCurrent();
}

static void *idle_main(void *arg) {
    idle_thread *it = arg;
    it->rl = (RLRunLoopRef)RLRetain(RLRunLoopGetCurrent());
    atomic_store(&it->ready, 1);
    while (!atomic_load(&it->go)) rl_test_sleep(0.001);
    if (atomic_load(&it->go) == 1) {
        RLRunLoopSourceRef keep = rl_test_keep_mode(it->rl, kRLRunLoopDefaultMode);
        RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false);
        RLRunLoopSourceInvalidate(keep);
        RLRelease(keep);
    }
    return NULL;
}

/* Starts an idle_thread (this thread's loop made first) and waits until its
   loop exists. */
static void start_idle_thread(idle_thread *it, pthread_t *th) {
    make_own_loop_first();
    RL_ASSERT_EQ_INT(pthread_create(th, NULL, idle_main, it), 0);
    rl_test_wait_for(&it->ready, 1, 5);
}

static void wait_times_out_when_the_loop_does_not_run(void) {
    idle_thread it = {0};
    pthread_t th;
    start_idle_thread(&it, &th);
    counter c = {0};
    double t0 = rl_test_now();
    RLPerformRequestStatus s = RLRunLoopPerformRequest(it.rl, NULL, 0, NULL, count_run, &c, count_release, true, 0.05);
    double waited = rl_test_now() - t0;
    RL_ASSERT_EQ_INT(s, kRLPerformRequestTimedOut);
    RL_ASSERT_GE_DBL(waited, 0.049);
    RL_ASSERT_EQ_INT(atomic_load(&c.released), 1);
    /* Withdrawn: when the loop runs later, it does not run. */
    atomic_store(&it.go, 1);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(atomic_load(&c.ran), 0);
    RL_ASSERT_EQ_INT(atomic_load(&c.released), 1);
    /* A zero or NaN timeout withdraws at once (the loop is dead now anyway). */
    RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(it.rl, NULL, 0, NULL, nothing, NULL, NULL, true, NAN),
                     kRLPerformRequestDropped);
    RLRelease(it.rl);
}

static void wait_returns_dropped_when_the_thread_exits(void) {
    idle_thread it = {0};
    pthread_t th;
    start_idle_thread(&it, &th);
    counter c = {0};
    atomic_store(&it.go, 2); /* exits without running: the request is dropped */
    RLPerformRequestStatus s =
        RLRunLoopPerformRequest(it.rl, NULL, 0, NULL, count_run, &c, count_release, true, INFINITY);
    pthread_join(th, NULL);
    /* Either the exit dropped it while we waited, or the loop was dead already. */
    RL_ASSERT_EQ_INT(s, kRLPerformRequestDropped);
    RL_ASSERT_EQ_INT(atomic_load(&c.ran), 0);
    RL_ASSERT_EQ_INT(atomic_load(&c.released), 1);
    /* A dead loop: dropped at once, waiting or not. */
    counter d = {0};
    RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(it.rl, NULL, 0, NULL, count_run, &d, count_release, false, 0),
                     kRLPerformRequestDropped);
    RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(it.rl, NULL, 0, NULL, count_run, &d, count_release, true, 1),
                     kRLPerformRequestDropped);
    RL_ASSERT_EQ_INT(atomic_load(&d.ran), 0);
    RL_ASSERT_EQ_INT(atomic_load(&d.released), 2);
    RLRelease(it.rl);
}

static void stopping_an_rlthread_drops_its_queued_requests(void) {
    RLThreadRef t = started_thread("pr.drop");
    RLRunLoopRef rl = RLThreadGetRunLoop(t);
    RLRunLoopMode modes[] = {"never.run"};
    counter c = {0};
    RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(rl, modes, 1, NULL, count_run, &c, count_release, false, 0),
                     kRLPerformRequestPending);
    RLThreadStop(t); /* the loop is torn down before the join returns */
    RL_ASSERT_EQ_INT(atomic_load(&c.ran), 0);
    RL_ASSERT_EQ_INT(atomic_load(&c.released), 1);
    RLThreadRelease(t);
}

/* ---- modes ---- */

static void requests_run_only_in_their_modes_and_once(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep_d = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopSourceRef keep_b = rl_test_keep_mode(rl, "b");
    counter c = {0};
    RLRunLoopMode modes[] = {"a", "b", "a"};
    RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(rl, modes, 3, NULL, count_run, &c, count_release, false, 0),
                     kRLPerformRequestPending);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.02, false);
    RL_ASSERT_EQ_INT(atomic_load(&c.ran), 0);
    RLRunLoopRunInMode("a", 0.02, false);
    RL_ASSERT_EQ_INT(atomic_load(&c.ran), 1);
    RL_ASSERT_EQ_INT(atomic_load(&c.released), 1);
    RLRunLoopRunInMode("b", 0.02, false);
    RLRunLoopRunInMode("a", 0.02, false);
    RL_ASSERT_EQ_INT(atomic_load(&c.ran), 1);
    RL_ASSERT_EQ_INT(atomic_load(&c.released), 1);
    RLRunLoopSourceInvalidate(keep_d);
    RLRunLoopSourceInvalidate(keep_b);
    RLRelease(keep_d);
    RLRelease(keep_b);
}

static void common_modes_by_default(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopAddCommonMode(rl, "extra");
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, "extra");
    counter c = {0};
    RLRunLoopPerformRequest(rl, NULL, 0, NULL, count_run, &c, count_release, false, 0);
    RLRunLoopRunInMode("extra", 0.02, false);
    RL_ASSERT_EQ_INT(atomic_load(&c.ran), 1);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
}

/* ---- delayed requests ---- */

static void stop_run(void *info) {
    counter *c = info;
    count_run(c);
    RLRunLoopStop(RLRunLoopGetCurrent());
}

/* On a manual clock: the delay is the loop's time. */
static RLAbsoluteTime g_ran_at_loop_time;
static void stop_run_noting_time(void *info) {
    g_ran_at_loop_time = rl_test_loop_time();
    stop_run(info);
}

static void delayed_request_fires_only_in_its_modes_after_its_delay(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    counter c = {0};
    RLRunLoopMode modes[] = {"delayed.mode"};
    RLPerformRequestRef r =
        RLRunLoopPerformRequestAfterDelay(rl, 0.02, modes, 1, NULL, stop_run_noting_time, &c, count_release);
    RL_ASSERT(r != NULL);
    RL_ASSERT_EQ_INT(RLPerformRequestGetStatus(r), kRLPerformRequestPending);
    rl_test_advance(0.06);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.06, false); /* out of its mode: does not fire */
    RL_ASSERT_EQ_INT(atomic_load(&c.ran), 0);
    RL_ASSERT_EQ_INT(RLPerformRequestGetStatus(r), kRLPerformRequestPending);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("delayed.mode", 5, false), kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(atomic_load(&c.ran), 1);
    RL_ASSERT_EQ_INT(atomic_load(&c.released), 1);
    RL_ASSERT(fabs(g_ran_at_loop_time - 0.06) < 1e-9); /* due at 0.02, its mode first ran at 0.06 */
    RL_ASSERT_EQ_INT(RLPerformRequestGetStatus(r), kRLPerformRequestDone);
    RL_ASSERT(!RLPerformRequestCancel(r)); /* too late */
    RLPerformRequestRelease(r);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
}

static void delayed_request_fires_on_another_thread(void) {
    RLThreadRef t = started_thread("pr.delay");
    RLRunLoopRef rl = RLThreadGetRunLoop(t);
    counter c = {0};
    double t0 = rl_test_now();
    RLPerformRequestRef r = RLRunLoopPerformRequestAfterDelay(rl, 0.03, NULL, 0, NULL, count_run, &c, count_release);
    RLPerformRequestRelease(r); /* releasing the token does not cancel */
    rl_test_wait_for(&c.released, 1, 10);
    RL_ASSERT_EQ_INT(atomic_load(&c.ran), 1);
    RL_ASSERT(c.ran_on == rl);
    RL_ASSERT_GE_DBL(c.ran_at - t0, 0.03);
    RLThreadStop(t);
    RLThreadRelease(t);
}

static rl_test_log g_fire_log;
static atomic_int g_fired;
static void log_fire(void *info) {
    rl_test_log_add(&g_fire_log, (long)(intptr_t)info);
    atomic_fetch_add(&g_fired, 1);
}

static void delayed_requests_with_equal_delays_fire_in_order(void) {
    RLThreadRef t = started_thread("pr.order");
    RLRunLoopRef rl = RLThreadGetRunLoop(t);
    enum { N = 200 };
    for (intptr_t i = 0; i < N; i++)
        RLPerformRequestRelease(RLRunLoopPerformRequestAfterDelay(rl, 0.02, NULL, 0, NULL, log_fire, (void *)i, NULL));
    rl_test_wait_for(&g_fired, N, 20);
    /* Wait-until-done as a barrier, so the log is read after the loop wrote it. */
    RLRunLoopPerformRequest(rl, NULL, 0, NULL, nothing, NULL, NULL, true, INFINITY);
    RL_ASSERT_EQ_INT(g_fire_log.n, N);
    for (int i = 0; i < N; i++) RL_ASSERT_EQ_INT(g_fire_log.ev[i], i);
    RLThreadStop(t);
    RLThreadRelease(t);
}

/* ---- cancelling ---- */

static void cancel_before_fire(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    counter c = {0};
    RLPerformRequestRef r = RLRunLoopPerformRequestAfterDelay(rl, 0.01, NULL, 0, NULL, count_run, &c, count_release);
    RL_ASSERT(RLPerformRequestCancel(r));
    RL_ASSERT_EQ_INT(atomic_load(&c.released), 1); /* released before Cancel returned */
    RL_ASSERT_EQ_INT(RLPerformRequestGetStatus(r), kRLPerformRequestCancelled);
    RL_ASSERT(!RLPerformRequestCancel(r));
    /* Its timer is gone: the default mode is empty again, so the run finishes at once. */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(atomic_load(&c.ran), 0);
    RL_ASSERT_EQ_INT(atomic_load(&c.released), 1);
    RLPerformRequestRelease(r);
}

/* Two requests due at the same time: the first cancels the second in the same pass. */
static RLPerformRequestRef g_second;
static atomic_int g_cancel_result = -1;
static void cancel_second(void *info) {
    count_run(info);
    atomic_store(&g_cancel_result, RLPerformRequestCancel(g_second));
}
static atomic_int g_self_cancel = -1;
static void cancel_self(void *info) {
    count_run(info);
    atomic_store(&g_self_cancel, RLPerformRequestCancel(g_second));
}

static void cancel_at_fire_time(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    counter a = {0}, b = {0};
    RLPerformRequestRef first =
        RLRunLoopPerformRequestAfterDelay(rl, 0.01, NULL, 0, NULL, cancel_second, &a, count_release);
    g_second = RLRunLoopPerformRequestAfterDelay(rl, 0.01, NULL, 0, NULL, count_run, &b, count_release);
    rl_test_advance(0.05); /* both due at 0.01: they fire in one pass */
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false);
    RL_ASSERT_EQ_INT(atomic_load(&a.ran), 1);
    RL_ASSERT_EQ_INT(atomic_load(&g_cancel_result), 1);
    RL_ASSERT_EQ_INT(atomic_load(&b.ran), 0);
    RL_ASSERT_EQ_INT(atomic_load(&b.released), 1);
    RL_ASSERT_EQ_INT(RLPerformRequestGetStatus(g_second), kRLPerformRequestCancelled);
    RLPerformRequestRelease(first);
    RLPerformRequestRelease(g_second);

    /* Cancelling a request from inside its own function: too late. */
    counter c = {0};
    g_second = RLRunLoopPerformRequestAfterDelay(rl, 0, NULL, 0, NULL, cancel_self, &c, count_release);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false);
    RL_ASSERT_EQ_INT(atomic_load(&g_self_cancel), 0);
    RL_ASSERT_EQ_INT(atomic_load(&c.ran), 1);
    RL_ASSERT_EQ_INT(atomic_load(&c.released), 1);
    RLPerformRequestRelease(g_second);
}

/* Cancel racing the fire on another thread: exactly one of them wins. */
static void cancel_races_fire_from_another_thread(void) {
    RLThreadRef t = started_thread("pr.race");
    RLRunLoopRef rl = RLThreadGetRunLoop(t);
    long n = rl_test_scaled(2000);
    int ran = 0, cancelled = 0;
    for (long i = 0; i < n; i++) {
        counter c = {0};
        RLPerformRequestRef r = RLRunLoopPerformRequestAfterDelay(rl, 0, NULL, 0, NULL, count_run, &c, count_release);
        if (i % 3) rl_test_sleep(0.00001 * (double)(i % 7));
        bool won = RLPerformRequestCancel(r);
        rl_test_wait_for(&c.released, 1, 10);
        /* The final state is stored just after release(info) returns. */
        double end = rl_test_now() + 10;
        while (RLPerformRequestGetStatus(r) == kRLPerformRequestRunning && rl_test_now() < end) rl_test_sleep(0.0001);
        RL_ASSERT_EQ_INT(atomic_load(&c.released), 1);
        RL_ASSERT_EQ_INT(atomic_load(&c.ran), won ? 0 : 1);
        RL_ASSERT_EQ_INT(RLPerformRequestGetStatus(r), won ? kRLPerformRequestCancelled : kRLPerformRequestDone);
        ran += !won;
        cancelled += won;
        RLPerformRequestRelease(r);
    }
    RL_ASSERT_EQ_INT(ran + cancelled, n);
    RLThreadStop(t);
    RLThreadRelease(t);
}

static void cancel_with_target(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLThreadRef t = started_thread("pr.target");
    RLRunLoopRef other = RLThreadGetRunLoop(t);
    static int target_a, target_b;
    counter a = {0}, b = {0}, o = {0}, q = {0};
    RLRunLoopMode later[] = {"later"};
    RLPerformRequestRef r[6];
    r[0] = RLRunLoopPerformRequestAfterDelay(rl, 0.01, NULL, 0, &target_a, count_run, &a, count_release);
    r[1] = RLRunLoopPerformRequestAfterDelay(rl, 0.01, NULL, 0, &target_a, count_run, &a, count_release);
    r[2] = RLRunLoopPerformRequestAfterDelay(rl, 0.01, NULL, 0, &target_b, count_run, &b, count_release);
    r[3] = RLRunLoopPerformRequestAfterDelay(other, 10, NULL, 0, &target_a, count_run, &o, count_release);
    RLRunLoopPerformRequest(rl, later, 1, &target_a, count_run, &q, count_release, false, 0);
    RLRunLoopPerformRequest(rl, later, 1, &target_a, count_run, &q, count_release, false, 0);
    r[4] = r[5] = NULL;
    /* Only this loop's requests for target_a: 2 delayed + 2 immediate. */
    RL_ASSERT_EQ_INT(RLPerformRequestCancelWithTarget(&target_a, rl), 4);
    RL_ASSERT_EQ_INT(atomic_load(&a.released), 2);
    RL_ASSERT_EQ_INT(atomic_load(&q.released), 2);
    RL_ASSERT_EQ_INT(RLPerformRequestGetStatus(r[3]), kRLPerformRequestPending);
    /* Every loop. */
    RL_ASSERT_EQ_INT(RLPerformRequestCancelWithTarget(&target_a, NULL), 1);
    RL_ASSERT_EQ_INT(atomic_load(&o.released), 1);
    RL_ASSERT_EQ_INT(RLPerformRequestCancelWithTarget(&target_a, NULL), 0);
    RL_ASSERT_EQ_INT(RLPerformRequestCancelWithTarget(NULL, NULL), 0);
    /* target_b still fires. */
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, "later");
    RLRunLoopRunInMode("later", 0.01, false);
    RL_ASSERT_EQ_INT(atomic_load(&b.ran), 1);
    RL_ASSERT_EQ_INT(atomic_load(&a.ran), 0);
    RL_ASSERT_EQ_INT(atomic_load(&q.ran), 0);
    RL_ASSERT_EQ_INT(atomic_load(&o.ran), 0);
    for (int i = 0; i < 4; i++) RLPerformRequestRelease(r[i]);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
    RLThreadStop(t);
    RLThreadRelease(t);
}

/* A request waited on and cancelled by target from a third thread. */
static int g_wait_target;
static void *cancel_soon(void *arg) {
    (void)arg;
    while (RLPerformRequestCancelWithTarget(&g_wait_target, NULL) == 0) rl_test_sleep(0.001);
    return NULL;
}

static void waited_request_cancelled_by_target(void) {
    idle_thread it = {0};
    pthread_t th, canceller;
    start_idle_thread(&it, &th);
    RL_ASSERT_EQ_INT(pthread_create(&canceller, NULL, cancel_soon, NULL), 0);
    counter c = {0};
    RLPerformRequestStatus s =
        RLRunLoopPerformRequest(it.rl, NULL, 0, &g_wait_target, count_run, &c, count_release, true, 30);
    RL_ASSERT_EQ_INT(s, kRLPerformRequestCancelled);
    RL_ASSERT_EQ_INT(atomic_load(&c.released), 1);
    pthread_join(canceller, NULL);
    atomic_store(&it.go, 2);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(atomic_load(&c.ran), 0);
    RLRelease(it.rl);
}

static void delayed_requests_are_dropped_when_the_thread_exits(void) {
    RLThreadRef t = started_thread("pr.dropdelay");
    RLRunLoopRef rl = RLThreadGetRunLoop(t);
    counter c = {0};
    RLPerformRequestRef r = RLRunLoopPerformRequestAfterDelay(rl, 60, NULL, 0, NULL, count_run, &c, count_release);
    RLThreadStop(t);
    RL_ASSERT_EQ_INT(atomic_load(&c.released), 1);
    RL_ASSERT_EQ_INT(RLPerformRequestGetStatus(r), kRLPerformRequestDropped);
    RL_ASSERT(!RLPerformRequestCancel(r));
    RLPerformRequestRelease(r);
    /* The loop is dead now: a new delayed request comes back dropped. */
    counter d = {0};
    r = RLRunLoopPerformRequestAfterDelay(rl, 0, NULL, 0, NULL, count_run, &d, count_release);
    RL_ASSERT(r != NULL);
    RL_ASSERT_EQ_INT(RLPerformRequestGetStatus(r), kRLPerformRequestDropped);
    RL_ASSERT_EQ_INT(atomic_load(&d.released), 1);
    RL_ASSERT_EQ_INT(atomic_load(&d.ran), 0);
    RLPerformRequestRelease(r);
    RLThreadRelease(t);
}

/* ---- ordering ---- */

enum { SENDERS = 4 };
typedef struct {
    RLRunLoopRef rl;
    long per_sender;
} order_setup;
static order_setup g_order;
static long g_last[SENDERS];
static atomic_long g_total;
static atomic_int g_out_of_order;

static void record(void *info) {
    uintptr_t v = (uintptr_t)info;
    long sender = (long)(v & 0xff), seq = (long)(v >> 8);
    if (seq != g_last[sender] + 1) atomic_store(&g_out_of_order, 1);
    g_last[sender] = seq;
    atomic_fetch_add(&g_total, 1);
}

static void *sender_main(void *arg) {
    long sender = (long)(intptr_t)arg;
    RLRunLoopMode modes[] = {kRLRunLoopDefaultMode};
    for (long seq = 1; seq <= g_order.per_sender; seq++) {
        uintptr_t v = ((uintptr_t)seq << 8) | (uintptr_t)sender;
        /* A mix: most queued, every 50th waited on, every 7th in explicit modes. */
        if (seq % 50 == 0) RLRunLoopPerformRequest(g_order.rl, NULL, 0, NULL, record, (void *)v, NULL, true, INFINITY);
        else if (seq % 7 == 0) RLRunLoopPerformRequest(g_order.rl, modes, 1, NULL, record, (void *)v, NULL, false, 0);
        else RLRunLoopPerformRequest(g_order.rl, NULL, 0, NULL, record, (void *)v, NULL, false, 0);
    }
    return NULL;
}

static void requests_from_several_threads_keep_each_senders_order(void) {
    RLThreadRef t = started_thread("pr.fifo");
    g_order.rl = RLThreadGetRunLoop(t);
    g_order.per_sender = rl_test_scaled(5000);
    pthread_t th[SENDERS];
    for (intptr_t i = 0; i < SENDERS; i++) RL_ASSERT_EQ_INT(pthread_create(&th[i], NULL, sender_main, (void *)i), 0);
    for (int i = 0; i < SENDERS; i++) pthread_join(th[i], NULL);
    /* FIFO: a request made after every sender finished runs after all of theirs. */
    RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(g_order.rl, NULL, 0, NULL, nothing, NULL, NULL, true, INFINITY),
                     kRLPerformRequestDone);
    RL_ASSERT_EQ_INT(atomic_load(&g_total), SENDERS * g_order.per_sender);
    RL_ASSERT_EQ_INT(atomic_load(&g_out_of_order), 0);
    for (int i = 0; i < SENDERS; i++) RL_ASSERT_EQ_INT(g_last[i], g_order.per_sender);
    RLThreadStop(t);
    RLThreadRelease(t);
}

/* ---- bad input ---- */

static void bad_input_is_refused_and_released(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    counter c = {0};
    RLRunLoopMode with_null[] = {kRLRunLoopDefaultMode, NULL};
    RLRunLoopMode with_empty[] = {""};
    RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(NULL, NULL, 0, NULL, count_run, &c, count_release, true, 1),
                     kRLPerformRequestInvalid);
    RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(rl, NULL, 0, NULL, NULL, &c, count_release, false, 0),
                     kRLPerformRequestInvalid);
    RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(rl, NULL, 2, NULL, count_run, &c, count_release, false, 0),
                     kRLPerformRequestInvalid);
    RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(rl, with_null, 2, NULL, count_run, &c, count_release, false, 0),
                     kRLPerformRequestInvalid);
    RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(rl, with_empty, 1, NULL, count_run, &c, count_release, false, 0),
                     kRLPerformRequestInvalid);
    RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(rl, with_empty, -1, NULL, count_run, &c, count_release, false, 0),
                     kRLPerformRequestInvalid);
    RL_ASSERT_EQ_INT(atomic_load(&c.released), 6);
    RL_ASSERT(RLRunLoopPerformRequestAfterDelay(NULL, 1, NULL, 0, NULL, count_run, &c, count_release) == NULL);
    RL_ASSERT(RLRunLoopPerformRequestAfterDelay(rl, 1, with_empty, 1, NULL, count_run, &c, count_release) == NULL);
    RL_ASSERT(RLRunLoopPerformRequestAfterDelay(rl, 1, NULL, 0, NULL, NULL, &c, count_release) == NULL);
    RL_ASSERT_EQ_INT(atomic_load(&c.released), 9);
    RL_ASSERT_EQ_INT(atomic_load(&c.ran), 0);
    RL_ASSERT(!RLPerformRequestCancel(NULL));
    RL_ASSERT_EQ_INT(RLPerformRequestGetStatus(NULL), kRLPerformRequestInvalid);
    RL_ASSERT(RLPerformRequestRetain(NULL) == NULL);
    RLPerformRequestRelease(NULL);
    /* NaN / negative delays mean now. */
    RLPerformRequestRef r = RLRunLoopPerformRequestAfterDelay(rl, NAN, NULL, 0, NULL, count_run, &c, count_release);
    RLPerformRequestRef r2 = RLRunLoopPerformRequestAfterDelay(rl, -5, NULL, 0, NULL, count_run, &c, count_release);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1, false); /* finishes once both fired (mode empty) */
    RL_ASSERT_EQ_INT(atomic_load(&c.ran), 2);
    RL_ASSERT_EQ_INT(RLPerformRequestGetStatus(RLPerformRequestRetain(r)), kRLPerformRequestDone);
    RLPerformRequestRelease(r);
    RLPerformRequestRelease(r);
    RLPerformRequestRelease(r2);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(wait_until_done_from_another_thread),
        RL_TEST(wait_until_done_on_own_loop_runs_inline),
        RL_TEST(wait_from_a_callout_of_the_same_loop_does_not_deadlock),
        RL_TEST(wait_times_out_when_the_loop_does_not_run),
        RL_TEST(wait_returns_dropped_when_the_thread_exits),
        RL_TEST(stopping_an_rlthread_drops_its_queued_requests),
        RL_TEST(requests_run_only_in_their_modes_and_once),
        RL_TEST(common_modes_by_default),
        RL_TEST(delayed_request_fires_only_in_its_modes_after_its_delay),
        RL_TEST(delayed_request_fires_on_another_thread),
        RL_TEST(delayed_requests_with_equal_delays_fire_in_order),
        RL_TEST(cancel_before_fire),
        RL_TEST(cancel_at_fire_time),
        RL_TEST(cancel_races_fire_from_another_thread),
        RL_TEST(cancel_with_target),
        RL_TEST(waited_request_cancelled_by_target),
        RL_TEST(delayed_requests_are_dropped_when_the_thread_exits),
        RL_TEST(requests_from_several_threads_keep_each_senders_order),
        RL_TEST(bad_input_is_refused_and_released),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
