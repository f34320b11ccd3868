/*
 * test_malloc_fail.c: the malloc-failure sweep. A realistic workload (loops,
 * modes, sources, timers, observers, queued functions, perform requests,
 * descriptor objects, message ports, run-loop threads, a hang monitor, a
 * signal source, nested runs, enough modes to grow the loop's table of them)
 * runs once per N in a
 * forked process where the N-th allocation fails ("only N"), or every
 * allocation from the N-th on fails ("from N"), for every N up to the
 * workload's allocation count; and once per number of free descriptors,
 * from none up to what the workload needs (the descriptor sweep runs under
 * the sanitizers and valgrind too). Each run must end normally within its
 * time limit, every API must give its documented failure, and what did succeed
 * must have its documented outcome: an item a loop contains fires, queued
 * work runs or is released exactly once, a context's retains and releases
 * balance, a request settles once and never as Dropped while its loop lives.
 *
 * malloc, calloc and realloc are replaced in this program (glibc's own
 * allocation functions do the work), so every allocation of the process
 * counts, the C library's own included. The sanitizers replace the allocator
 * themselves: under ASan or TSan this program only runs the workload once,
 * without failures; so it does under valgrind, which replaces malloc even in
 * the program (the sweep sees no allocation and says it is skipped). With
 * RL_TEST_SLOW > 1 it samples every RL_TEST_SLOW-th N.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <pthread.h>
#include <sys/resource.h>
#include <CRunLoop.h>
#include <CRunLoopLinux.h>
#include <CRunLoopMonitor.h>
#include <CRunLoopThread.h>
#include "rltest.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MF_INTERPOSE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MF_INTERPOSE 0
#endif
#endif
#ifndef MF_INTERPOSE
#define MF_INTERPOSE 1
#endif

/* ---- the failing allocator ------------------------------------------------ */

static _Atomic long mf_calls; /* allocations counted since arming */
static _Atomic int mf_armed;
static long mf_at;   /* the first failing call (1-based); 0: none */
static bool mf_from; /* fail every call from mf_at on */

static inline bool mf_should_fail(void) {
    if (!atomic_load_explicit(&mf_armed, memory_order_relaxed)) return false;
    long n = atomic_fetch_add_explicit(&mf_calls, 1, memory_order_relaxed) + 1;
    return mf_at > 0 && (mf_from ? n >= mf_at : n == mf_at);
}

#if MF_INTERPOSE
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);

void *malloc(size_t size) {
    if (mf_should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_malloc(size);
}
void *calloc(size_t n, size_t size) {
    if (mf_should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_calloc(n, size);
}
void *realloc(void *p, size_t size) {
    if (size && mf_should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(p, size);
}
#endif

static void mf_arm(long at, bool from) {
    mf_at = at;
    mf_from = from;
    atomic_store(&mf_calls, 0);
    atomic_store(&mf_armed, 1);
}

static void mf_disarm(void) {
    atomic_store(&mf_armed, 0);
}

/* ---- counted contexts --------------------------------------------------- */

typedef struct {
    _Atomic int retains, releases;
} counted;

static counted source_info, timer_info, observer_info, fd_info, port_info, thread_source_info, monitor_info;

static const void *counted_retain(const void *info) {
    atomic_fetch_add(&((counted *)info)->retains, 1);
    return info;
}
static void counted_release(const void *info) {
    atomic_fetch_add(&((counted *)info)->releases, 1);
}

static void expect_balanced(const counted *c, const char *what) {
    int r = atomic_load(&c->retains), l = atomic_load(&c->releases);
    if (r != l) RL_FAIL_("%s: %d retains, %d releases", what, r, l);
}

/* ---- callouts ------------------------------------------------------------ */

static int fd_called, thread_performed;
static _Atomic int block_ran, block_released, request_ran, request_released;

/* A queued function's release outside the call that queued it, without its
   function having run, is work dropped from a live loop. */
typedef struct {
    bool queueing, ran, dropped;
} queued_item;
static queued_item items[6];

static void block_fn(void *info) {
    ((queued_item *)info)->ran = true;
    atomic_fetch_add(&block_ran, 1);
}
static void block_release(void *info) {
    queued_item *q = info;
    if (!q->ran && !q->queueing) q->dropped = true;
    atomic_fetch_add(&block_released, 1);
}
static void request_fn(void *info) {
    (void)info;
    atomic_fetch_add(&request_ran, 1);
}
static void request_release(void *info) {
    (void)info;
    atomic_fetch_add(&request_released, 1);
}
static void thread_source_perform(void *info) {
    (void)info;
    thread_performed++;
}

static void fd_callout(RLFileDescriptorRef f, RLOptionFlags types, void *info) {
    (void)types;
    (void)info;
    char buf[16];
    while (read(RLFileDescriptorGetNativeDescriptor(f), buf, sizeof buf) > 0) {}
    fd_called++;
}

/* Runs a few polling passes of `mode`: enough for everything due to fire. */
static void run_passes(RLRunLoopMode mode) {
    for (int i = 0; i < 3; i++) RLRunLoopRunInMode(mode, 0, false);
}

/* ---- the workload ---------------------------------------------------------- */

static const char other_mode[] = "fail.other";

/* ---- a crowded loop: more items than a pass keeps room for ---------------- */

#define CROWD 40
typedef struct {
    int schedules, cancels, performs, observed;
    bool source_in, observer_in, second_in;
} crowd_item;
static crowd_item crowd_items[CROWD];
static int nested_runs, signals_heard;
static queued_item many_items[100];

static void crowd_schedule(void *info, RLRunLoopRef rl, RLRunLoopMode mode) {
    (void)rl;
    (void)mode;
    ((crowd_item *)info)->schedules++;
}
static void crowd_cancel(void *info, RLRunLoopRef rl, RLRunLoopMode mode) {
    (void)rl;
    (void)mode;
    ((crowd_item *)info)->cancels++;
}
static void crowd_perform(void *info) {
    crowd_item *c = info;
    c->performs++;
    if (c == &crowd_items[0]) { /* a nested pass of another mode, from a callout */
        nested_runs++;
        RLRunLoopRunInMode(other_mode, 0, false);
    }
}
static void crowd_observe(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    ((crowd_item *)info)->observed++;
}
static void heard(int signo, uint32_t count, void *info) {
    (void)signo;
    (void)info;
    signals_heard += (int)count;
}

static int idle_released, idle_ran, timer2_fired;
static void idle_fn(void *info) {
    (void)info;
    idle_ran++;
}
static void idle_release(void *info) {
    (void)info;
    idle_released++;
}
static void nested_timer(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    timer2_fired++;
    RLRunLoopRunInMode(other_mode, 0, false);
}

typedef struct {
    int many_queued;
    bool ran, signal_in, timer2_in, late_complete;
} crowd_outcome;

static void crowd(RLRunLoopRef rl, crowd_outcome *out) {
    out->ran = true;
    RLRunLoopSourceRef sources[CROWD];
    RLRunLoopObserverRef observers[CROWD];
    for (int i = 0; i < CROWD; i++) {
        RLRunLoopSourceContext sc;
        memset(&sc, 0, sizeof sc);
        sc.info = &crowd_items[i];
        sc.schedule = crowd_schedule;
        sc.cancel = crowd_cancel;
        sc.perform = crowd_perform;
        sources[i] = RLRunLoopSourceCreate(i, &sc);
        RLRunLoopAddSource(rl, sources[i], kRLRunLoopDefaultMode);
        crowd_items[i].source_in = RLRunLoopContainsSource(rl, sources[i], kRLRunLoopDefaultMode);
        RLRunLoopSourceSignal(sources[i]);
        RLRunLoopObserverContext oc = {0, &crowd_items[i], NULL, NULL, NULL};
        observers[i] = RLRunLoopObserverCreate(kRLRunLoopEntry, true, i, crowd_observe, &oc);
        RLRunLoopAddObserver(rl, observers[i], kRLRunLoopDefaultMode);
        crowd_items[i].observer_in = RLRunLoopContainsObserver(rl, observers[i], kRLRunLoopDefaultMode);
    }
    for (int i = 0; i < 100; i++) {
        many_items[i].queueing = true;
        RLRunLoopPerformFunctionWithRelease(rl, i % 3 ? kRLRunLoopDefaultMode : other_mode, block_fn, &many_items[i],
                                            block_release);
        many_items[i].queueing = false;
        out->many_queued++;
    }
    RLRunLoopSourceRef sig = RLSignalSourceCreate(SIGUSR1, 0, heard, NULL);
    RLRunLoopAddSource(rl, sig, kRLRunLoopDefaultMode);
    out->signal_in = RLRunLoopContainsSource(rl, sig, kRLRunLoopDefaultMode);
    if (sig) raise(SIGUSR1); /* caught by the source's handler, reported by the passes below */

    char *d = RLCopyDescription(rl);
    free(d);
    char **names = RLRunLoopCopyAllModes(rl);
    for (char **n = names; n && *n; n++) free(*n);
    free(names);

    run_passes(kRLRunLoopDefaultMode);
    run_passes(other_mode);
    run_passes(kRLRunLoopDefaultMode);

    /* Idle tasks, a timer in two explicit modes re-dated and nested-running,
       removals by hand, and a mode made common after all of it. */
    RLIdleQueueRef idle = RLIdleQueueCreate(rl, kRLRunLoopDefaultMode, 0);
    for (int i = 0; i < 5; i++) RLIdleQueueSubmit(idle, idle_fn, NULL, idle_release);
    RLRunLoopTimerContext tc = {0, NULL, NULL, NULL, NULL};
    RLRunLoopTimerRef t2 = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 100, 0, 0, 0, nested_timer, &tc);
    RLRunLoopAddTimer(rl, t2, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(rl, t2, "fail.second");
    out->timer2_in = RLRunLoopContainsTimer(rl, t2, kRLRunLoopDefaultMode);
    RLRunLoopTimerSetNextFireDate(t2, RLAbsoluteTimeGetCurrent() - 1);
    RLRunLoopAddSource(rl, sources[1], "fail.second");
    crowd_items[1].second_in = RLRunLoopContainsSource(rl, sources[1], "fail.second");
    RLRunLoopAddObserver(rl, observers[1], "fail.second");
    run_passes(kRLRunLoopDefaultMode);
    RLRunLoopRemoveSource(rl, sources[1], "fail.second");
    RLRunLoopRemoveObserver(rl, observers[1], "fail.second");
    RLRunLoopRemoveTimer(rl, t2, "fail.second");
    RL_ASSERT(!RLRunLoopContainsSource(rl, sources[1], "fail.second"));
    RL_ASSERT(!RLRunLoopContainsTimer(rl, t2, "fail.second"));
    /* Common items, then a mode made common (asked twice: a lone failure
       does not leave it out): once memory is back, its passes have them. */
    RLRunLoopTimerRef ct = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 100, 0, 0, 0, nested_timer, &tc);
    RLRunLoopAddTimer(rl, ct, kRLRunLoopCommonModes);
    RLRunLoopAddSource(rl, sources[2], kRLRunLoopCommonModes);
    RLRunLoopAddCommonMode(rl, "fail.late");
    RLRunLoopAddCommonMode(rl, "fail.late");
    run_passes("fail.late");
    out->late_complete =
        (!RLRunLoopContainsTimer(rl, ct, kRLRunLoopCommonModes) || RLRunLoopContainsTimer(rl, ct, "fail.late")) &&
        (!RLRunLoopContainsSource(rl, sources[2], kRLRunLoopCommonModes) ||
         RLRunLoopContainsSource(rl, sources[2], "fail.late"));
    RLRunLoopTimerInvalidate(ct);
    RLRelease(ct);
    RLRunLoopTimerInvalidate(t2);
    RLRelease(t2);
    RLIdleQueueInvalidate(idle);
    RLIdleQueueRelease(idle);

    RLRunLoopSourceInvalidate(sig);
    RLRelease(sig);
    for (int i = 0; i < CROWD; i++) {
        RLRunLoopSourceInvalidate(sources[i]);
        RLRelease(sources[i]);
        RLRunLoopObserverInvalidate(observers[i]);
        RLRelease(observers[i]);
    }
}

static void check_crowd(const crowd_outcome *out, bool persistent) {
    if (out->ran && !persistent) RL_ASSERT(out->late_complete);
    for (int i = 0; i < CROWD; i++) {
        const crowd_item *c = &crowd_items[i];
        RL_ASSERT_LE_INT(c->schedules, c->source_in + c->second_in + (i == 2 ? 3 : 0));
        RL_ASSERT_GE_INT(c->schedules, c->source_in + c->second_in);
        if (c->source_in) RL_ASSERT_EQ_INT(c->performs, 1);
        RL_ASSERT_EQ_INT(c->cancels, c->schedules);
        if (c->observer_in) RL_ASSERT_GE_INT(c->observed, 1);
    }
    for (int i = 0; i < 100; i++)
        if (many_items[i].dropped) RL_FAIL_("queued function %d of 100 dropped by a live loop", i);
    if (out->signal_in) RL_ASSERT_GE_INT(signals_heard, 1);
    if (out->timer2_in) RL_ASSERT_EQ_INT(timer2_fired, 1);
    RL_ASSERT_EQ_INT(idle_released, out->ran ? 5 : 0); /* run, dropped at invalidation, or not queued */
    RL_ASSERT_LE_INT(idle_ran, 5);
}

/* ---- many modes: the loop's table of modes grows ------------------------- */

#define MANY_MODES 40

/* Makes MANY_MODES modes, each by adding a source to it, then takes the
   sources out again. A mode that could not be made (or its table could not
   grow) leaves no trace: each name the loop lists names one mode, and every
   mode an add reached is listed and found again. Returns how many adds
   reached their mode. */
static int many_modes(RLRunLoopRef rl) {
    RLRunLoopSourceRef sources[MANY_MODES];
    bool in[MANY_MODES];
    int reached = 0;
    for (int i = 0; i < MANY_MODES; i++) {
        char name[32];
        snprintf(name, sizeof name, "fail.mode.%d", i);
        sources[i] = rl_test_source0(0, rl_test_nothing, NULL);
        RLRunLoopAddSource(rl, sources[i], name);
        in[i] = RLRunLoopContainsSource(rl, sources[i], name);
        reached += in[i];
    }
    char **names = RLRunLoopCopyAllModes(rl);
    for (char **n = names; n && *n; n++)
        for (char **m = n + 1; *m; m++)
            if (strcmp(*n, *m) == 0) RL_FAIL_("mode %s listed twice", *n);
    for (int i = 0; i < MANY_MODES; i++) {
        char name[32];
        snprintf(name, sizeof name, "fail.mode.%d", i);
        bool listed = false;
        for (char **n = names; n && *n; n++) listed = listed || strcmp(*n, name) == 0;
        if (in[i] && names && !listed) RL_FAIL_("mode %s holds a source but is not listed", name);
        if (in[i]) RL_ASSERT(!RLRunLoopModeIsEmpty(rl, name));
        RLRunLoopRemoveSource(rl, sources[i], name);
        RL_ASSERT(!RLRunLoopContainsSource(rl, sources[i], name));
        RLRelease(sources[i]);
    }
    for (char **n = names; n && *n; n++) free(*n);
    free(names);
    return reached;
}

typedef struct {
    bool got_loop, source_in, timer_in, observer_in, fd_in, port_in, port_sent, thread_ok, thread_source_in;
    int blocks_queued;
    int modes_reached;                    /* of many_modes' adds */
    RLPerformRequestStatus waited;        /* a request to a thread, waited for */
    RLPerformRequestStatus delayed_final; /* a delayed request to our own loop */
    bool delayed_made;
    crowd_outcome crowd;
} outcome;

/* A version-0 source whose info's retains and releases are counted. */
static RLRunLoopSourceRef counted_source(void *info, void (*perform)(void *)) {
    RLRunLoopSourceContext sc;
    memset(&sc, 0, sizeof sc);
    sc.info = info;
    sc.retain = counted_retain;
    sc.release = counted_release;
    sc.perform = perform;
    return RLRunLoopSourceCreate(0, &sc);
}

static void workload(outcome *out) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    if (!rl) return; /* documented: NULL when out of memory or descriptors */
    out->got_loop = true;
    RLRunLoopAddCommonMode(rl, other_mode);

    /* A version-0 source in the default mode, signalled. */
    RLRunLoopSourceRef s = counted_source(&source_info, rl_test_count_perform);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    out->source_in = RLRunLoopContainsSource(rl, s, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(s);

    /* A due timer in the common modes. */
    RLRunLoopTimerContext tc = {0, &timer_info, counted_retain, counted_release, NULL};
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() - 1, 0, 0, 0, rl_test_count_fire, &tc);
    RLRunLoopAddTimer(rl, t, kRLRunLoopCommonModes);
    out->timer_in = RLRunLoopContainsTimer(rl, t, kRLRunLoopDefaultMode);

    /* An observer of every activity. */
    RLRunLoopObserverContext oc = {0, &observer_info, counted_retain, counted_release, NULL};
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopAllActivities, true, 0, rl_test_count_observe, &oc);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    out->observer_in = RLRunLoopContainsObserver(rl, o, kRLRunLoopDefaultMode);

    /* Queued functions, for the default mode and for another mode. */
    for (int i = 0; i < 6; i++) {
        items[i].queueing = true;
        RLRunLoopPerformFunctionWithRelease(rl, i % 2 ? other_mode : kRLRunLoopDefaultMode, block_fn, &items[i],
                                            block_release);
        items[i].queueing = false;
        out->blocks_queued++;
    }

    /* A descriptor object on a readable pipe. */
    int p[2] = {-1, -1};
    RLFileDescriptorRef f = NULL;
    if (pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0) {
        RLFileDescriptorContext fc = {0, &fd_info, counted_retain, counted_release, NULL};
        f = RLFileDescriptorCreate(p[0], true, fd_callout, &fc);
        if (!f) close(p[0]);
        RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
        RLRunLoopSourceRef fs = RLFileDescriptorCreateRunLoopSource(f, 0);
        RLRunLoopAddSource(rl, fs, kRLRunLoopDefaultMode);
        out->fd_in = RLRunLoopContainsSource(rl, fs, kRLRunLoopDefaultMode);
        RLRelease(fs);
        if (f && write(p[1], "x", 1) != 1) RL_FAIL_("write");
    }

    /* A message port with one message. */
    RLMessagePortContext pc = {0, &port_info, counted_retain, counted_release, NULL};
    RLMessagePortRef port = RLMessagePortCreate(rl_test_count_message, &pc, 8);
    RLRunLoopSourceRef ps = RLMessagePortCreateRunLoopSource(port, 0);
    RLRunLoopAddSource(rl, ps, kRLRunLoopDefaultMode);
    out->port_in = RLRunLoopContainsSource(rl, ps, kRLRunLoopDefaultMode);
    RLRelease(ps);
    out->port_sent = port && RLMessagePortSend(port, 1, "hi", 2) == 0;

    /* A delayed request to our own loop (due at once). */
    RLPerformRequestRef delayed =
        RLRunLoopPerformRequestAfterDelay(rl, 0, NULL, 0, NULL, request_fn, NULL, request_release);
    out->delayed_made = delayed != NULL;

    /* A hang monitor watching the passes (its thread and observers). */
    RLHangMonitorContext hc = {0, &monitor_info, counted_retain, counted_release, NULL};
    RLHangMonitorRef monitor = RLHangMonitorCreate(rl, 1000, NULL, &hc);
    RLHangMonitorStart(monitor);

    run_passes(kRLRunLoopDefaultMode);
    run_passes(other_mode);
    run_passes(kRLRunLoopDefaultMode);
    RLHangMonitorInvalidate(monitor);
    RLHangMonitorRelease(monitor);
    crowd(rl, &out->crowd);
    out->modes_reached = many_modes(rl);
    out->delayed_final = RLPerformRequestGetStatus(delayed);
    RLPerformRequestRelease(delayed);

    /* A run-loop thread: a source scheduled on it, and a waited request. */
    RLThreadRef th = RLThreadCreate("fail");
    out->thread_ok = RLThreadStart(th);
    RLRunLoopRef trl = RLThreadGetRunLoop(th);
    RLRunLoopSourceRef ts = counted_source(&thread_source_info, thread_source_perform);
    RLRunLoopAddSource(trl, ts, kRLRunLoopCommonModes);
    out->thread_source_in = RLRunLoopContainsSource(trl, ts, kRLRunLoopDefaultMode);
    out->waited = RLRunLoopPerformRequest(trl, NULL, 0, NULL, request_fn, NULL, request_release, true, INFINITY);
    RLThreadStop(th);
    RLThreadRelease(th);
    RLRunLoopSourceInvalidate(ts);
    RLRelease(ts);

    RLFileDescriptorInvalidate(f);
    RLRelease(f);
    if (p[1] >= 0) close(p[1]);
    RLMessagePortInvalidate(port);
    RLRelease(port);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
}

static void reset_counts(void) {
    rl_test_performed = rl_test_fired = rl_test_observed = rl_test_messages = 0;
    fd_called = thread_performed = 0;
    atomic_store(&block_ran, 0);
    atomic_store(&block_released, 0);
    atomic_store(&request_ran, 0);
    atomic_store(&request_released, 0);
    memset(items, 0, sizeof items);
    memset(crowd_items, 0, sizeof crowd_items);
    memset(many_items, 0, sizeof many_items);
    nested_runs = signals_heard = 0;
    idle_released = idle_ran = timer2_fired = 0;
}

/* Whether everything the workload tried succeeded. */
static bool outcome_complete(const outcome *out) {
    return out->crowd.signal_in && out->crowd.timer2_in && nested_runs == 1 && out->got_loop && out->source_in &&
           out->timer_in && out->observer_in && out->fd_in && out->port_in && out->port_sent && out->thread_ok &&
           out->thread_source_in && out->delayed_made && out->modes_reached == MANY_MODES;
}

/* What must hold after the workload, whatever failed. */
static void check(const outcome *out, bool failures, bool persistent) {
    if (!failures && !outcome_complete(out))
        RL_FAIL_("incomplete without failures: signal %d nested %d loop %d source %d timer %d observer %d fd %d "
                 "port %d sent %d thread %d thread source %d delayed %d modes %d",
                 out->crowd.signal_in, nested_runs, out->got_loop, out->source_in, out->timer_in, out->observer_in,
                 out->fd_in, out->port_in, out->port_sent, out->thread_ok, out->thread_source_in, out->delayed_made,
                 out->modes_reached);
    if (out->source_in) RL_ASSERT_EQ_INT(rl_test_performed, 1);
    if (out->timer_in) RL_ASSERT_EQ_INT(rl_test_fired, 1);
    if (out->observer_in) RL_ASSERT_GE_INT(rl_test_observed, 1);
    if (out->fd_in) RL_ASSERT_EQ_INT(fd_called, 1);
    if (out->port_in && out->port_sent) RL_ASSERT_EQ_INT(rl_test_messages, 1);
    /* Every queued function is released exactly once, run or not; the two in
       the default mode ran unless queueing them failed. */
    check_crowd(&out->crowd, persistent);
    RL_ASSERT_EQ_INT(atomic_load(&block_released), out->blocks_queued + out->crowd.many_queued);
    RL_ASSERT_LE_INT(atomic_load(&block_ran), out->blocks_queued + out->crowd.many_queued);
    for (int i = 0; i < 6; i++)
        if (items[i].dropped) RL_FAIL_("queued function %d dropped by a live loop", i);
    /* A request runs at most once and its release is called once. */
    if (out->delayed_made) {
        RLPerformRequestStatus s = out->delayed_final;
        /* Our loop lives: the request either ran or could not be made to
           run (Dropped at creation for lack of memory). Never still pending
           after passes of its mode, unless its timer could not be added. */
        RL_ASSERT(s == kRLPerformRequestDone || s == kRLPerformRequestDropped);
    }
    if (out->thread_ok && out->waited == kRLPerformRequestDone) RL_ASSERT_GE_INT(atomic_load(&request_ran), 1);
    RL_ASSERT(out->waited == kRLPerformRequestDone || out->waited == kRLPerformRequestDropped ||
              out->waited == kRLPerformRequestInvalid || !out->got_loop);
    expect_balanced(&source_info, "source");
    expect_balanced(&timer_info, "timer");
    expect_balanced(&observer_info, "observer");
    expect_balanced(&fd_info, "descriptor");
    expect_balanced(&port_info, "port");
    expect_balanced(&thread_source_info, "thread source");
    expect_balanced(&monitor_info, "hang monitor");
    /* Each request's release is called exactly once; fn ran exactly for
       those that report Done. */
    RL_ASSERT_EQ_INT(atomic_load(&request_released), out->got_loop ? 2 : 0);
    RL_ASSERT_EQ_INT(atomic_load(&request_ran), (out->delayed_made && out->delayed_final == kRLPerformRequestDone) +
                                                    (out->waited == kRLPerformRequestDone));
}

/* Runs body(arg, report) in a new process, bounded by a third of the test's
   time limit. The child's `size` bytes of report come back to the parent's
   *report once body returned; a child that failed or died leaves *report as
   the caller set it. Returns the child's wait status. */
static int run_in_child(void (*body)(const void *arg, void *report), const void *arg, void *report, size_t size) {
    unsigned char got[sizeof(long)];
    RL_ASSERT(size <= sizeof got);
    int channel[2];
    if (pipe(channel) != 0) RL_FAIL_("pipe");
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) RL_FAIL_("fork");
    if (pid == 0) {
        close(channel[0]);
        alarm(rl_test_timeout() / 3 + 1);
        body(arg, report);
        if (write(channel[1], report, size) != (ssize_t)size) _exit(3);
        _exit(0);
    }
    close(channel[1]);
    if (read(channel[0], got, size) == (ssize_t)size) memcpy(report, got, size);
    close(channel[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {}
    return status;
}

typedef struct {
    long at;
    bool from;
} failing;

/* Two rounds: the second one uses the loop the first one made (or makes it,
   once memory is back). Reports how many allocations the first made. */
static void workload_failing(const void *arg, void *report) {
    const failing *f = arg;
    outcome first, second;
    memset(&first, 0, sizeof first);
    memset(&second, 0, sizeof second);
    mf_arm(f->at, f->from);
    workload(&first);
    long n = atomic_load(&mf_calls);
    mf_disarm();
    check(&first, f->at > 0, f->from);
    reset_counts();
    mf_arm(f->from ? 1 : 0, f->from); /* still out of memory, or not at all */
    workload(&second);
    mf_disarm();
    check(&second, f->from, f->from);
    *(long *)report = n;
}

/* Runs the workload in a new process with allocation `at` failing (or every
   one from `at` on); returns the child's wait status. *calls gets the number
   of allocations the workload made (when `at` is 0), -1 if the child did not
   say. */
static int run_child(long at, bool from, long *calls) {
    failing f = {at, from};
    long n = -1;
    int status = run_in_child(workload_failing, &f, &n, sizeof n);
    if (calls) *calls = n;
    return status;
}

static bool child_ok(int status, long at, bool from) {
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
    if (WIFSIGNALED(status))
        fprintf(stderr, "  allocation %ld %s: signal %d%s\n", at, from ? "and later" : "only", WTERMSIG(status),
                WTERMSIG(status) == SIGALRM ? " (hung)" : "");
    else fprintf(stderr, "  allocation %ld %s: exit %d\n", at, from ? "and later" : "only", WEXITSTATUS(status));
    return false;
}

static void workload_without_failures(void) {
    long calls = 0;
    int status = run_child(0, false, &calls);
    RL_ASSERT(child_ok(status, 0, false));
    if (MF_INTERPOSE && calls == 0) printf("  (allocations not counted: valgrind replaced malloc; sweep skipped)\n");
}

static void sweep(bool from) {
    if (!MF_INTERPOSE) {
        printf("  (skipped under a sanitizer: it owns malloc)\n");
        return;
    }
    long calls = 0;
    RL_ASSERT(child_ok(run_child(0, false, &calls), 0, false));
    if (calls == 0) {
        printf("  (skipped: valgrind replaces malloc, allocations cannot be failed)\n");
        return;
    }
    const char *slow = getenv("RL_TEST_SLOW");
    long step = slow ? atol(slow) : 1;
    if (step < 1) step = 1;
    /* A few beyond the count: threads make the count vary a little. */
    printf("  %ld allocations, failing %s\n", calls, from ? "each one and all after it" : "each one alone");
    int failures = 0;
    for (long at = 1; at <= calls + 8; at += step)
        if (!child_ok(run_child(at, from, NULL), at, from) && ++failures >= 10) break;
    RL_ASSERT_EQ_INT(failures, 0);
}

/* ---- out of descriptors ---------------------------------------------------- */

/* Lowers the descriptor limit (valgrind refuses: its own limit serves) and
   takes every free descriptor but `left`; returns the array of those taken
   (-1 ended). */
static int *leave_free_fds(int left) {
    struct rlimit lim = {128, 128};
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0 && getrlimit(RLIMIT_NOFILE, &lim) != 0) RL_FAIL_("getrlimit");
    size_t cap = lim.rlim_cur < (1 << 16) ? lim.rlim_cur + 1 : (1 << 16);
    int *taken = malloc(cap * sizeof *taken);
    if (!taken) RL_FAIL_("malloc");
    size_t n = 0;
    int fd;
    while (n + 1 < cap && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0) taken[n++] = fd;
    while (left-- > 0 && n > 0) close(taken[--n]);
    taken[n] = -1;
    return taken;
}

static void give_back_fds(int *taken) {
    for (int *p = taken; *p >= 0; p++) close(*p);
    free(taken);
}

/* The workload with only *(int *)arg descriptors free, then again with them
   all back (which must then succeed whole). Reports whether the first round
   needed no more than that. */
static void workload_short_of_fds(const void *arg, void *report) {
    outcome first, second;
    memset(&first, 0, sizeof first);
    memset(&second, 0, sizeof second);
    int *taken = leave_free_fds(*(const int *)arg);
    workload(&first);
    give_back_fds(taken);
    bool done = outcome_complete(&first);
    check(&first, true, true);
    reset_counts();
    workload(&second);
    check(&second, false, false);
    *(bool *)report = done;
}

/* workload_short_of_fds in a new process; returns its wait status.
   *complete: the first round needed no more than `left`. */
static int run_fd_child(int left, bool *complete) {
    bool done = false;
    int status = run_in_child(workload_short_of_fds, &left, &done, sizeof done);
    *complete = done;
    return status;
}

/* From no free descriptor up to as many as the workload needs. */
static void descriptors_run_out(void) {
    int failures = 0, left = 0;
    for (bool complete = false; !complete && left <= 256; left++) {
        int status = run_fd_child(left, &complete);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
        fprintf(stderr, "  %d descriptors free: %s %d\n", left, WIFSIGNALED(status) ? "signal" : "exit",
                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        if (++failures >= 10) break;
    }
    printf("  the workload needs %d descriptors\n", left - 1);
    RL_ASSERT_EQ_INT(failures, 0);
    RL_ASSERT_LE_INT(left - 1, 256);
}

static void malloc_fails_only_once(void) {
    sweep(false);
}
static void malloc_fails_from_then_on(void) {
    sweep(true);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(workload_without_failures),
        RL_TEST(malloc_fails_only_once),
        RL_TEST(malloc_fails_from_then_on),
        RL_TEST(descriptors_run_out),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
