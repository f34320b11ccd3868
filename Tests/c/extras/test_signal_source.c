/*
 * test_signal_source.c: UNIX signals as run-loop sources: kill() to self,
 * storms (coalesced, never lost), real-time signals counted, many watchers
 * in many loops, exact counts per loop, threads that existed before the
 * source (and never block the signal), thread-directed signals, the
 * previous disposition put back, no thread's mask ever changed, faults not
 * swallowed, fork, modes, invalidation from the callback, bad input, no spin
 * while idle.
 */
#include <CRunLoop.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "rltest.h"

#define DEF kRLRunLoopDefaultMode

/* ThreadSanitizer runs a program's signal handler later, at a point of its
   own choosing, and keeps at most one signal of each number pending per
   thread until then: it merges queued real-time signals before the
   library's handler sees them. Under it a count of signals sent in a burst
   is checked as at least one and at most the number sent; every other
   build checks it exactly. */
#if defined(__SANITIZE_THREAD__)
#define SIGNALS_MERGED_BEFORE_THE_HANDLER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SIGNALS_MERGED_BEFORE_THE_HANDLER 1
#endif
#endif
#ifndef SIGNALS_MERGED_BEFORE_THE_HANDLER
#define SIGNALS_MERGED_BEFORE_THE_HANDLER 0
#endif

/* What a count of `sent` signals sent in a burst must reach. */
static long burst_count(long sent) {
    return SIGNALS_MERGED_BEFORE_THE_HANDLER ? 1 : sent;
}

#define ASSERT_BURST_COUNT(got, sent)                                                                                  \
    do {                                                                                                               \
        if (SIGNALS_MERGED_BEFORE_THE_HANDLER) {                                                                       \
            RL_ASSERT_GE_INT((got), 1);                                                                                \
            RL_ASSERT_LE_INT((got), (sent));                                                                           \
        } else {                                                                                                       \
            RL_ASSERT_EQ_INT((got), (sent));                                                                           \
        }                                                                                                              \
    } while (0)

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

/* The disposition is `h` (SIG_DFL, SIG_IGN or a plain handler). */
static bool handler_is(int signo, void (*h)(int)) {
    struct sigaction sa;
    sigaction(signo, NULL, &sa);
    return !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == h;
}

/* Some handler catches it (the library's, or anybody's). */
static bool caught_by_someone(int signo) {
    return !handler_is(signo, SIG_DFL) && !handler_is(signo, SIG_IGN);
}

static void set_handler(int signo, void (*h)(int)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sigemptyset(&sa.sa_mask);
    RL_ASSERT_EQ_INT(sigaction(signo, &sa, NULL), 0);
}

/* Runs the current loop in the default mode until *count reaches `want` or
   `seconds` pass. */
static void run_until(const long *count, long want, double seconds) {
    double t0 = rl_test_now();
    while (*count < want && rl_test_now() - t0 < seconds) RLRunLoopRunInMode(DEF, 0.5, true);
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
    while (p.total < burst_count(100)) RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.05, true), kRLRunLoopRunTimedOut);
    ASSERT_BURST_COUNT(p.total, 100);
    RL_ASSERT_LE_INT(p.calls, 100);
    unwatch(s);
}

static int program_handler_runs;
static void program_handler(int signo) {
    (void)signo;
    program_handler_runs++;
}

static void sig_masks_never_change_and_the_previous_disposition_comes_back(void) {
    RL_ASSERT(!is_blocked(SIGUSR1));
    RL_ASSERT(handler_is(SIGUSR1, SIG_DFL));
    probe p = {0};
    RLRunLoopSourceRef a = watch(SIGUSR1, &p, DEF);
    RL_ASSERT(!is_blocked(SIGUSR1));
    RL_ASSERT(caught_by_someone(SIGUSR1));
    probe q = {0};
    RLRunLoopSourceRef b = watch(SIGUSR1, &q, DEF);
    unwatch(a);
    RL_ASSERT(caught_by_someone(SIGUSR1)); /* b still watches */
    unwatch(b);
    RL_ASSERT(handler_is(SIGUSR1, SIG_DFL));
    RL_ASSERT(!is_blocked(SIGUSR1));
    /* A handler of the program's: not called while the signal is watched,
       then back. */
    set_handler(SIGUSR2, program_handler);
    RLRunLoopSourceRef c = watch(SIGUSR2, &p, DEF);
    RL_ASSERT(!handler_is(SIGUSR2, program_handler));
    RL_ASSERT_EQ_INT(kill(getpid(), SIGUSR2), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.calls, 1);
    RL_ASSERT_EQ_INT(program_handler_runs, 0);
    unwatch(c);
    RL_ASSERT(handler_is(SIGUSR2, program_handler));
    RL_ASSERT_EQ_INT(kill(getpid(), SIGUSR2), 0);
    RL_ASSERT_EQ_INT(program_handler_runs, 1);
    /* A signal the program blocks stays blocked, pending until it is
       unblocked; then it is reported. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    probe h = {0};
    RLRunLoopSourceRef d = watch(SIGHUP, &h, DEF);
    RL_ASSERT_EQ_INT(kill(getpid(), SIGHUP), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.05, true), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(h.calls, 0);
    RL_ASSERT(is_blocked(SIGHUP));
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(h.calls, 1);
    unwatch(d);
}

/* A handler the program installs while sources watch the signal takes it
   from them, and stays when the last source goes. */
static void sig_a_handler_installed_after_the_source_is_left_in_place(void) {
    probe p = {0};
    RLRunLoopSourceRef s = watch(SIGUSR1, &p, DEF);
    set_handler(SIGUSR1, program_handler);
    RL_ASSERT_EQ_INT(kill(getpid(), SIGUSR1), 0);
    RL_ASSERT_EQ_INT(program_handler_runs, 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.05, true), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(p.calls, 0);
    unwatch(s);
    RL_ASSERT(handler_is(SIGUSR1, program_handler));
}

static void sig_an_ignored_signal_is_heard_while_watched_then_ignored_again(void) {
    set_handler(SIGUSR1, SIG_IGN);
    probe p = {0};
    RLRunLoopSourceRef s = watch(SIGUSR1, &p, DEF);
    RL_ASSERT_EQ_INT(kill(getpid(), SIGUSR1), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.calls, 1);
    unwatch(s);
    RL_ASSERT(handler_is(SIGUSR1, SIG_IGN));
    RL_ASSERT_EQ_INT(kill(getpid(), SIGUSR1), 0); /* ignored again: this process lives on */
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
    RLRunLoopSourceRef s = watch(SIGUSR1, &p, DEF); /* before the thread: its signal is never missed */
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
    RL_ASSERT(caught_by_someone(SIGUSR1)); /* the source object still exists */
    RL_ASSERT_EQ_INT(kill(getpid(), SIGUSR1), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.05, true), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(p.calls, 1);
    RLRelease(s);
    RL_ASSERT(handler_is(SIGUSR1, SIG_DFL));
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
    RL_ASSERT(handler_is(SIGHUP, SIG_DFL));
}

static void version0_perform(void *info) {
    (void)info;
}

static void sig_bad_input_returns_null(void) {
    static const int bad[] = {0, -1, SIGKILL, SIGSTOP, 32, 33, _NSIG, 1000};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        RL_ASSERT(RLSignalSourceCreate(bad[i], 0, cb, NULL) == NULL);
    RL_ASSERT(RLSignalSourceCreate(SIGUSR1, 0, NULL, NULL) == NULL);
    RL_ASSERT(handler_is(SIGUSR1, SIG_DFL));
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
    RL_ASSERT_EQ_INT(kill(getpid(), SIGUSR1), 0); /* caught now, reported once the source is in a loop */
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
    RLRunLoopSourceRef s = watch(SIGRTMIN, &p, DEF); /* before the first one is sent */
    killer_arg args[K];
    pthread_t th[K];
    for (int k = 0; k < K; k++) {
        args[k] = (killer_arg){.pid = getpid(), .n = n};
        pthread_create(&th[k], NULL, killer, &args[k]);
    }
    double t0 = rl_test_now();
    while (p.total < burst_count((long)K * n) && rl_test_now() - t0 < 20) RLRunLoopRunInMode(DEF, 1, true);
    for (int k = 0; k < K; k++) pthread_join(th[k], NULL);
    RLRunLoopRunInMode(DEF, 0.05, true); /* nothing more may come */
    ASSERT_BURST_COUNT(p.total, (long)K * n);
    unwatch(s);
}

/* ---- no thread's mask is ever changed -------------------------------------- */

static void sig_nop(int signo, uint32_t count, void *info) {
    (void)signo;
    (void)count;
    (void)info;
}

typedef struct {
    RLRunLoopSourceRef source;
    bool blocked_after;
} mask_case;

static void *make_source_and_exit(void *arg) {
    mask_case *c = arg;
    c->source = RLSignalSourceCreate(SIGUSR2, 0, sig_nop, NULL);
    c->blocked_after = is_blocked(SIGUSR2);
    return NULL;
}

static void *block_then_release_last_source(void *arg) {
    mask_case *c = arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* this thread asked for it itself */
    RLRunLoopSourceInvalidate(c->source);
    RLRelease(c->source); /* the last source of SIGUSR2 */
    c->blocked_after = is_blocked(SIGUSR2);
    return NULL;
}

/* The thread that made the source exits; another one, which blocked the
   signal itself, frees the last source: neither mask is touched, and the
   disposition comes back whichever thread frees it. */
static void sig_sources_made_and_freed_on_other_threads_change_no_mask(void) {
    for (int attempt = 0; attempt < 5; attempt++) {
        mask_case made = {0}, freed = {0};
        pthread_t t;
        RL_ASSERT_EQ_INT(pthread_create(&t, NULL, make_source_and_exit, &made), 0);
        pthread_join(t, NULL);
        RL_ASSERT(made.source != NULL);
        RL_ASSERT(!made.blocked_after);
        RL_ASSERT(caught_by_someone(SIGUSR2));
        freed.source = made.source;
        RL_ASSERT_EQ_INT(pthread_create(&t, NULL, block_then_release_last_source, &freed), 0);
        pthread_join(t, NULL);
        RL_ASSERT(freed.blocked_after);
        RL_ASSERT(handler_is(SIGUSR2, SIG_DFL));
        RL_ASSERT(!is_blocked(SIGUSR2));
    }
}

/* ---- threads that existed first, and never block the signal ----------------- */

typedef struct {
    atomic_int running;
    atomic_int blocking; /* threads that found SIGINT or SIGTERM blocked */
    atomic_bool quit;
} bystanders;

static void *bystander(void *arg) {
    bystanders *b = arg;
    if (is_blocked(SIGINT) || is_blocked(SIGTERM)) atomic_fetch_add(&b->blocking, 1);
    atomic_fetch_add(&b->running, 1);
    while (!atomic_load(&b->quit)) usleep(1000);
    return NULL;
}

enum { BYSTANDERS = 3 };

static void start_bystanders(bystanders *b, pthread_t *th) {
    for (int i = 0; i < BYSTANDERS; i++) RL_ASSERT_EQ_INT(pthread_create(&th[i], NULL, bystander, b), 0);
    while (atomic_load(&b->running) < BYSTANDERS) usleep(1000);
    RL_ASSERT_EQ_INT(atomic_load(&b->blocking), 0);
}

static void stop_bystanders(bystanders *b, pthread_t *th) {
    atomic_store(&b->quit, true);
    for (int i = 0; i < BYSTANDERS; i++) pthread_join(th[i], NULL);
}

static long interrupts_heard;
static void on_interrupt(int signo, uint32_t count, void *info) {
    (void)signo;
    (void)info;
    interrupts_heard += count;
}

typedef struct {
    bystanders b;
    pthread_t th[BYSTANDERS];
} crowd;

/* Joins the threads first, so that valgrind finds nothing left behind. */
static void on_terminate(int signo, uint32_t count, void *info) {
    (void)signo;
    (void)count;
    crowd *c = info;
    stop_bystanders(&c->b, c->th);
    _exit(interrupts_heard == 1 ? 0 : 20);
}

/* In a child: threads first, then the sources; SIGINT sent to the process
   (kill), SIGTERM to this thread (raise). Exit status 0 comes only from the
   SIGTERM callout, after exactly one SIGINT was reported. */
static _Noreturn void interrupt_then_terminate_with_threads_around(void) {
    static crowd c;
    start_bystanders(&c.b, c.th);
    RLSignalSourceContext ctx = {0, &c, NULL, NULL, NULL};
    RLRunLoopSourceRef interrupt = RLSignalSourceCreate(SIGINT, 0, on_interrupt, NULL);
    RLRunLoopSourceRef terminate = RLSignalSourceCreate(SIGTERM, 0, on_terminate, &ctx);
    if (!interrupt || !terminate) _exit(10);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), interrupt, DEF);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), terminate, DEF);
    kill(getpid(), SIGINT);
    run_until(&interrupts_heard, 1, 10);
    if (interrupts_heard != 1) _exit(11);
    raise(SIGTERM);
    RLRunLoopRunInMode(DEF, 10, false);
    _exit(12);
}

static void sig_sigint_and_sigterm_reach_the_sources_with_threads_made_first(void) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    RL_ASSERT(pid >= 0);
    if (pid == 0) interrupt_then_terminate_with_threads_around();
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {}
    RL_ASSERT_EQ_INT(WIFSIGNALED(status) ? WTERMSIG(status) : 0, 0); /* SIGINT (2) used to kill it */
    RL_ASSERT(WIFEXITED(status));
    RL_ASSERT_EQ_INT(WEXITSTATUS(status), 0);
}

/* A signal sent to one thread that runs no loop is reported by the loops
   that watch it. */
static void sig_a_signal_sent_to_a_thread_without_a_loop_is_reported(void) {
    bystanders b = {0};
    pthread_t th[BYSTANDERS];
    start_bystanders(&b, th);
    probe p = {0};
    RLRunLoopSourceRef s = watch(SIGINT, &p, DEF);
    for (int i = 0; i < BYSTANDERS; i++) RL_ASSERT_EQ_INT(pthread_kill(th[i], SIGINT), 0);
    run_until(&p.total, BYSTANDERS, 10);
    RL_ASSERT_EQ_INT(p.total, BYSTANDERS);
    stop_bystanders(&b, th);
    unwatch(s);
}

/* ---- exact counts in several loops ------------------------------------------ */

enum { COUNTING_THREADS = 2 };

typedef struct {
    int signo;
    _Atomic long total[COUNTING_THREADS + 2]; /* per source: one per thread's loop, two in the main loop */
    atomic_int ready;
    atomic_bool quit;
} counting;

typedef struct {
    counting *c;
    int slot;
} counting_slot;

static void count_into_slot(int signo, uint32_t count, void *info) {
    (void)signo;
    counting_slot *cs = info;
    atomic_fetch_add(&cs->c->total[cs->slot], count);
}

static RLRunLoopSourceRef count_in_current_loop(counting_slot *cs) {
    RLSignalSourceContext ctx = {0, cs, NULL, NULL, NULL};
    RLRunLoopSourceRef s = RLSignalSourceCreate(cs->c->signo, 0, count_into_slot, &ctx);
    RL_ASSERT(s != NULL);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
    return s;
}

static void *counting_loop(void *arg) {
    counting_slot *cs = arg;
    RLRunLoopSourceRef s = count_in_current_loop(cs);
    atomic_fetch_add(&cs->c->ready, 1);
    while (!atomic_load(&cs->c->quit)) RLRunLoopRunInMode(DEF, 0.05, false);
    unwatch(s);
    return NULL;
}

static long lowest_total(counting *c) {
    long low = LONG_MAX;
    for (int i = 0; i < COUNTING_THREADS + 2; i++) {
        long t = atomic_load(&c->total[i]);
        if (t < low) low = t;
    }
    return low;
}

typedef struct {
    counting *c;
    long n;
    int senders;
    bool one_at_a_time; /* wait until every source heard one before sending the next */
} sending;

static void *send_signals(void *arg) {
    sending *s = arg;
    for (long i = 1; i <= s->n; i++) {
        if (s->c->signo >= SIGRTMIN) {
            union sigval v = {.sival_int = (int)i};
            while (sigqueue(getpid(), s->c->signo, v) < 0) {
                RL_ASSERT(errno == EAGAIN); /* the queue is full: the handler empties it */
                usleep(100);
            }
        } else {
            RL_ASSERT_EQ_INT(kill(getpid(), s->c->signo), 0);
        }
        if (!s->one_at_a_time) continue;
        double t0 = rl_test_now();
        while (lowest_total(s->c) < i && rl_test_now() - t0 < 10) usleep(50);
    }
    return NULL;
}

/* Runs `senders` threads that send n signals each while two loops on their
   own threads and the main loop (two sources) count them; checks that every
   source counted exactly senders * n. */
static void count_in_every_loop(int signo, long n, int senders, bool one_at_a_time) {
    counting c = {.signo = signo};
    counting_slot slots[COUNTING_THREADS + 2];
    for (int i = 0; i < COUNTING_THREADS + 2; i++) slots[i] = (counting_slot){&c, i};
    pthread_t loops[COUNTING_THREADS], send[2];
    for (int i = 0; i < COUNTING_THREADS; i++) pthread_create(&loops[i], NULL, counting_loop, &slots[i]);
    RLRunLoopSourceRef a = count_in_current_loop(&slots[COUNTING_THREADS]);
    RLRunLoopSourceRef b = count_in_current_loop(&slots[COUNTING_THREADS + 1]);
    while (atomic_load(&c.ready) < COUNTING_THREADS) usleep(1000);
    sending job = {&c, n, senders, one_at_a_time};
    for (int i = 0; i < senders; i++) pthread_create(&send[i], NULL, send_signals, &job);
    long sent = n * senders;
    long want = one_at_a_time ? sent : burst_count(sent);
    double t0 = rl_test_now();
    while (lowest_total(&c) < want && rl_test_now() - t0 < 20) RLRunLoopRunInMode(DEF, 0.05, false);
    for (int i = 0; i < senders; i++) pthread_join(send[i], NULL);
    RLRunLoopRunInMode(DEF, 0.05, false); /* nothing more may come */
    atomic_store(&c.quit, true);
    for (int i = 0; i < COUNTING_THREADS; i++) pthread_join(loops[i], NULL);
    for (int i = 0; i < COUNTING_THREADS + 2; i++) {
        if (one_at_a_time) RL_ASSERT_EQ_INT(atomic_load(&c.total[i]), sent);
        else ASSERT_BURST_COUNT(atomic_load(&c.total[i]), sent);
    }
    unwatch(a);
    unwatch(b);
}

/* A standard signal sent again only once every source heard the last one:
   never pending twice, so never merged by the kernel; every source in
   every loop counts each one. */
static void sig_standard_signals_sent_one_at_a_time_are_counted_exactly_in_every_loop(void) {
    count_in_every_loop(SIGUSR1, rl_test_scaled(400), 1, true);
}

/* Real-time signals are queued one by one: a storm from two threads is
   counted exactly by every source in every loop. */
static void sig_realtime_storm_is_counted_exactly_in_every_loop(void) {
    count_in_every_loop(SIGRTMIN + 2, rl_test_scaled(3000), 2, false);
}

/* ---- faults ----------------------------------------------------------------- */

static void exit_when_heard(int signo, uint32_t count, void *info) {
    (void)signo;
    (void)count;
    (void)info;
    _exit(0);
}

enum { FAULT_CHILD_BROKEN = 110 };

static bool under_valgrind(void) {
    const char *preload = getenv("LD_PRELOAD");
    return preload && strstr(preload, "vgpreload");
} /* 110 and up: the child's own checks failed */

/* A SIGSEGV sent by kill is reported; one raised by a bad access must not
   be swallowed (the access would fault again forever): the process dies of
   it, as without a source (or exits through its sanitizer's report). */
static _Noreturn void fault_with_a_sigsegv_source(void) {
    alarm(20); /* a swallowed fault spins: SIGALRM ends it */
    RLRunLoopSourceRef s = RLSignalSourceCreate(SIGSEGV, 0, on_interrupt, NULL);
    if (!s) _exit(FAULT_CHILD_BROKEN);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
    kill(getpid(), SIGSEGV);
    if (RLRunLoopRunInMode(DEF, 5, true) != kRLRunLoopRunHandledSource || interrupts_heard != 1)
        _exit(FAULT_CHILD_BROKEN + 1);
    RLRunLoopSourceRef late = RLSignalSourceCreate(SIGSEGV, 0, exit_when_heard, NULL);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), late, DEF);
    volatile int *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) _exit(FAULT_CHILD_BROKEN + 2);
    int quiet = open("/dev/null", O_WRONLY); /* a sanitizer's report of the fault is expected */
    if (quiet >= 0) dup2(quiet, 2);
    if (under_valgrind()) _exit(1); /* memcheck would report the bad write, on its own descriptor */
    *page = 1;
    RLRunLoopRunInMode(DEF, 5, true);
    _exit(FAULT_CHILD_BROKEN + 3);
}

static void sig_a_real_fault_is_not_swallowed(void) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    RL_ASSERT(pid >= 0);
    if (pid == 0) fault_with_a_sigsegv_source();
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {}
    if (WIFSIGNALED(status)) RL_ASSERT_EQ_INT(WTERMSIG(status), SIGSEGV);
    else RL_ASSERT(WEXITSTATUS(status) != 0 && WEXITSTATUS(status) < FAULT_CHILD_BROKEN); /* a sanitizer's report */
}

/* ---- fork -------------------------------------------------------------------- */

/* Arrivals caught before fork but not yet reported stay the parent's; each
   process counts exactly its own afterwards. */
static void sig_after_fork_each_process_counts_exactly_its_own(void) {
    int sig = SIGRTMIN + 3;
    probe p = {0};
    RLRunLoopSourceRef s = watch(sig, &p, DEF);
    for (int i = 0; i < 5; i++) RL_ASSERT_EQ_INT(sigqueue(getpid(), sig, (union sigval){.sival_int = i}), 0);
    usleep(1000); /* a handler ThreadSanitizer postponed runs here */
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    RL_ASSERT(pid >= 0);
    if (pid == 0) {
        if (RLRunLoopRunInMode(DEF, 0.1, true) != kRLRunLoopRunTimedOut || p.total != 0) _exit(1);
        for (int i = 1; i <= 3; i++) { /* one at a time: exact under ThreadSanitizer too */
            sigqueue(getpid(), sig, (union sigval){.sival_int = i});
            run_until(&p.total, i, 10);
        }
        if (RLRunLoopRunInMode(DEF, 0.05, true) != kRLRunLoopRunTimedOut || p.total != 3) _exit(2);
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {}
    RL_ASSERT(WIFEXITED(status));
    RL_ASSERT_EQ_INT(WEXITSTATUS(status), 0);
    run_until(&p.total, burst_count(5), 10);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.05, true), kRLRunLoopRunTimedOut);
    ASSERT_BURST_COUNT(p.total, 5);
    unwatch(s);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(sig_kill_to_self_calls_back),
        RL_TEST(sig_storm_is_coalesced_but_never_lost),
        RL_TEST(sig_realtime_signals_are_counted_one_by_one),
        RL_TEST(sig_masks_never_change_and_the_previous_disposition_comes_back),
        RL_TEST(sig_a_handler_installed_after_the_source_is_left_in_place),
        RL_TEST(sig_an_ignored_signal_is_heard_while_watched_then_ignored_again),
        RL_TEST(sig_every_watcher_hears_every_arrival),
        RL_TEST(sig_watchers_in_two_loops_on_two_threads_both_hear_it),
        RL_TEST(sig_invalidate_from_callback),
        RL_TEST(sig_signal_in_another_mode_does_not_wake_or_spin),
        RL_TEST(sig_context_and_description),
        RL_TEST(sig_bad_input_returns_null),
        RL_TEST(sig_pending_before_adding_is_reported),
        RL_TEST(sig_many_threads_stress_counts_realtime_signals),
        RL_TEST(sig_sources_made_and_freed_on_other_threads_change_no_mask),
        RL_TEST(sig_sigint_and_sigterm_reach_the_sources_with_threads_made_first),
        RL_TEST(sig_a_signal_sent_to_a_thread_without_a_loop_is_reported),
        RL_TEST(sig_standard_signals_sent_one_at_a_time_are_counted_exactly_in_every_loop),
        RL_TEST(sig_realtime_storm_is_counted_exactly_in_every_loop),
        RL_TEST(sig_a_real_fault_is_not_swallowed),
        RL_TEST(sig_after_fork_each_process_counts_exactly_its_own),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
