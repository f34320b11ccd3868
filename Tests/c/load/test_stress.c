/* test_stress.c: bounded stress that counts (beyond test_threads.c).
 *
 *  - signals from K threads, with per-signal sequence numbers, to private
 *    and shared sources, while the loop sleeps, wakes and re-enters nested
 *    runs: every sender's last signal is seen by a perform that started
 *    after it was sent; no wake-up is lost (the outer run has no timeout to
 *    hide one).
 *  - K threads add, remove, invalidate and re-date timers, sources and
 *    observers of a running loop: no crash; at quiescence every valid
 *    one-shot timer scheduled with a past date fires exactly once, every
 *    other never again; schedule and cancel balance; infos released once.
 *  - loops made and destroyed with their threads, while another thread
 *    queues work to them: every release is called exactly once, every
 *    schedule has its cancel.
 *  - functions queued by K threads to one loop that runs nested runs: N sent
 *    == N run, per-sender FIFO, nothing twice, every release once.
 *  - bytes written by a thread to many pipes, read one per callout while
 *    callouts run nested passes and re-add sources: every byte read once,
 *    no callout for an empty pipe.
 * Each test prints its operation counts. */
#include <CRunLoop.h>
#include "rltest.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

enum { K = 4 };

/* ---- 1. signals with sequence numbers, nested runs, sleeps ---- */

static RLRunLoopRef g_rl;
static long g_n;
static RLRunLoopSourceRef g_own[K], g_shared;
static atomic_long g_sent[K];        /* last sequence sender i signalled (own source) */
static atomic_long g_sent_shared[K]; /* last sequence sender i signalled (shared source) */
static atomic_long g_seen[K], g_seen_shared[K];
static atomic_long g_performs, g_nested_runs, g_signals, g_wakeups;
static atomic_int g_senders_done, g_finished;
static int g_depth;

static int all_seen(void) {
    if (atomic_load(&g_senders_done) < K) return 0;
    for (int i = 0; i < K; i++)
        if (atomic_load(&g_seen[i]) != g_n || atomic_load(&g_seen_shared[i]) != g_n) return 0;
    return 1;
}

static void maybe_nest(void) {
    long p = atomic_fetch_add(&g_performs, 1);
    if (g_depth < 2 && p % 13 == 0) {
        g_depth++;
        atomic_fetch_add(&g_nested_runs, 1);
        /* Nested runs in the default mode and in a common mode that holds
           the same sources; short timeouts, so they sleep too. */
        RLRunLoopRunInMode(p % 2 ? kRLRunLoopDefaultMode : "nested", p % 3 ? 0.001 : 0, p % 5 == 0);
        g_depth--;
    }
    if (all_seen()) {
        atomic_store(&g_finished, 1);
        RLRunLoopStop(RLRunLoopGetCurrent()); /* the innermost run; outer ones stop below */
    }
}

static void own_perform(void *info) {
    intptr_t i = (intptr_t)info;
    long gen = atomic_load(&g_sent[i]);
    long prev = atomic_load(&g_seen[i]);
    RL_ASSERT(gen >= prev); /* sequences only grow */
    atomic_store(&g_seen[i], gen);
    maybe_nest();
    if (atomic_load(&g_finished)) RLRunLoopStop(RLRunLoopGetCurrent());
}

static void shared_perform(void *info) {
    (void)info;
    for (int i = 0; i < K; i++) atomic_store(&g_seen_shared[i], atomic_load(&g_sent_shared[i]));
    maybe_nest();
    if (atomic_load(&g_finished)) RLRunLoopStop(RLRunLoopGetCurrent());
}

static void *sender(void *arg) {
    intptr_t i = (intptr_t)arg;
    for (long j = 1; j <= g_n; j++) {
        atomic_store(&g_sent[i], j);
        RLRunLoopSourceSignal(g_own[i]);
        atomic_store(&g_sent_shared[i], j);
        RLRunLoopSourceSignal(g_shared);
        atomic_fetch_add(&g_signals, 2);
        if (j % 3 != 0) {
            RLRunLoopWakeUp(g_rl);
            atomic_fetch_add(&g_wakeups, 1);
        } else {
            /* Every third signal pair is woken twice, from two places. */
            RLRunLoopWakeUp(g_rl);
            RLRunLoopWakeUp(g_rl);
            atomic_fetch_add(&g_wakeups, 2);
        }
        if (j % 97 == 0) rl_test_sleep(0.0002); /* let the loop fall asleep */
        else if (j % 7 == 0) sched_yield();
    }
    atomic_fetch_add(&g_senders_done, 1);
    /* The last one in: make sure the loop looks once more. */
    RLRunLoopSourceSignal(g_shared);
    RLRunLoopWakeUp(g_rl);
    return NULL;
}

static void signals_from_k_threads_survive_sleeps_and_nested_runs(void) {
    g_rl = RLRunLoopGetCurrent();
    g_n = rl_test_scaled(20000);
    RLRunLoopAddCommonMode(g_rl, "nested");
    for (intptr_t i = 0; i < K; i++) {
        g_own[i] = rl_test_source0((RLIndex)i, own_perform, (void *)i);
        RLRunLoopAddSource(g_rl, g_own[i], kRLRunLoopCommonModes);
    }
    g_shared = rl_test_source0(-1, shared_perform, NULL);
    RLRunLoopAddSource(g_rl, g_shared, kRLRunLoopCommonModes);
    pthread_t th[K];
    for (intptr_t i = 0; i < K; i++) RL_ASSERT_EQ_INT(pthread_create(&th[i], NULL, sender, (void *)i), 0);
    /* No timeout that could hide a lost wake-up: 60 s is only the failure. */
    double t0 = rl_test_now();
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 60, false);
    double dt = rl_test_now() - t0;
    for (int i = 0; i < K; i++) pthread_join(th[i], NULL);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunStopped);
    for (int i = 0; i < K; i++) {
        RL_ASSERT_EQ_INT(atomic_load(&g_seen[i]), g_n);
        RL_ASSERT_EQ_INT(atomic_load(&g_seen_shared[i]), g_n);
    }
    printf("  %ld signals, %ld wake-ups, %ld performs, %ld nested runs in %.2f s\n", atomic_load(&g_signals),
           atomic_load(&g_wakeups), atomic_load(&g_performs), atomic_load(&g_nested_runs), dt);
    RL_ASSERT_LE_INT(atomic_load(&g_performs), atomic_load(&g_signals) + K);
    for (int i = 0; i < K; i++) {
        RLRunLoopSourceInvalidate(g_own[i]);
        RLRelease(g_own[i]);
    }
    RLRunLoopSourceInvalidate(g_shared);
    RLRelease(g_shared);
}

/* ---- 2. items churned from K threads while the loop runs ---- */

enum { POOL = 8 }; /* items per thread */

typedef struct {
    atomic_int retains, releases;
    atomic_int schedules, cancels, performs;
    atomic_int fires;
    atomic_int observed, bad_activity;
    RLOptionFlags activities;
} item_info;

static item_info g_tinfo[K][POOL], g_sinfo[K][POOL], g_oinfo[K][POOL];
static RLRunLoopTimerRef g_timers[K][POOL];
static RLRunLoopSourceRef g_sources[K][POOL];
static RLRunLoopObserverRef g_observers[K][POOL];
static atomic_long g_churn_ops;
static atomic_int g_churners_done;
static long g_m;

static const void *info_retain(const void *info) {
    atomic_fetch_add(&((item_info *)info)->retains, 1);
    return info;
}
static void info_release(const void *info) {
    atomic_fetch_add(&((item_info *)info)->releases, 1);
}
static void info_schedule(void *info, RLRunLoopRef rl, RLRunLoopMode mode) {
    (void)rl;
    (void)mode;
    atomic_fetch_add(&((item_info *)info)->schedules, 1);
}
static void info_cancel(void *info, RLRunLoopRef rl, RLRunLoopMode mode) {
    (void)rl;
    (void)mode;
    atomic_fetch_add(&((item_info *)info)->cancels, 1);
}
static void info_perform(void *info) {
    atomic_fetch_add(&((item_info *)info)->performs, 1);
}
static void info_fire(RLRunLoopTimerRef t, void *info) {
    (void)t;
    atomic_fetch_add(&((item_info *)info)->fires, 1);
}
static void info_observe(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    item_info *ii = info;
    atomic_fetch_add(&ii->observed, 1);
    if (!((RLOptionFlags)a & ii->activities)) atomic_fetch_add(&ii->bad_activity, 1);
}

static RLRunLoopTimerRef make_timer(item_info *ii, double date, double interval) {
    RLRunLoopTimerContext c = {0, ii, info_retain, info_release, NULL};
    return RLRunLoopTimerCreate(date, interval, 0, 0, info_fire, &c);
}
static RLRunLoopSourceRef make_source(item_info *ii) {
    RLRunLoopSourceContext c;
    memset(&c, 0, sizeof c);
    c.info = ii;
    c.retain = info_retain;
    c.release = info_release;
    c.schedule = info_schedule;
    c.cancel = info_cancel;
    c.perform = info_perform;
    return RLRunLoopSourceCreate(0, &c);
}
static RLRunLoopObserverRef make_observer(item_info *ii, RLOptionFlags activities) {
    RLRunLoopObserverContext c = {0, ii, info_retain, info_release, NULL};
    ii->activities = activities;
    return RLRunLoopObserverCreate(activities, true, 0, info_observe, &c);
}

static const char *const g_churn_modes[3] = {"kCFRunLoopDefaultMode", "kCFRunLoopCommonModes", "side"};

static void *churner(void *arg) {
    intptr_t i = (intptr_t)arg;
    uint32_t x = 2463534242u + (uint32_t)i * 7919u;
    for (long j = 0; j < g_m; j++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        int k = (int)(x % POOL);
        const char *mode = g_churn_modes[(x >> 8) % 3];
        RLAbsoluteTime now = RLAbsoluteTimeGetCurrent();
        switch ((x >> 12) % 12) {
        case 0: RLRunLoopAddTimer(g_rl, g_timers[i][k], mode); break;
        case 1: RLRunLoopRemoveTimer(g_rl, g_timers[i][k], mode); break;
        case 2: RLRunLoopTimerSetNextFireDate(g_timers[i][k], now + ((x >> 16) % 3) * 0.001 - 0.001); break;
        case 3:
            if (k < POOL / 2 && (x >> 20) % 64 == 0) RLRunLoopTimerInvalidate(g_timers[i][k]);
            else RLRunLoopTimerSetNextFireDate(g_timers[i][k], now + 100);
            break;
        case 4: RLRunLoopAddSource(g_rl, g_sources[i][k], mode); break;
        case 5: RLRunLoopRemoveSource(g_rl, g_sources[i][k], mode); break;
        case 6:
            if (k < POOL / 2 && (x >> 20) % 64 == 0) RLRunLoopSourceInvalidate(g_sources[i][k]);
            else RLRunLoopSourceSignal(g_sources[i][k]);
            break;
        case 7:
            RLRunLoopSourceSignal(g_sources[i][k]);
            RLRunLoopWakeUp(g_rl);
            break;
        case 8: RLRunLoopAddObserver(g_rl, g_observers[i][k], mode); break;
        case 9: RLRunLoopRemoveObserver(g_rl, g_observers[i][k], mode); break;
        case 10:
            if (k < POOL / 2 && (x >> 20) % 64 == 0) RLRunLoopObserverInvalidate(g_observers[i][k]);
            else RLRunLoopWakeUp(g_rl);
            break;
        case 11: RLRunLoopAddCommonMode(g_rl, "side"); break;
        }
        atomic_fetch_add(&g_churn_ops, 1);
        if (j % 64 == 0) sched_yield();
    }
    atomic_fetch_add(&g_churners_done, 1);
    RLRunLoopWakeUp(g_rl);
    return NULL;
}

static void stop_when_churners_done(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
    if (atomic_load(&g_churners_done) == K) RLRunLoopStop(RLRunLoopGetCurrent());
}

static void items_churned_by_k_threads_are_accounted_for(void) {
    g_rl = RLRunLoopGetCurrent();
    g_m = rl_test_scaled(20000);
    static const RLOptionFlags acts[4] = {kRLRunLoopBeforeWaiting | kRLRunLoopAfterWaiting, kRLRunLoopBeforeSources,
                                          kRLRunLoopEntry | kRLRunLoopExit, kRLRunLoopAllActivities};
    RLAbsoluteTime now = RLAbsoluteTimeGetCurrent();
    for (int i = 0; i < K; i++)
        for (int k = 0; k < POOL; k++) {
            /* Half one-shot, half repeating every 2 ms. */
            g_timers[i][k] = make_timer(&g_tinfo[i][k], now + 0.001 * k, k % 2 ? 0.002 : 0);
            g_sources[i][k] = make_source(&g_sinfo[i][k]);
            g_observers[i][k] = make_observer(&g_oinfo[i][k], acts[k % 4]);
        }
    RLRunLoopSourceRef keep = rl_test_keep_mode(g_rl, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef stopper = RLRunLoopObserverCreate(kRLRunLoopBeforeWaiting | kRLRunLoopBeforeSources, true, 100,
                                                           stop_when_churners_done, NULL);
    RLRunLoopAddObserver(g_rl, stopper, kRLRunLoopDefaultMode);
    pthread_t th[K];
    for (intptr_t i = 0; i < K; i++) RL_ASSERT_EQ_INT(pthread_create(&th[i], NULL, churner, (void *)i), 0);
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 60, false);
    for (int i = 0; i < K; i++) pthread_join(th[i], NULL);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunStopped);

    /* Quiescence: re-date every valid timer into the past; those in the
       default mode must fire exactly once (one-shots) or at least once. */
    int fires_before[K][POOL], due[K][POOL];
    int due_count = 0;
    RLAbsoluteTime past = RLAbsoluteTimeGetCurrent() - 0.01;
    for (int i = 0; i < K; i++)
        for (int k = 0; k < POOL; k++) {
            RLRunLoopTimerRef t = g_timers[i][k];
            RLRunLoopTimerSetNextFireDate(t, past);
            fires_before[i][k] = atomic_load(&g_tinfo[i][k].fires);
            due[i][k] = RLRunLoopTimerIsValid(t) && RLRunLoopContainsTimer(g_rl, t, kRLRunLoopDefaultMode);
            due_count += due[i][k];
            if (!RLRunLoopTimerDoesRepeat(t)) RL_ASSERT_LE_INT(fires_before[i][k], 1);
            if (!RLRunLoopTimerDoesRepeat(t) && fires_before[i][k] == 1) RL_ASSERT(!RLRunLoopTimerIsValid(t));
        }
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    int fired = 0;
    for (int i = 0; i < K; i++)
        for (int k = 0; k < POOL; k++) {
            RLRunLoopTimerRef t = g_timers[i][k];
            int delta = atomic_load(&g_tinfo[i][k].fires) - fires_before[i][k];
            if (!due[i][k]) {
                RL_ASSERT_EQ_INT(delta, 0);
            } else if (RLRunLoopTimerDoesRepeat(t)) {
                RL_ASSERT_EQ_INT(delta, 1); /* once, however late */
                RL_ASSERT(RLRunLoopTimerIsValid(t));
            } else {
                RL_ASSERT_EQ_INT(delta, 1);
                RL_ASSERT(!RLRunLoopTimerIsValid(t));
            }
            fired += delta;
        }
    RL_ASSERT_EQ_INT(fired, due_count);
    RL_ASSERT_GE_INT(due_count, 1); /* half the pool is never invalidated */

    long performs = 0, observed = 0, fires = 0;
    for (int i = 0; i < K; i++)
        for (int k = 0; k < POOL; k++) {
            RLRunLoopTimerInvalidate(g_timers[i][k]);
            RLRelease(g_timers[i][k]);
            RLRunLoopSourceInvalidate(g_sources[i][k]);
            /* Invalidation leaves no membership behind, the common set included. */
            for (int mm = 0; mm < 3; mm++)
                RL_ASSERT(!RLRunLoopContainsSource(g_rl, g_sources[i][k], g_churn_modes[mm]));
            RLRelease(g_sources[i][k]);
            RLRunLoopObserverInvalidate(g_observers[i][k]);
            RLRelease(g_observers[i][k]);
            item_info *all[3] = {&g_tinfo[i][k], &g_sinfo[i][k], &g_oinfo[i][k]};
            for (int a = 0; a < 3; a++) {
                RL_ASSERT_EQ_INT(atomic_load(&all[a]->releases), atomic_load(&all[a]->retains));
                RL_ASSERT_GE_INT(atomic_load(&all[a]->retains), 1);
            }
            RL_ASSERT_EQ_INT(atomic_load(&g_sinfo[i][k].schedules), atomic_load(&g_sinfo[i][k].cancels));
            RL_ASSERT_EQ_INT(atomic_load(&g_oinfo[i][k].bad_activity), 0);
            performs += atomic_load(&g_sinfo[i][k].performs);
            observed += atomic_load(&g_oinfo[i][k].observed);
            fires += atomic_load(&g_tinfo[i][k].fires);
        }
    printf("  %ld churn operations: %ld performs, %ld timer fires, %ld observer calls; %d due at quiescence\n",
           atomic_load(&g_churn_ops), performs, fires, observed, due_count);
    RLRunLoopObserverInvalidate(stopper);
    RLRelease(stopper);
    RLRelease(keep);
}

/* ---- 3. loops made and destroyed with their threads ---- */

static atomic_long g_q_queued, g_q_ran, g_q_released, g_q_double;
static atomic_long g_sched, g_cancel, g_src_releases, g_src_retains;
static atomic_long g_observed_in_x;

typedef struct {
    atomic_int ran, released;
} work_item;

static void work_fn(void *info) {
    work_item *w = info;
    if (atomic_fetch_add(&w->ran, 1) != 0) atomic_fetch_add(&g_q_double, 1);
    atomic_fetch_add(&g_q_ran, 1);
}
static void work_release(void *info) {
    work_item *w = info;
    if (atomic_fetch_add(&w->released, 1) != 0) atomic_fetch_add(&g_q_double, 1);
    atomic_fetch_add(&g_q_released, 1);
    free(w);
}
static void queue_work(RLRunLoopRef rl, RLRunLoopMode mode) {
    work_item *w = calloc(1, sizeof *w);
    atomic_fetch_add(&g_q_queued, 1);
    RLRunLoopPerformFunctionWithRelease(rl, mode, work_fn, w, work_release);
}

static const void *churn_retain(const void *info) {
    atomic_fetch_add(&g_src_retains, 1);
    return info;
}
static void churn_release(const void *info) {
    (void)info;
    atomic_fetch_add(&g_src_releases, 1);
}
static void churn_schedule(void *info, RLRunLoopRef rl, RLRunLoopMode mode) {
    (void)info;
    (void)rl;
    (void)mode;
    atomic_fetch_add(&g_sched, 1);
}
static void churn_cancel(void *info, RLRunLoopRef rl, RLRunLoopMode mode) {
    (void)info;
    (void)rl;
    (void)mode;
    atomic_fetch_add(&g_cancel, 1);
}

static void check_nothing_obs(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
    atomic_fetch_add(&g_observed_in_x, 1);
}

/* Loops published (retained) by their threads for the feeder. */
enum { SLOTS = 8 };
static _Atomic(RLRunLoopRef) g_published[SLOTS];
static atomic_int g_churn_threads_left;

static void *short_life(void *arg) {
    intptr_t n = (intptr_t)arg;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopRef old = atomic_exchange(&g_published[n % SLOTS], (RLRunLoopRef)RLRetain(rl));
    if (old) RLRelease(old);
    RLRunLoopSourceContext c;
    memset(&c, 0, sizeof c);
    c.info = &g_src_retains;
    c.retain = churn_retain;
    c.release = churn_release;
    c.schedule = churn_schedule;
    c.cancel = churn_cancel;
    c.perform = rl_test_nothing;
    RLRunLoopSourceRef s = RLRunLoopSourceCreate(0, &c);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RLRunLoopAddSource(rl, s, kRLRunLoopCommonModes);
    RLRunLoopAddSource(rl, s, "x");
    RLRunLoopAddCommonMode(rl, "x");
    RLRunLoopTimerRef t =
        rl_test_add_timer(rl, kRLRunLoopCommonModes, (n % 2 ? -1 : 100), 0.5, rl_test_stop_current, NULL);
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopAllActivities, true, 0, check_nothing_obs, NULL);
    RLRunLoopAddObserver(rl, o, "x");
    for (int i = 0; i < 6; i++)
        queue_work(rl, i % 3 == 0 ? kRLRunLoopDefaultMode : i % 3 == 1 ? "x" : kRLRunLoopCommonModes);
    if (n % 3 == 0) RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false); /* some run, some are dropped */
    if (n % 3 == 1) RLRunLoopRunInMode("x", 0.001, false);
    RLRelease(s);
    RLRelease(t);
    RLRelease(o);
    atomic_fetch_sub(&g_churn_threads_left, 1);
    return NULL;
}

static void *feeder(void *arg) {
    (void)arg;
    long i = 0;
    while (atomic_load(&g_churn_threads_left) > 0) {
        RLRunLoopRef rl = atomic_exchange(&g_published[i % SLOTS], NULL);
        if (rl) {
            /* The loop may be alive, exiting or dead: all must be released once. */
            queue_work(rl, i % 2 ? kRLRunLoopDefaultMode : kRLRunLoopCommonModes);
            RLRunLoopWakeUp(rl);
            RLRunLoopStop(rl);
            RLRelease(rl);
        }
        i++;
        if (i % 16 == 0) sched_yield();
    }
    return NULL;
}

static void loops_made_and_destroyed_with_their_threads(void) {
    long n = rl_test_scaled(200);
    atomic_store(&g_churn_threads_left, (int)n);
    pthread_t feed;
    RL_ASSERT_EQ_INT(pthread_create(&feed, NULL, feeder, NULL), 0);
    /* Up to 8 at a time. */
    pthread_t th[8];
    long started = 0;
    while (started < n) {
        int batch = 0;
        for (; batch < 8 && started < n; batch++, started++)
            RL_ASSERT_EQ_INT(pthread_create(&th[batch], NULL, short_life, (void *)(intptr_t)started), 0);
        for (int b = 0; b < batch; b++) pthread_join(th[b], NULL);
    }
    pthread_join(feed, NULL);
    for (int i = 0; i < SLOTS; i++) {
        RLRunLoopRef rl = atomic_exchange(&g_published[i], NULL);
        if (rl) {
            queue_work(rl, kRLRunLoopDefaultMode); /* dead loop: released at once */
            RLRelease(rl);
        }
    }
    printf("  %ld threads/loops, %ld functions queued, %ld ran, %ld released; %ld schedules, %ld cancels\n", n,
           atomic_load(&g_q_queued), atomic_load(&g_q_ran), atomic_load(&g_q_released), atomic_load(&g_sched),
           atomic_load(&g_cancel));
    RL_ASSERT_EQ_INT(atomic_load(&g_q_double), 0);
    RL_ASSERT_EQ_INT(atomic_load(&g_q_released), atomic_load(&g_q_queued));
    RL_ASSERT_LE_INT(atomic_load(&g_q_ran), atomic_load(&g_q_queued));
    RL_ASSERT_GE_INT(atomic_load(&g_q_ran), (n + 2) / 3 * 4); /* the threads that ran the default mode */
    RL_ASSERT_EQ_INT(atomic_load(&g_sched), atomic_load(&g_cancel));
    RL_ASSERT_EQ_INT(atomic_load(&g_sched), n * 2); /* default + "x" */
    RL_ASSERT_EQ_INT(atomic_load(&g_src_releases), atomic_load(&g_src_retains));
    RL_ASSERT_EQ_INT(atomic_load(&g_src_retains), n);
    RL_ASSERT_GE_INT(atomic_load(&g_observed_in_x), 1);
}

/* ---- 4. functions queued by K threads: FIFO per sender, exactly once ---- */

typedef struct {
    int sender;
    long seq;
} msg;
static long g_msgs_per_sender;
static long g_last_seq[K];
static atomic_long g_msgs_run, g_msgs_released, g_fifo_broken, g_msgs_twice, g_msg_nested;
static atomic_int g_msg_senders_done;

static void msg_fn(void *info) {
    msg *mm = info;
    if (mm->seq == -1) atomic_fetch_add(&g_msgs_twice, 1);
    if (mm->seq != g_last_seq[mm->sender] + 1) atomic_fetch_add(&g_fifo_broken, 1);
    g_last_seq[mm->sender] = mm->seq;
    mm->seq = -1;
    if (atomic_fetch_add(&g_msgs_run, 1) + 1 == K * g_msgs_per_sender) RLRunLoopStop(RLRunLoopGetCurrent());
}
static void msg_release(void *info) {
    atomic_fetch_add(&g_msgs_released, 1);
    free(info);
}

static void *msg_sender(void *arg) {
    intptr_t i = (intptr_t)arg;
    for (long j = 1; j <= g_msgs_per_sender; j++) {
        msg *mm = malloc(sizeof *mm);
        mm->sender = (int)i;
        mm->seq = j;
        RLRunLoopPerformFunctionWithRelease(g_rl, kRLRunLoopCommonModes, msg_fn, mm, msg_release);
        RLRunLoopWakeUp(g_rl);
        if (j % 251 == 0) rl_test_sleep(0.0002);
    }
    atomic_fetch_add(&g_msg_senders_done, 1);
    return NULL;
}

/* Runs the loop re-entrantly in another common mode from a timer. */
static void nest_from_timer(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    atomic_fetch_add(&g_msg_nested, 1);
    RLRunLoopRunInMode("other-common", 0.0005, false);
    if (atomic_load(&g_msgs_run) == K * g_msgs_per_sender) RLRunLoopStop(RLRunLoopGetCurrent());
}

static void functions_from_k_threads_run_once_in_fifo_order(void) {
    g_rl = RLRunLoopGetCurrent();
    g_msgs_per_sender = rl_test_scaled(20000);
    RLRunLoopAddCommonMode(g_rl, "other-common");
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0.0005, nest_from_timer, NULL);
    RLRunLoopAddTimer(g_rl, t, kRLRunLoopDefaultMode);
    pthread_t th[K];
    for (intptr_t i = 0; i < K; i++) RL_ASSERT_EQ_INT(pthread_create(&th[i], NULL, msg_sender, (void *)i), 0);
    double t0 = rl_test_now();
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 60, false);
    double dt = rl_test_now() - t0;
    for (int i = 0; i < K; i++) pthread_join(th[i], NULL);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunStopped);
    printf("  %ld functions sent, %ld run, %ld released, %ld nested runs in %.2f s\n", K * g_msgs_per_sender,
           atomic_load(&g_msgs_run), atomic_load(&g_msgs_released), atomic_load(&g_msg_nested), dt);
    RL_ASSERT_EQ_INT(atomic_load(&g_msgs_run), K * g_msgs_per_sender);
    RL_ASSERT_EQ_INT(atomic_load(&g_msgs_released), K * g_msgs_per_sender);
    RL_ASSERT_EQ_INT(atomic_load(&g_msgs_twice), 0);
    RL_ASSERT_EQ_INT(atomic_load(&g_fifo_broken), 0);
    for (int i = 0; i < K; i++) RL_ASSERT_EQ_INT(g_last_seq[i], g_msgs_per_sender);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
}

/* ---- 5. bytes on many pipes, one descriptor per pass, nested runs ---- */

/* A writer thread puts one byte at a time on random pipes while the loop
   handles the ready descriptors one per pass, some callouts running a
   nested pass and some removing and re-adding another pipe's source. Every
   byte written is read by exactly one callout, and no callout finds its
   pipe empty: an event taken from the kernel is never handed out after a
   nested run may have consumed it, nor for a source removed since. */
enum { PIPES = 16 };

typedef struct {
    int fds[PIPES][2];
    RLRunLoopSourceRef sources[PIPES];
    atomic_long read;
    long empty_reads, nested_runs;
    atomic_bool writer_done;
    atomic_bool loop_gone; /* the loop gave up: the writer must not wait for it */
    long to_write;
} pipe_stress;
static pipe_stress g_ps;

static int ps_fd_of(void *info) {
    return g_ps.fds[(intptr_t)info][0];
}

static void ps_perform(void *info) {
    intptr_t i = (intptr_t)info;
    char byte;
    ssize_t n = read(g_ps.fds[i][0], &byte, 1);
    if (n != 1) {
        g_ps.empty_reads++;
        return;
    }
    long seen = atomic_fetch_add(&g_ps.read, 1) + 1;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    if (seen % 7 == 0) {
        g_ps.nested_runs++;
        RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    }
    if (seen % 11 == 0) {
        intptr_t other = (i + 1 + seen % (PIPES - 1)) % PIPES;
        RLRunLoopRemoveSource(rl, g_ps.sources[other], kRLRunLoopDefaultMode);
        RLRunLoopAddSource(rl, g_ps.sources[other], kRLRunLoopDefaultMode);
    }
}

/* Bursts of bytes on several pipes at once, so that one wait finds many
   ready; the next burst waits until the loop read this one. */
static void *ps_writer(void *arg) {
    (void)arg;
    unsigned seed = 12345;
    long written = 0;
    while (written < g_ps.to_write) {
        int burst = 2 + (int)(rand_r(&seed) % (PIPES - 1));
        for (int b = 0; b < burst && written < g_ps.to_write; b++, written++) {
            int p = (int)(rand_r(&seed) % PIPES);
            while (write(g_ps.fds[p][1], "x", 1) != 1) sched_yield();
        }
        while (atomic_load(&g_ps.read) < written && !atomic_load(&g_ps.loop_gone)) sched_yield();
    }
    atomic_store(&g_ps.writer_done, true);
    RLRunLoopWakeUp(g_rl);
    return NULL;
}

static void ready_descriptors_one_per_pass_lose_nothing(void) {
    g_rl = RLRunLoopGetCurrent();
    g_ps = (pipe_stress){.to_write = rl_test_scaled(40000)};
    for (intptr_t i = 0; i < PIPES; i++) {
        RL_ASSERT_EQ_INT(pipe2(g_ps.fds[i], O_NONBLOCK), 0);
        g_ps.sources[i] = rl_test_source1(0, ps_fd_of, ps_perform, (void *)i);
        RLRunLoopAddSource(g_rl, g_ps.sources[i], kRLRunLoopDefaultMode);
    }
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, ps_writer, NULL), 0);
    double end = rl_test_now() + 120;
    while ((!atomic_load(&g_ps.writer_done) || atomic_load(&g_ps.read) < g_ps.to_write) && rl_test_now() < end)
        RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false);
    atomic_store(&g_ps.loop_gone, true);
    pthread_join(th, NULL);
    long bytes = atomic_load(&g_ps.read);
    printf("  %ld bytes read, %ld nested runs, %ld empty reads\n", bytes, g_ps.nested_runs, g_ps.empty_reads);
    RL_ASSERT_EQ_INT(bytes, g_ps.to_write);
    RL_ASSERT_EQ_INT(g_ps.empty_reads, 0);
    for (int i = 0; i < PIPES; i++) {
        RLRunLoopSourceInvalidate(g_ps.sources[i]);
        RLRelease(g_ps.sources[i]);
        close(g_ps.fds[i][0]);
        close(g_ps.fds[i][1]);
    }
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(signals_from_k_threads_survive_sleeps_and_nested_runs),
        RL_TEST(items_churned_by_k_threads_are_accounted_for),
        RL_TEST(loops_made_and_destroyed_with_their_threads),
        RL_TEST(functions_from_k_threads_run_once_in_fifo_order),
        RL_TEST(ready_descriptors_one_per_pass_lose_nothing),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
