/* test_sources.c: version-0 and version-1 sources: perform order, the
   signal flag, schedule/cancel, wake-ups, fd sources, context and info
   lifetime, sources in the loops of two threads and moved between loops by
   their own performs. */
#include <CRunLoop.h>
#include "rltest.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/eventfd.h>

static int g_waits;

static void sources_perform_by_order_then_insertion(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    static const RLIndex orders[] = {5, 1, 5, 3, 1, 5, -2, 3};
    enum { N = sizeof orders / sizeof orders[0] };
    RLRunLoopSourceRef s[N];
    for (int i = 0; i < N; i++) {
        s[i] = rl_test_source0(orders[i], rl_test_log_perform, (void *)(intptr_t)i);
        RLRunLoopAddSource(rl, s[i], kRLRunLoopDefaultMode);
    }
    for (int i = 0; i < N; i++) RLRunLoopSourceSignal(s[i]);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 6, 1, 4, 3, 7, 0, 2, 5);
    /* With returnAfterSourceHandled, one per run in the same order. */
    rl_test_callouts.n = 0;
    for (int i = N - 1; i >= 0; i--) RLRunLoopSourceSignal(s[i]); /* signal order must not matter across orders */
    for (int i = 0; i < 3; i++)
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(rl_test_callouts.n, 3);
    RL_ASSERT_EQ_INT(rl_test_callouts.ev[0], 6);
    RL_ASSERT(rl_test_callouts.ev[1] == 1 || rl_test_callouts.ev[1] == 4);
    RL_ASSERT(rl_test_callouts.ev[2] == 1 || rl_test_callouts.ev[2] == 4);
    for (int i = 0; i < N; i++) {
        RLRunLoopSourceInvalidate(s[i]);
        RLRelease(s[i]);
    }
}

/* The signal is cleared before perform, so a source that signals itself in
   its perform runs again, on a later pass. */
static RLRunLoopSourceRef g_src;
static void resignal_perform(void *info) {
    (void)info;
    rl_test_calls++;
    RLRunLoopSourceSignal(g_src);
}

static void signal_is_cleared_before_perform(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    g_src = rl_test_source0(0, resignal_perform, NULL);
    RLRunLoopAddSource(rl, g_src, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(g_src);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 1); /* one pass, one perform */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 2); /* still signalled from inside perform */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(rl_test_calls, 3);
    RLRunLoopSourceInvalidate(g_src);
    RLRelease(g_src);
}

static void resignal_until_five_then_stop(void *info) {
    (void)info;
    if (++rl_test_calls < 5) RLRunLoopSourceSignal(g_src);
    else RLRunLoopStop(RLRunLoopGetCurrent());
}

static void self_signalled_source_runs_again_without_sleeping(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    g_src = rl_test_source0(0, resignal_until_five_then_stop, NULL);
    RLRunLoopAddSource(rl, g_src, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o = rl_test_counting_observer(rl, kRLRunLoopDefaultMode, kRLRunLoopBeforeWaiting, &g_waits);
    RLRunLoopSourceSignal(g_src);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(rl_test_calls, 5);
    RL_ASSERT_EQ_INT(g_waits, 0);
    RLRunLoopSourceInvalidate(g_src);
    RLRelease(g_src);
    RLRelease(o);
}

static void sources_stay_added_after_perform(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    for (int i = 1; i <= 3; i++) {
        RLRunLoopSourceSignal(s);
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1, true), kRLRunLoopRunHandledSource);
        RL_ASSERT_EQ_INT(rl_test_calls, i);
        RL_ASSERT(RLRunLoopContainsSource(rl, s, kRLRunLoopDefaultMode));
        RL_ASSERT(RLRunLoopSourceIsValid(s));
    }
    /* Signalling twice before a run performs once. */
    RLRunLoopSourceSignal(s);
    RLRunLoopSourceSignal(s);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 4);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
}

/* ---- schedule / cancel ---- */

typedef struct {
    int schedules, cancels;
    RLRunLoopRef rl[16];
    char mode[16][64];
    int kind[16]; /* 1 schedule, 2 cancel */
    int n;
} sched_rec;
static sched_rec g_sched;

static void rec(int kind, RLRunLoopRef rl, RLRunLoopMode mode) {
    if (g_sched.n < 16) {
        g_sched.kind[g_sched.n] = kind;
        g_sched.rl[g_sched.n] = rl;
        snprintf(g_sched.mode[g_sched.n], 64, "%s", mode ? mode : "(null)");
    }
    g_sched.n++;
}
static void on_schedule(void *info, RLRunLoopRef rl, RLRunLoopMode mode) {
    RL_ASSERT(info == &g_sched);
    g_sched.schedules++;
    rec(1, rl, mode);
}
static void on_cancel(void *info, RLRunLoopRef rl, RLRunLoopMode mode) {
    RL_ASSERT(info == &g_sched);
    g_sched.cancels++;
    rec(2, rl, mode);
}

static RLRunLoopSourceRef sched_source(void) {
    RLRunLoopSourceContext c;
    memset(&c, 0, sizeof c);
    c.info = &g_sched;
    c.schedule = on_schedule;
    c.cancel = on_cancel;
    c.perform = rl_test_count_perform;
    return RLRunLoopSourceCreate(0, &c);
}

static int sched_has(int kind, RLRunLoopRef rl, const char *mode) {
    for (int i = 0; i < g_sched.n && i < 16; i++)
        if (g_sched.kind[i] == kind && g_sched.rl[i] == rl && strcmp(g_sched.mode[i], mode) == 0) return 1;
    return 0;
}

static void schedule_on_add_and_cancel_on_remove(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = sched_source();
    RL_ASSERT_EQ_INT(g_sched.n, 0);
    RLRunLoopAddSource(rl, s, "A");
    RL_ASSERT_EQ_INT(g_sched.schedules, 1);
    RL_ASSERT_EQ_INT(g_sched.cancels, 0);
    RL_ASSERT(sched_has(1, rl, "A"));
    RLRunLoopAddSource(rl, s, "A"); /* already there: nothing */
    RL_ASSERT_EQ_INT(g_sched.schedules, 1);
    RLRunLoopRemoveSource(rl, s, "A");
    RL_ASSERT_EQ_INT(g_sched.cancels, 1);
    RL_ASSERT(sched_has(2, rl, "A"));
    RLRunLoopRemoveSource(rl, s, "A"); /* not there: nothing */
    RL_ASSERT_EQ_INT(g_sched.cancels, 1);
    RL_ASSERT_EQ_INT(g_sched.schedules, 1);
    RLRelease(s);
    RL_ASSERT_EQ_INT(g_sched.n, 2);
}

static void schedule_once_per_concrete_common_mode(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopAddCommonMode(rl, "M");
    RLRunLoopSourceRef s = sched_source();
    RLRunLoopAddSource(rl, s, kRLRunLoopCommonModes);
    RL_ASSERT_EQ_INT(g_sched.schedules, 2);
    RL_ASSERT(sched_has(1, rl, "kCFRunLoopDefaultMode"));
    RL_ASSERT(sched_has(1, rl, "M"));
    RLRunLoopAddCommonMode(rl, "N");
    RL_ASSERT_EQ_INT(g_sched.schedules, 3);
    RL_ASSERT(sched_has(1, rl, "N"));
    RLRunLoopRemoveSource(rl, s, kRLRunLoopCommonModes);
    RL_ASSERT_EQ_INT(g_sched.cancels, 3);
    RL_ASSERT(sched_has(2, rl, "kCFRunLoopDefaultMode"));
    RL_ASSERT(sched_has(2, rl, "M"));
    RL_ASSERT(sched_has(2, rl, "N"));
    RLRelease(s);
}

static void cancel_on_invalidate_for_each_mode(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = sched_source();
    RLRunLoopAddSource(rl, s, "A");
    RLRunLoopAddSource(rl, s, "B");
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(g_sched.schedules, 3);
    RLRunLoopSourceSignal(s);
    RLRunLoopSourceInvalidate(s);
    RL_ASSERT(!RLRunLoopSourceIsValid(s));
    RL_ASSERT_EQ_INT(g_sched.cancels, 3);
    RL_ASSERT(sched_has(2, rl, "A"));
    RL_ASSERT(sched_has(2, rl, "B"));
    RL_ASSERT(sched_has(2, rl, "kCFRunLoopDefaultMode"));
    RL_ASSERT(!RLRunLoopContainsSource(rl, s, "A"));
    RL_ASSERT(!RLRunLoopContainsSource(rl, s, kRLRunLoopDefaultMode));
    /* Invalidated: never performs (and the default mode is empty now). */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(rl_test_calls, 0);
    /* A second invalidate does nothing. */
    RLRunLoopSourceInvalidate(s);
    RL_ASSERT_EQ_INT(g_sched.cancels, 3);
    RLRelease(s);
}

/* ---- Signal does not wake; WakeUp does ---- */

static RLRunLoopRef g_rl;
static atomic_int g_performed;
static atomic_int g_before_wake; /* performs seen before the wake-up: -1 = loop never slept */
static void atomic_perform(void *info) {
    (void)info;
    atomic_fetch_add(&g_performed, 1);
}

static void *signal_then_wake(void *arg) {
    RLRunLoopSourceRef s = arg;
    if (!rl_test_wait_sleeping(g_rl, 10)) {
        atomic_store(&g_before_wake, -1);
        RLRunLoopStop(g_rl);
        return NULL;
    }
    RLRunLoopSourceSignal(s);
    rl_test_sleep(0.2);
    atomic_store(&g_before_wake, atomic_load(&g_performed));
    RLRunLoopWakeUp(g_rl);
    return NULL;
}

static void signal_does_not_wake_a_sleeping_loop_but_wakeup_does(void) {
    g_rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = rl_test_source0(0, atomic_perform, NULL);
    RLRunLoopAddSource(g_rl, s, kRLRunLoopDefaultMode);
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, signal_then_wake, s), 0);
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 20, true);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(atomic_load(&g_before_wake), 0);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(atomic_load(&g_performed), 1);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
}

/* ---- version-1 sources ---- */

static int g_fd = -1;
static int fd_of(void *info) {
    (void)info;
    return g_fd;
}
static void drain_fd(void *info) {
    (void)info;
    char buf[64];
    while (read(g_fd, buf, sizeof buf) > 0) {}
    rl_test_calls++;
}

static RLRunLoopSourceRef fd_source(RLIndex order) {
    return rl_test_source1(order, fd_of, drain_fd, NULL);
}

/* A new non-blocking pipe p, and a source watching its read end. */
static RLRunLoopSourceRef source_on_a_new_pipe(int p[2]) {
    RL_ASSERT_EQ_INT(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
    g_fd = p[0];
    return fd_source(0);
}

static void drop_source_and_pipe(RLRunLoopSourceRef s, int p[2]) {
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    close(p[0]);
    close(p[1]);
}

static void v1_source_performs_when_its_pipe_is_readable(void) {
    int p[2];
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = source_on_a_new_pipe(p);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, true), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 0);
    for (int i = 1; i <= 3; i++) {
        RL_ASSERT_EQ_INT(write(p[1], "abc", 3), 3);
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, true), kRLRunLoopRunHandledSource);
        RL_ASSERT_EQ_INT(rl_test_calls, i);
    }
    RL_ASSERT(RLRunLoopContainsSource(rl, s, kRLRunLoopDefaultMode));
    drop_source_and_pipe(s, p);
}

static void *write_later(void *arg) {
    rl_test_sleep(0.05);
    eventfd_write((int)(intptr_t)arg, 1);
    return NULL;
}

static void v1_source_on_eventfd_wakes_a_sleeping_loop(void) {
    g_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    RL_ASSERT(g_fd >= 0);
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = fd_source(0);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, write_later, (void *)(intptr_t)g_fd), 0);
    double t0 = rl_test_now();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 20, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_LE_DBL(rl_test_now() - t0, 10);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    close(g_fd);
}

static void idle_fd_source_does_not_spin(void) {
    int p[2];
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = source_on_a_new_pipe(p);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o = rl_test_counting_observer(rl, kRLRunLoopDefaultMode, kRLRunLoopBeforeWaiting, &g_waits);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.2, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 0);
    RL_ASSERT_LE_INT(g_waits, 2);
    /* After it consumed its data it is idle again. */
    RL_ASSERT_EQ_INT(write(p[1], "x", 1), 1);
    g_waits = 0;
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.2, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RL_ASSERT_LE_INT(g_waits, 3);
    RLRelease(o);
    drop_source_and_pipe(s, p);
}

/* A removed fd source is not watched; added again, it is. */
static void v1_source_removed_is_no_longer_watched(void) {
    int p[2];
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopSourceRef s = source_on_a_new_pipe(p);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RLRunLoopRemoveSource(rl, s, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(write(p[1], "x", 1), 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, true), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 0);
    /* Added again: watched again (the fd is asked for on each add). */
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RLRelease(keep);
    drop_source_and_pipe(s, p);
}

/* ---- getters ---- */

static void getters_return_what_was_given(void) {
    RLRunLoopSourceContext c;
    memset(&c, 0, sizeof c);
    c.info = &rl_test_calls;
    c.schedule = on_schedule;
    c.cancel = on_cancel;
    c.perform = rl_test_count_perform;
    RLRunLoopSourceRef s = RLRunLoopSourceCreate(7, &c);
    RL_ASSERT(s != NULL);
    RL_ASSERT_EQ_INT(RLRunLoopSourceGetOrder(s), 7);
    RL_ASSERT(RLRunLoopSourceIsValid(s));
    RLRunLoopSourceContext got;
    memset(&got, 0xAB, sizeof got);
    RLRunLoopSourceGetContext(s, &got);
    RL_ASSERT_EQ_INT(got.version, 0);
    RL_ASSERT(got.info == &rl_test_calls);
    RL_ASSERT(got.schedule == on_schedule);
    RL_ASSERT(got.cancel == on_cancel);
    RL_ASSERT(got.perform == rl_test_count_perform);
    RL_ASSERT(got.retain == NULL && got.release == NULL);
    RLRunLoopSourceInvalidate(s);
    RL_ASSERT(!RLRunLoopSourceIsValid(s));
    RL_ASSERT_EQ_INT(RLRunLoopSourceGetOrder(s), 7);
    RLRelease(s);

    RLRunLoopSourceRef s1 = fd_source(-3);
    RL_ASSERT_EQ_INT(RLRunLoopSourceGetOrder(s1), -3);
    RLRunLoopSourceContext1 got1;
    memset(&got1, 0, sizeof got1);
    RLRunLoopSourceGetContext(s1, (RLRunLoopSourceContext *)&got1);
    RL_ASSERT_EQ_INT(got1.version, 1);
    RL_ASSERT(got1.getFileDescriptor == fd_of);
    RL_ASSERT(got1.perform == drain_fd);
    RLRelease(s1);
}

/* ---- info retain/release ---- */

static rl_test_counted g_info;

static RLRunLoopSourceRef counted_source(void) {
    RLRunLoopSourceContext c;
    memset(&c, 0, sizeof c);
    c.info = &g_info;
    c.retain = rl_test_counted_retain;
    c.release = rl_test_counted_release;
    c.perform = rl_test_count_perform;
    return RLRunLoopSourceCreate(0, &c);
}

static void info_is_retained_on_create_and_released_with_the_last_reference(void) {
    RLRunLoopSourceRef s = counted_source();
    RL_ASSERT_GE_INT(g_info.retains, 1);
    RL_ASSERT_EQ_INT(g_info.refs, 1);
    RL_ASSERT(RLRetain(s) == s);
    RLRelease(s);
    RL_ASSERT_EQ_INT(g_info.refs, 1);
    RL_ASSERT_EQ_INT(g_info.releases, 0);
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(s);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 1);
    RLRunLoopSourceRef s2 = counted_source(); /* same info, second retain */
    RL_ASSERT_EQ_INT(g_info.refs, 2);
    RLRelease(s2);
    RL_ASSERT_EQ_INT(g_info.refs, 1);
    /* The loop holds the source: dropping our reference does not free it. */
    RLRelease(s);
    RL_ASSERT_EQ_INT(g_info.refs, 1);
    RLRunLoopSourceSignal(s);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, 2);
    /* Removing it drops the last reference. */
    RLRunLoopRemoveSource(rl, s, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(g_info.refs, 0);
    RL_ASSERT_EQ_INT(g_info.retains, g_info.releases);
}

static void invalidated_source_releases_info_with_the_last_reference(void) {
    RLRunLoopSourceRef s = counted_source();
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, kRLRunLoopDefaultMode);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, "A");
    RLRunLoopSourceInvalidate(s);
    RL_ASSERT(!RLRunLoopSourceIsValid(s));
    RLRelease(s);
    RL_ASSERT_EQ_INT(g_info.refs, 0);
    RL_ASSERT_EQ_INT(g_info.retains, g_info.releases);
}

/* A source may be in the loops of several threads; signalled, it performs in
   whichever loop runs it. */
static atomic_int g_thread_performs;
static void *run_other_loop(void *arg) {
    RLRunLoopSourceRef s = arg;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    if (!RLRunLoopContainsSource(rl, s, kRLRunLoopDefaultMode)) return (void *)1;
    RLRunLoopSourceSignal(s);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, true);
    atomic_store(&g_thread_performs, atomic_load(&g_performed));
    return NULL;
}

static void source_can_be_in_loops_of_two_threads(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = rl_test_source0(0, atomic_perform, NULL);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    pthread_t th;
    void *ret = NULL;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, run_other_loop, s), 0);
    pthread_join(th, &ret);
    RL_ASSERT(ret == NULL);
    RL_ASSERT_EQ_INT(atomic_load(&g_thread_performs), 1);
    /* The other thread's loop is gone; ours still has the source. */
    RL_ASSERT(RLRunLoopContainsSource(rl, s, kRLRunLoopDefaultMode));
    RLRunLoopSourceSignal(s);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(atomic_load(&g_performed), 2);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
}

/* Two loops bounce version-0 sources between them from the sources' own
   performs: each perform runs on the loop its source is in. */
enum { SRC_BOUNCERS = 8 };
typedef struct {
    RLRunLoopRef loops[2];
    RLRunLoopSourceRef sources[SRC_BOUNCERS];
    atomic_int performs;
    atomic_int wrong_loop;
    atomic_int stop;
} src_bounce_rec;
static src_bounce_rec g_src_bounce;

static void bounce_source(void *info) {
    int i = (int)(intptr_t)info;
    RLRunLoopSourceRef s = g_src_bounce.sources[i];
    RLRunLoopRef cur = RLRunLoopGetCurrent();
    int side = cur == g_src_bounce.loops[1];
    if (cur != g_src_bounce.loops[side] || !RLRunLoopContainsSource(cur, s, kRLRunLoopDefaultMode))
        atomic_fetch_add(&g_src_bounce.wrong_loop, 1);
    atomic_fetch_add(&g_src_bounce.performs, 1);
    if (atomic_load(&g_src_bounce.stop)) return;
    RLRunLoopRemoveSource(cur, s, kRLRunLoopDefaultMode);
    RLRunLoopRef other = g_src_bounce.loops[!side];
    RLRunLoopAddSource(other, s, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(s);
    RLRunLoopWakeUp(other);
}

static void sources_bounced_between_two_loops_by_their_performs(void) {
    RLThreadRef th[2];
    rl_test_start_loops_on_threads(2, th, g_src_bounce.loops);
    for (int i = 0; i < SRC_BOUNCERS; i++)
        g_src_bounce.sources[i] = rl_test_source0(0, bounce_source, (void *)(intptr_t)i);
    for (int i = 0; i < SRC_BOUNCERS; i++) {
        RLRunLoopAddSource(g_src_bounce.loops[i & 1], g_src_bounce.sources[i], kRLRunLoopDefaultMode);
        RLRunLoopSourceSignal(g_src_bounce.sources[i]);
        RLRunLoopWakeUp(g_src_bounce.loops[i & 1]);
    }
    int want = (int)rl_test_scaled(20000);
    double end = rl_test_now() + 60;
    while (atomic_load(&g_src_bounce.performs) < want && rl_test_now() < end) rl_test_sleep(0.005);
    RL_ASSERT_GE_INT(atomic_load(&g_src_bounce.performs), want);
    atomic_store(&g_src_bounce.stop, 1);
    rl_test_stop_loops_on_threads(2, th, g_src_bounce.loops);
    RL_ASSERT_EQ_INT(atomic_load(&g_src_bounce.wrong_loop), 0);
    for (int i = 0; i < SRC_BOUNCERS; i++) RLRelease(g_src_bounce.sources[i]);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(sources_perform_by_order_then_insertion),
        RL_TEST(signal_is_cleared_before_perform),
        RL_TEST(self_signalled_source_runs_again_without_sleeping),
        RL_TEST(sources_stay_added_after_perform),
        RL_TEST(schedule_on_add_and_cancel_on_remove),
        RL_TEST(schedule_once_per_concrete_common_mode),
        RL_TEST(cancel_on_invalidate_for_each_mode),
        RL_TEST(signal_does_not_wake_a_sleeping_loop_but_wakeup_does),
        RL_TEST(v1_source_performs_when_its_pipe_is_readable),
        RL_TEST(v1_source_on_eventfd_wakes_a_sleeping_loop),
        RL_TEST(idle_fd_source_does_not_spin),
        RL_TEST(v1_source_removed_is_no_longer_watched),
        RL_TEST(getters_return_what_was_given),
        RL_TEST(info_is_retained_on_create_and_released_with_the_last_reference),
        RL_TEST(invalidated_source_releases_info_with_the_last_reference),
        RL_TEST(source_can_be_in_loops_of_two_threads),
        RL_TEST(sources_bounced_between_two_loops_by_their_performs),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
