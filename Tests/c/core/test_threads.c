/* test_threads.c: run loops and threads: one loop per thread, the main loop
   from any thread, teardown at thread exit, IsWaiting, and bounded stress:
   signals and wake-ups from several threads are never lost; items added,
   removed and invalidated from several threads while the loop runs. */
#include <CRunLoop.h>
#include "rltest.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

enum { K = 4 };

/* ---- identity ---- */

static RLRunLoopRef g_main_seen[K];
static RLRunLoopRef g_current_seen[K];
static atomic_int g_stable;

static void *look_around(void *arg) {
    intptr_t i = (intptr_t)arg;
    g_main_seen[i] = RLRunLoopGetMain();
    g_current_seen[i] = RLRunLoopGetCurrent();
    if (RLRunLoopGetCurrent() == g_current_seen[i]) atomic_fetch_add(&g_stable, 1);
    return NULL;
}

static void each_thread_has_its_own_loop_and_sees_the_main_loop(void) {
    RLRunLoopRef main_rl = RLRunLoopGetMain();
    RL_ASSERT(main_rl != NULL);
    RL_ASSERT(RLRunLoopGetCurrent() == main_rl);
    RL_ASSERT(RLRunLoopGetCurrent() == RLRunLoopGetCurrent());
    pthread_t th[K];
    /* Run the threads at the same time so their loops coexist. */
    for (intptr_t i = 0; i < K; i++) RL_ASSERT_EQ_INT(pthread_create(&th[i], NULL, look_around, (void *)i), 0);
    for (int i = 0; i < K; i++) pthread_join(th[i], NULL);
    RL_ASSERT_EQ_INT(atomic_load(&g_stable), K);
    for (int i = 0; i < K; i++) {
        RL_ASSERT(g_main_seen[i] == main_rl);
        RL_ASSERT(g_current_seen[i] != NULL);
        RL_ASSERT(g_current_seen[i] != main_rl);
    }
}

static atomic_int g_distinct_ok;
static pthread_barrier_t g_barrier;
static RLRunLoopRef g_loops[K];
static void *get_loop_and_wait(void *arg) {
    intptr_t i = (intptr_t)arg;
    g_loops[i] = RLRunLoopGetCurrent();
    pthread_barrier_wait(&g_barrier); /* all loops exist now */
    pthread_barrier_wait(&g_barrier); /* main compared them */
    return NULL;
}

static void live_threads_have_distinct_loops(void) {
    pthread_t th[K];
    pthread_barrier_init(&g_barrier, NULL, K + 1);
    for (intptr_t i = 0; i < K; i++) RL_ASSERT_EQ_INT(pthread_create(&th[i], NULL, get_loop_and_wait, (void *)i), 0);
    pthread_barrier_wait(&g_barrier);
    int ok = 1;
    for (int i = 0; i < K; i++)
        for (int j = i + 1; j < K; j++)
            if (g_loops[i] == g_loops[j]) ok = 0;
    for (int i = 0; i < K; i++)
        if (g_loops[i] == RLRunLoopGetMain() || g_loops[i] == NULL) ok = 0;
    atomic_store(&g_distinct_ok, ok);
    pthread_barrier_wait(&g_barrier);
    for (int i = 0; i < K; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&g_barrier);
    RL_ASSERT_EQ_INT(atomic_load(&g_distinct_ok), 1);
}

/* The main loop runs work queued and timers added from other threads. */
static atomic_int g_main_work;
static void main_work(void *info) {
    (void)info;
    atomic_fetch_add(&g_main_work, 1);
}
static void *feed_main(void *arg) {
    (void)arg;
    RLRunLoopRef m = RLRunLoopGetMain();
    rl_test_wait_sleeping(m, 10);
    RLRunLoopPerformFunction(m, kRLRunLoopDefaultMode, main_work, NULL);
    RLRunLoopWakeUp(m);
    RLRunLoopTimerRef t = rl_test_add_timer(m, kRLRunLoopDefaultMode, 0.02, 0, rl_test_stop_current, NULL);
    RLRelease(t);
    return NULL;
}

static void main_loop_is_reachable_from_other_threads(void) {
    RLRunLoopSourceRef keep = rl_test_keep_mode(RLRunLoopGetMain(), kRLRunLoopDefaultMode);
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, feed_main, NULL), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 30, false), kRLRunLoopRunStopped);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(atomic_load(&g_main_work), 1);
    RLRelease(keep);
}

/* ---- teardown at thread exit ---- */

static atomic_int g_cancels, g_schedules, g_fn_calls, g_performs;
static void td_schedule(void *info, RLRunLoopRef rl, RLRunLoopMode mode) {
    (void)info;
    (void)rl;
    (void)mode;
    atomic_fetch_add(&g_schedules, 1);
}
static void td_cancel(void *info, RLRunLoopRef rl, RLRunLoopMode mode) {
    (void)info;
    (void)rl;
    (void)mode;
    atomic_fetch_add(&g_cancels, 1);
}
static void td_perform(void *info) {
    (void)info;
    atomic_fetch_add(&g_performs, 1);
}
static void td_fn(void *info) {
    (void)info;
    atomic_fetch_add(&g_fn_calls, 1);
}
static void td_timer(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    atomic_fetch_add(&g_fn_calls, 1);
}
static void td_observer(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
    atomic_fetch_add(&g_fn_calls, 1);
}

typedef struct {
    atomic_int releases;
} td_info;
static td_info g_tdi;
static const void *td_retain(const void *info) {
    (void)info;
    return info;
}
static void td_release(const void *info) {
    atomic_fetch_add(&((td_info *)info)->releases, 1);
}

static RLRunLoopSourceRef g_td_src;
static RLRunLoopTimerRef g_td_timer;
static RLRunLoopObserverRef g_td_obs;

static void *populate_and_exit(void *arg) {
    (void)arg;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopAddSource(rl, g_td_src, kRLRunLoopDefaultMode);
    RLRunLoopAddSource(rl, g_td_src, "other");
    RLRunLoopAddTimer(rl, g_td_timer, kRLRunLoopCommonModes);
    RLRunLoopAddObserver(rl, g_td_obs, kRLRunLoopDefaultMode);
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, td_fn, NULL);
    RLRunLoopPerformFunction(rl, kRLRunLoopCommonModes, td_fn, NULL);
    return NULL;
}

static void loop_is_torn_down_at_thread_exit(void) {
    RLRunLoopSourceContext c;
    memset(&c, 0, sizeof c);
    c.info = &g_tdi;
    c.retain = td_retain;
    c.release = td_release;
    c.schedule = td_schedule;
    c.cancel = td_cancel;
    c.perform = td_perform;
    g_td_src = RLRunLoopSourceCreate(0, &c);
    g_td_timer = rl_test_timer(RLAbsoluteTimeGetCurrent() + 0.01, 0, td_timer, NULL);
    g_td_obs = RLRunLoopObserverCreate(kRLRunLoopAllActivities, true, 0, td_observer, NULL);
    RLRunLoopSourceSignal(g_td_src);

    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, populate_and_exit, NULL), 0);
    pthread_join(th, NULL);
    rl_test_sleep(0.05);
    RL_ASSERT_EQ_INT(atomic_load(&g_schedules), 2);
    RL_ASSERT_EQ_INT(atomic_load(&g_cancels), 2);  /* removed from both modes */
    RL_ASSERT_EQ_INT(atomic_load(&g_fn_calls), 0); /* work dropped; timer, observer never called */
    RL_ASSERT_EQ_INT(atomic_load(&g_performs), 0);
    RL_ASSERT_EQ_INT(atomic_load(&g_tdi.releases), 0); /* we still hold the source */
    /* The objects survive the loop and can be used again here. */
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopAddSource(rl, g_td_src, kRLRunLoopDefaultMode);
    RL_ASSERT(RLRunLoopContainsSource(rl, g_td_src, kRLRunLoopDefaultMode));
    RLRunLoopSourceSignal(g_td_src);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(atomic_load(&g_performs), 1);
    RLRunLoopSourceInvalidate(g_td_src);
    RLRelease(g_td_src);
    RLRunLoopTimerInvalidate(g_td_timer);
    RLRelease(g_td_timer);
    RLRelease(g_td_obs);
    RL_ASSERT_EQ_INT(atomic_load(&g_tdi.releases), 1);
    RL_ASSERT_EQ_INT(atomic_load(&g_fn_calls), 0);
}

/* Threads that only touch their loop, many times over: no leak, no crash. */
static void *touch_and_exit(void *arg) {
    (void)arg;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = rl_test_keep_mode(rl, "m");
    RLRunLoopPerformFunction(rl, "m", td_fn, NULL);
    RLRunLoopRunInMode("m", 0, false);
    RLRelease(s);
    return NULL;
}

static void many_short_lived_threads_with_loops(void) {
    long n = rl_test_scaled(200);
    for (long i = 0; i < n; i++) {
        pthread_t th;
        RL_ASSERT_EQ_INT(pthread_create(&th, NULL, touch_and_exit, NULL), 0);
        pthread_join(th, NULL);
    }
    RL_ASSERT_EQ_INT(atomic_load(&g_fn_calls), n);
}

/* ---- IsWaiting ---- */

static RLRunLoopRef g_rl;
static atomic_int g_saw_waiting, g_saw_awake_in_callout;
static void *watch_waiting(void *arg) {
    (void)arg;
    atomic_store(&g_saw_waiting, rl_test_wait_sleeping(g_rl, 10));
    RLRunLoopStop(g_rl);
    return NULL;
}
static void check_awake(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
    if (!RLRunLoopIsWaiting(RLRunLoopGetCurrent())) atomic_fetch_add(&g_saw_awake_in_callout, 1);
}

static void is_waiting_is_true_only_while_the_loop_sleeps(void) {
    g_rl = RLRunLoopGetCurrent();
    RL_ASSERT(!RLRunLoopIsWaiting(g_rl));
    RLRunLoopSourceRef keep = rl_test_keep_mode(g_rl, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o =
        RLRunLoopObserverCreate(kRLRunLoopBeforeWaiting | kRLRunLoopAfterWaiting, true, 0, check_awake, NULL);
    RLRunLoopAddObserver(g_rl, o, kRLRunLoopDefaultMode);
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, watch_waiting, NULL), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 30, false), kRLRunLoopRunStopped);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(atomic_load(&g_saw_waiting), 1);
    RL_ASSERT_GE_INT(atomic_load(&g_saw_awake_in_callout), 2);
    RL_ASSERT(!RLRunLoopIsWaiting(g_rl));
    RLRelease(o);
    RLRelease(keep);
}

static void *stop_when_sleeping(void *arg) {
    (void)arg;
    rl_test_wait_sleeping(g_rl, 10);
    RLRunLoopStop(g_rl);
    return NULL;
}

static void stop_from_another_thread_ends_a_sleeping_run(void) {
    g_rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(g_rl, kRLRunLoopDefaultMode);
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, stop_when_sleeping, NULL), 0);
    double t0 = rl_test_now();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 60, false), kRLRunLoopRunStopped);
    RL_ASSERT_LE_DBL(rl_test_now() - t0, 20);
    pthread_join(th, NULL);
    RLRelease(keep);
}

/* ---- stress: signals and wake-ups from K threads are never lost ---- */

static RLRunLoopSourceRef g_src[K];
static atomic_long g_gen[K];  /* last signal number of thread i */
static atomic_long g_seen[K]; /* gen seen by the latest perform of source i */
static atomic_long g_nperform[K];
static long g_n;

static void stress_perform(void *info) {
    intptr_t i = (intptr_t)info;
    atomic_store(&g_seen[i], atomic_load(&g_gen[i]));
    atomic_fetch_add(&g_nperform[i], 1);
    for (int j = 0; j < K; j++)
        if (atomic_load(&g_seen[j]) != g_n) return;
    RLRunLoopStop(RLRunLoopGetCurrent());
}

static void *signal_many(void *arg) {
    intptr_t i = (intptr_t)arg;
    for (long j = 1; j <= g_n; j++) {
        atomic_store(&g_gen[i], j);
        RLRunLoopSourceSignal(g_src[i]);
        RLRunLoopWakeUp(g_rl);
        if (j % 64 == 0) sched_yield();
    }
    return NULL;
}

static void signals_and_wakeups_from_many_threads_are_never_lost(void) {
    g_rl = RLRunLoopGetCurrent();
    g_n = rl_test_scaled(20000);
    for (intptr_t i = 0; i < K; i++) {
        g_src[i] = rl_test_source0(0, stress_perform, (void *)i);
        RLRunLoopAddSource(g_rl, g_src[i], kRLRunLoopDefaultMode);
    }
    pthread_t th[K];
    for (intptr_t i = 0; i < K; i++) RL_ASSERT_EQ_INT(pthread_create(&th[i], NULL, signal_many, (void *)i), 0);
    /* No polling: if a wake-up is lost the loop sleeps and the run times out. */
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 30, false);
    for (int i = 0; i < K; i++) pthread_join(th[i], NULL);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunStopped);
    for (int i = 0; i < K; i++) {
        RL_ASSERT_EQ_INT(atomic_load(&g_seen[i]), g_n);
        RL_ASSERT_GE_INT(atomic_load(&g_nperform[i]), 1);
        RL_ASSERT_LE_INT(atomic_load(&g_nperform[i]), g_n);
        RLRunLoopSourceInvalidate(g_src[i]);
        RLRelease(g_src[i]);
    }
}

/* Wake-ups racing with the loop going to sleep: one thread queues work and
   wakes the loop, one item at a time, waiting for each to run. */
static atomic_long g_done_items;
static void done_item(void *info) {
    (void)info;
    atomic_fetch_add(&g_done_items, 1);
}
static void *ping(void *arg) {
    (void)arg;
    for (long j = 1; j <= g_n; j++) {
        RLRunLoopPerformFunction(g_rl, kRLRunLoopDefaultMode, done_item, NULL);
        RLRunLoopWakeUp(g_rl);
        double end = rl_test_now() + 10;
        while (atomic_load(&g_done_items) < j) {
            if (rl_test_now() > end) return (void *)1; /* lost wake-up */
            sched_yield();
        }
    }
    RLRunLoopStop(g_rl);
    return NULL;
}

static void wakeup_racing_with_sleep_is_never_lost(void) {
    g_rl = RLRunLoopGetCurrent();
    g_n = rl_test_scaled(5000);
    RLRunLoopSourceRef keep = rl_test_keep_mode(g_rl, kRLRunLoopDefaultMode);
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, ping, NULL), 0);
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 60, false);
    void *lost = NULL;
    pthread_join(th, &lost);
    RL_ASSERT(lost == NULL);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(atomic_load(&g_done_items), g_n);
    RLRelease(keep);
}

/* ---- stress: adding, removing, invalidating from K threads ---- */

enum { M = 50 };
static atomic_int g_kept_timer_fires, g_kept_source_performs, g_bad_fires, g_threads_done;
static atomic_int g_kept_fired[K * M], g_kept_performed[K * M];
static RLRunLoopSourceRef g_kept_src[K * M];
static RLRunLoopTimerRef g_kept_tm[K * M];
static long g_m;

static void maybe_stop(void) {
    if (atomic_load(&g_kept_timer_fires) == K * g_m && atomic_load(&g_kept_source_performs) == K * g_m &&
        atomic_load(&g_threads_done) == K)
        RLRunLoopStop(RLRunLoopGetCurrent());
}
static void kept_timer(RLRunLoopTimerRef t, void *info) {
    (void)t;
    if (atomic_fetch_add(&g_kept_fired[(intptr_t)info], 1) == 0) atomic_fetch_add(&g_kept_timer_fires, 1);
    maybe_stop();
}
static void kept_perform(void *info) {
    if (atomic_fetch_add(&g_kept_performed[(intptr_t)info], 1) == 0) atomic_fetch_add(&g_kept_source_performs, 1);
    maybe_stop();
}
static void bad_timer(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    atomic_fetch_add(&g_bad_fires, 1);
}
static void bad_perform(void *info) {
    (void)info;
    atomic_fetch_add(&g_bad_fires, 1);
}
static void check_stop(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
    maybe_stop();
}

static void *churn(void *arg) {
    intptr_t i = (intptr_t)arg;
    for (long j = 0; j < g_m; j++) {
        intptr_t id = i * M + j;
        RLAbsoluteTime now = RLAbsoluteTimeGetCurrent();
        /* Kept: must fire / perform. */
        g_kept_tm[id] = rl_test_timer(now + 0.001 * (double)(j % 10), 0, kept_timer, (void *)id);
        RLRunLoopAddTimer(g_rl, g_kept_tm[id], j % 2 ? kRLRunLoopDefaultMode : kRLRunLoopCommonModes);
        g_kept_src[id] = rl_test_source0((RLIndex)(j % 3), kept_perform, (void *)id);
        RLRunLoopAddSource(g_rl, g_kept_src[id], kRLRunLoopDefaultMode);
        RLRunLoopSourceSignal(g_kept_src[id]);
        RLRunLoopWakeUp(g_rl);
        /* Removed or invalidated before they are due: must never run. */
        RLRunLoopTimerRef rt = rl_test_timer(now + 1000, 0.5, bad_timer, NULL);
        RLRunLoopAddTimer(g_rl, rt, kRLRunLoopDefaultMode);
        if (j % 2) RLRunLoopRemoveTimer(g_rl, rt, kRLRunLoopDefaultMode);
        else RLRunLoopTimerInvalidate(rt);
        RLRelease(rt);
        RLRunLoopSourceRef rs = rl_test_source0(0, bad_perform, NULL);
        RLRunLoopAddSource(g_rl, rs, kRLRunLoopDefaultMode);
        RLRunLoopAddSource(g_rl, rs, "elsewhere");
        if (j % 2) {
            RLRunLoopRemoveSource(g_rl, rs, kRLRunLoopDefaultMode);
            RLRunLoopSourceSignal(rs);
        } else {
            RLRunLoopSourceInvalidate(rs);
            RLRunLoopSourceSignal(rs);
        }
        RLRelease(rs);
        /* Moved around while the loop may be firing it. */
        RLRunLoopTimerSetNextFireDate(g_kept_tm[id], now + 0.002);
    }
    atomic_fetch_add(&g_threads_done, 1);
    RLRunLoopWakeUp(g_rl);
    return NULL;
}

static void items_added_removed_and_invalidated_from_many_threads(void) {
    g_rl = RLRunLoopGetCurrent();
    g_m = rl_test_scaled(M);
    RLRunLoopSourceRef keep = rl_test_keep_mode(g_rl, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopBeforeWaiting, true, 0, check_stop, NULL);
    RLRunLoopAddObserver(g_rl, o, kRLRunLoopDefaultMode);
    pthread_t th[K];
    for (intptr_t i = 0; i < K; i++) RL_ASSERT_EQ_INT(pthread_create(&th[i], NULL, churn, (void *)i), 0);
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 30, false);
    for (int i = 0; i < K; i++) pthread_join(th[i], NULL);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(atomic_load(&g_bad_fires), 0);
    RL_ASSERT_EQ_INT(atomic_load(&g_kept_timer_fires), K * g_m);
    RL_ASSERT_EQ_INT(atomic_load(&g_kept_source_performs), K * g_m);
    for (int i = 0; i < K; i++)
        for (long j = 0; j < g_m; j++) {
            RL_ASSERT_EQ_INT(atomic_load(&g_kept_fired[i * M + j]), 1); /* one-shot timers */
            RLRunLoopSourceInvalidate(g_kept_src[i * M + j]);
            RLRelease(g_kept_src[i * M + j]);
            RL_ASSERT(!RLRunLoopTimerIsValid(g_kept_tm[i * M + j]));
            RLRelease(g_kept_tm[i * M + j]);
        }
    RLRelease(o);
    RLRelease(keep);
}

/* ---- two loops in two threads signalling each other ---- */

static RLRunLoopRef g_peer[2];
static RLRunLoopSourceRef g_peer_src[2];
static atomic_int g_peer_ready;
static atomic_long g_ball;
static long g_rounds;

static void hit(void *info) {
    intptr_t me = (intptr_t)info;
    long b = atomic_fetch_add(&g_ball, 1) + 1;
    if (b >= g_rounds) {
        RLRunLoopStop(RLRunLoopGetCurrent());
        RLRunLoopStop(g_peer[1 - me]);
        return;
    }
    RLRunLoopSourceSignal(g_peer_src[1 - me]);
    RLRunLoopWakeUp(g_peer[1 - me]);
}

static void *peer_thread(void *arg) {
    intptr_t me = (intptr_t)arg;
    g_peer[me] = RLRunLoopGetCurrent();
    RLRunLoopAddSource(g_peer[me], g_peer_src[me], kRLRunLoopDefaultMode);
    atomic_fetch_add(&g_peer_ready, 1);
    while (atomic_load(&g_peer_ready) < 2) sched_yield();
    if (me == 0) {
        RLRunLoopSourceSignal(g_peer_src[1]);
        RLRunLoopWakeUp(g_peer[1]);
    }
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 30, false);
    /* Both threads must be done with the other's loop before either exits. */
    atomic_fetch_add(&g_peer_ready, 1);
    while (atomic_load(&g_peer_ready) < 4) sched_yield();
    return (void *)(intptr_t)r;
}

static void two_loops_ping_pong_without_losing_a_signal(void) {
    g_rounds = rl_test_scaled(10000);
    for (intptr_t i = 0; i < 2; i++) g_peer_src[i] = rl_test_source0(0, hit, (void *)i);
    pthread_t th[2];
    for (intptr_t i = 0; i < 2; i++) RL_ASSERT_EQ_INT(pthread_create(&th[i], NULL, peer_thread, (void *)i), 0);
    void *r0 = NULL, *r1 = NULL;
    pthread_join(th[0], &r0);
    pthread_join(th[1], &r1);
    RL_ASSERT_EQ_INT((intptr_t)r0, kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT((intptr_t)r1, kRLRunLoopRunStopped);
    RL_ASSERT_GE_INT(atomic_load(&g_ball), g_rounds);
    for (int i = 0; i < 2; i++) RLRelease(g_peer_src[i]);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(each_thread_has_its_own_loop_and_sees_the_main_loop),
        RL_TEST(live_threads_have_distinct_loops),
        RL_TEST(main_loop_is_reachable_from_other_threads),
        RL_TEST(loop_is_torn_down_at_thread_exit),
        RL_TEST(many_short_lived_threads_with_loops),
        RL_TEST(is_waiting_is_true_only_while_the_loop_sleeps),
        RL_TEST(stop_from_another_thread_ends_a_sleeping_run),
        RL_TEST(signals_and_wakeups_from_many_threads_are_never_lost),
        RL_TEST(wakeup_racing_with_sleep_is_never_lost),
        RL_TEST(items_added_removed_and_invalidated_from_many_threads),
        RL_TEST(two_loops_ping_pong_without_losing_a_signal),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
