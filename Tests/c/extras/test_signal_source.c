/*
 * test_signal_source.c: UNIX signals as run-loop sources (signalfd): kill()
 * to self, storms (coalesced, never lost), real-time signals counted, many
 * watchers in many loops, the signal mask blocked while watched and restored,
 * modes, invalidation from the callback, bad input, no spin while idle.
 */
#include <CRunLoop.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include "rltest.h"

#define DEF kRLRunLoopDefaultMode

typedef struct {
    int calls;
    long total;
    int signo;
    bool invalidate;
    bool stop;
    RLRunLoopSourceRef self;
} probe;

static void cb(int signo, uint32_t count, void *info) {
    probe *p = info;
    RL_ASSERT(count >= 1);
    p->calls++;
    p->total += count;
    p->signo = signo;
    if (p->invalidate) RLRunLoopSourceInvalidate(p->self);
    if (p->stop) RLRunLoopStop(RLRunLoopGetCurrent());
}

static RLRunLoopSourceRef watch(int signo, probe *p, RLRunLoopMode mode) {
    RLSignalSourceContext ctx = {0, p, NULL, NULL, NULL};
    RLRunLoopSourceRef s = RLSignalSourceCreate(signo, 0, cb, &ctx);
    RL_ASSERT(s != NULL);
    p->self = s;
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, mode);
    return s;
}

static void unwatch(RLRunLoopSourceRef s) {
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
}

static bool is_blocked(int signo) {
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    return sigismember(&cur, signo);
}

static int wakes;
static void count_wakes(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
    wakes++;
}

static void sig_kill_to_self_calls_back(void) {
    probe p = {0};
    RLRunLoopSourceRef s = watch(SIGUSR1, &p, DEF);
    RL_ASSERT_EQ_INT(RLSignalSourceGetSignal(s), SIGUSR1);
    RL_ASSERT_EQ_INT(kill(getpid(), SIGUSR1), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.calls, 1);
    RL_ASSERT_EQ_INT(p.total, 1);
    RL_ASSERT_EQ_INT(p.signo, SIGUSR1);
    /* Consumed: no more callouts, no spin. */
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopAfterWaiting, true, 0, count_wakes, NULL);
    RLRunLoopAddObserver(RLRunLoopGetCurrent(), o, DEF);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.25, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(p.calls, 1);
    RL_ASSERT_LE_INT(wakes, 1);
    /* Again. */
    RL_ASSERT_EQ_INT(kill(getpid(), SIGUSR1), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.calls, 2);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
    unwatch(s);
}

static void sig_storm_is_coalesced_but_never_lost(void) {
    probe p = {0};
    RLRunLoopSourceRef s = watch(SIGUSR2, &p, DEF);
    for (int round = 0; round < 20; round++) {
        int before = p.calls;
        for (int i = 0; i < 500; i++) RL_ASSERT_EQ_INT(kill(getpid(), SIGUSR2), 0);
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
        RL_ASSERT_EQ_INT(p.calls, before + 1);
    }
    RL_ASSERT_GE_INT(p.total, 20);
    RL_ASSERT_LE_INT(p.total, 20 * 500);
    unwatch(s);
}

static void sig_realtime_signals_are_counted_one_by_one(void) {
    probe p = {0};
    int sig = SIGRTMIN + 1;
    RLRunLoopSourceRef s = watch(sig, &p, DEF);
    for (int i = 0; i < 100; i++) {
        union sigval v = {.sival_int = i};
        RL_ASSERT_EQ_INT(sigqueue(getpid(), sig, v), 0);
    }
    while (p.total < 100) RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.total, 100);
    RL_ASSERT_LE_INT(p.calls, 100);
    unwatch(s);
}

static void sig_mask_is_blocked_while_watched_then_restored(void) {
    RL_ASSERT(!is_blocked(SIGUSR1));
    probe p = {0};
    RLRunLoopSourceRef a = watch(SIGUSR1, &p, DEF);
    RL_ASSERT(is_blocked(SIGUSR1));
    probe q = {0};
    RLRunLoopSourceRef b = watch(SIGUSR1, &q, DEF);
    unwatch(a);
    RL_ASSERT(is_blocked(SIGUSR1)); /* b still watches */
    /* Pending while the last watcher goes: dropped, not run as SIGUSR1's
       default action (which would kill this process). */
    RL_ASSERT_EQ_INT(kill(getpid(), SIGUSR1), 0);
    unwatch(b);
    RL_ASSERT(!is_blocked(SIGUSR1));
    /* A signal blocked before stays blocked. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    RLRunLoopSourceRef c = watch(SIGUSR2, &p, DEF);
    unwatch(c);
    RL_ASSERT(is_blocked(SIGUSR2));
    RL_ASSERT_EQ_INT(p.calls, 0);
}

static void sig_every_watcher_hears_every_arrival(void) {
    probe p1 = {0}, p2 = {0}, p3 = {0};
    RLRunLoopSourceRef a = watch(SIGUSR1, &p1, DEF);
    RLRunLoopSourceRef b = watch(SIGUSR1, &p2, DEF);
    RLRunLoopSourceRef c = watch(SIGUSR1, &p3, "other");
    RL_ASSERT_EQ_INT(kill(getpid(), SIGUSR1), 0);
    double t0 = rl_test_now();
    while ((p1.calls < 1 || p2.calls < 1) && rl_test_now() - t0 < 5) RLRunLoopRunInMode(DEF, 1, true);
    RL_ASSERT_EQ_INT(p1.calls, 1);
    RL_ASSERT_EQ_INT(p2.calls, 1);
    RL_ASSERT_EQ_INT(p3.calls, 0); /* its mode did not run */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("other", 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p3.calls, 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.05, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(p1.calls + p2.calls + p3.calls, 3);
    unwatch(a);
    unwatch(b);
    unwatch(c);
}

typedef struct {
    probe p;
    atomic_int ready;
    atomic_int calls;
    RLRunLoopRef rl;
} other_loop;

static void other_cb(int signo, uint32_t count, void *info) {
    (void)signo;
    (void)count;
    other_loop *o = info;
    atomic_fetch_add(&o->calls, 1);
    RLRunLoopStop(RLRunLoopGetCurrent());
}

static void *other_thread(void *arg) {
    other_loop *o = arg;
    RLSignalSourceContext ctx = {0, o, NULL, NULL, NULL};
    RLRunLoopSourceRef s = RLSignalSourceCreate(SIGUSR1, 0, other_cb, &ctx);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
    o->rl = (RLRunLoopRef)RLRetain(RLRunLoopGetCurrent()); /* outlives this thread: main polls it */
    atomic_store(&o->ready, 1);
    RLRunLoopRunInMode(DEF, 10, false);
    unwatch(s);
    return NULL;
}

static void sig_watchers_in_two_loops_on_two_threads_both_hear_it(void) {
    probe p = {.stop = true};
    RLRunLoopSourceRef s = watch(SIGUSR1, &p, DEF); /* blocks it here; the thread inherits the mask */
    other_loop o = {0};
    pthread_t th;
    pthread_create(&th, NULL, other_thread, &o);
    while (!atomic_load(&o.ready)) usleep(1000);
    while (!RLRunLoopIsWaiting(o.rl)) usleep(1000);
    RL_ASSERT_EQ_INT(kill(getpid(), SIGUSR1), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 5, false), kRLRunLoopRunStopped);
    pthread_join(th, NULL);
    RLRelease(o.rl);
    RL_ASSERT_EQ_INT(p.calls, 1);
    RL_ASSERT_EQ_INT(atomic_load(&o.calls), 1);
    unwatch(s);
}

static void sig_invalidate_from_callback(void) {
    probe p = {.invalidate = true};
    RLRunLoopSourceRef s = watch(SIGUSR1, &p, DEF);
    RL_ASSERT_EQ_INT(kill(getpid(), SIGUSR1), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.calls, 1);
    RL_ASSERT(!RLRunLoopSourceIsValid(s));
    RL_ASSERT(!RLRunLoopContainsSource(RLRunLoopGetCurrent(), s, DEF));
    RL_ASSERT(is_blocked(SIGUSR1)); /* the source object still exists */
    RL_ASSERT_EQ_INT(kill(getpid(), SIGUSR1), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.05, true), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(p.calls, 1);
    RLRelease(s);
    RL_ASSERT(!is_blocked(SIGUSR1));
}

static void sig_signal_in_another_mode_does_not_wake_or_spin(void) {
    probe p = {0};
    RLRunLoopSourceRef s = watch(SIGUSR1, &p, "sigmode");
    probe keep = {0};
    RLRunLoopSourceRef k = watch(SIGUSR2, &keep, DEF); /* keeps the default mode non-empty */
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopAfterWaiting, true, 0, count_wakes, NULL);
    RLRunLoopAddObserver(RLRunLoopGetCurrent(), o, DEF);
    RL_ASSERT_EQ_INT(kill(getpid(), SIGUSR1), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.25, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(p.calls, 0);
    RL_ASSERT_LE_INT(wakes, 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("sigmode", 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.calls, 1);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
    unwatch(s);
    unwatch(k);
}

static void sig_context_and_description(void) {
    probe p = {0};
    RLSignalSourceContext ctx = {0, &p, rl_test_ctx_retain, rl_test_ctx_release, rl_test_ctx_describe};
    RLRunLoopSourceRef s = RLSignalSourceCreate(SIGHUP, 7, cb, &ctx);
    RL_ASSERT(s != NULL);
    RL_ASSERT_EQ_INT(rl_test_ctx_retains, 1);
    RL_ASSERT_EQ_INT(RLRunLoopSourceGetOrder(s), 7);
    char *d = RLCopyDescription(s);
    RL_ASSERT(d != NULL);
    free(d);
    RLRunLoopSourceContext got;
    memset(&got, 0, sizeof got);
    RLRunLoopSourceGetContext(s, &got);
    RL_ASSERT_EQ_INT(got.version, 1);
    RLRelease(s);
    RL_ASSERT_EQ_INT(rl_test_ctx_releases, 1);
    RL_ASSERT(!is_blocked(SIGHUP));
}

static void version0_perform(void *info) {
    (void)info;
}

static void sig_bad_input_returns_null(void) {
    static const int bad[] = {0, -1, SIGKILL, SIGSTOP, 32, 33, _NSIG, 1000};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        RL_ASSERT(RLSignalSourceCreate(bad[i], 0, cb, NULL) == NULL);
    RL_ASSERT(RLSignalSourceCreate(SIGUSR1, 0, NULL, NULL) == NULL);
    RL_ASSERT(!is_blocked(SIGUSR1));
    RL_ASSERT_EQ_INT(RLSignalSourceGetSignal(NULL), 0);
    RLRunLoopSourceContext c0 = {.version = 0, .perform = version0_perform};
    RLRunLoopSourceRef other = RLRunLoopSourceCreate(0, &c0);
    RL_ASSERT_EQ_INT(RLSignalSourceGetSignal(other), 0);
    RLRelease(other);
    /* NULL context: info is NULL. */
    RLRunLoopSourceRef s = RLSignalSourceCreate(SIGWINCH, 0, cb, NULL);
    RL_ASSERT(s != NULL);
    RLRelease(s);
}

static void sig_pending_before_adding_is_reported(void) {
    probe p = {0};
    RLSignalSourceContext ctx = {0, &p, NULL, NULL, NULL};
    RLRunLoopSourceRef s = RLSignalSourceCreate(SIGUSR1, 0, cb, &ctx);
    RL_ASSERT_EQ_INT(kill(getpid(), SIGUSR1), 0); /* blocked: stays pending */
    usleep(20000);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.calls, 1);
    unwatch(s);
}

typedef struct {
    pid_t pid;
    int n;
    atomic_int done;
} killer_arg;

static void *killer(void *arg) {
    killer_arg *k = arg;
    for (int i = 0; i < k->n; i++) {
        union sigval v = {.sival_int = i};
        while (sigqueue(k->pid, SIGRTMIN, v) < 0) {
            RL_ASSERT(errno == EAGAIN); /* the RT queue is full: let the loop drain it */
            usleep(100);
        }
    }
    atomic_store(&k->done, 1);
    return NULL;
}

static void sig_many_threads_stress_counts_realtime_signals(void) {
    enum { K = 4 };
    int n = (int)rl_test_scaled(2000);
    probe p = {0};
    RLRunLoopSourceRef s = watch(SIGRTMIN, &p, DEF); /* blocked before the threads exist */
    killer_arg args[K];
    pthread_t th[K];
    for (int k = 0; k < K; k++) {
        args[k] = (killer_arg){.pid = getpid(), .n = n};
        pthread_create(&th[k], NULL, killer, &args[k]);
    }
    double t0 = rl_test_now();
    while (p.total < (long)K * n && rl_test_now() - t0 < 30) RLRunLoopRunInMode(DEF, 1, true);
    for (int k = 0; k < K; k++) pthread_join(th[k], NULL);
    RL_ASSERT_EQ_INT(p.total, (long)K * n);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.05, true), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(p.total, (long)K * n);
    unwatch(s);
}

/* ---- the mask of a thread that did not ask is never changed ---------------- */

static void sig_nop(int signo, uint32_t count, void *info) {
    (void)signo;
    (void)count;
    (void)info;
}

typedef struct {
    RLRunLoopSourceRef source;
    pthread_t self;
    int still_blocked;
} mask_case;

static void *make_source_and_exit(void *arg) {
    mask_case *c = arg;
    c->self = pthread_self();
    c->source = RLSignalSourceCreate(SIGUSR2, 0, sig_nop, NULL); /* blocks SIGUSR2 here */
    return NULL;
}

static void *block_then_release_last_source(void *arg) {
    mask_case *c = arg;
    c->self = pthread_self();
    sigset_t set, now;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* this thread asked for it itself */
    RLRunLoopSourceInvalidate(c->source);
    RLRelease(c->source); /* the last source of SIGUSR2 */
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    c->still_blocked = sigismember(&now, SIGUSR2);
    return NULL;
}

/* The thread that made the first source exits; a new thread that gets the
   same pthread_t value blocks the signal itself and frees the last source:
   its own block stays. */
static void sig_restoring_the_mask_never_touches_a_thread_that_reused_the_creators_id(void) {
    int reused = 0;
    for (int attempt = 0; attempt < 20; attempt++) {
        mask_case made = {0}, freed = {0};
        pthread_t t;
        RL_ASSERT_EQ_INT(pthread_create(&t, NULL, make_source_and_exit, &made), 0);
        pthread_join(t, NULL);
        RL_ASSERT(made.source != NULL);
        freed.source = made.source;
        RL_ASSERT_EQ_INT(pthread_create(&t, NULL, block_then_release_last_source, &freed), 0);
        pthread_join(t, NULL);
        RL_ASSERT(freed.still_blocked);
        if (pthread_equal(made.self, freed.self)) reused++;
    }
    RL_ASSERT(reused > 0); /* otherwise the case was never tried */
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(sig_kill_to_self_calls_back),
        RL_TEST(sig_storm_is_coalesced_but_never_lost),
        RL_TEST(sig_realtime_signals_are_counted_one_by_one),
        RL_TEST(sig_mask_is_blocked_while_watched_then_restored),
        RL_TEST(sig_every_watcher_hears_every_arrival),
        RL_TEST(sig_watchers_in_two_loops_on_two_threads_both_hear_it),
        RL_TEST(sig_invalidate_from_callback),
        RL_TEST(sig_signal_in_another_mode_does_not_wake_or_spin),
        RL_TEST(sig_context_and_description),
        RL_TEST(sig_bad_input_returns_null),
        RL_TEST(sig_pending_before_adding_is_reported),
        RL_TEST(sig_many_threads_stress_counts_realtime_signals),
        RL_TEST(sig_restoring_the_mask_never_touches_a_thread_that_reused_the_creators_id),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
