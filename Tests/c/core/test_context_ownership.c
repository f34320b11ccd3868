/*
 * test_context_ownership.c: CF's rules for a context's info, for every kind
 * of object that takes one. retain(info) is called whenever retain is set,
 * even for a NULL info, and release(info) whenever release is set, exactly
 * once at the end of the object's life (its invalidation, or its last
 * release), so retains and releases balance; a context with release but no
 * retain hands its info over (release once, no retain). The only brackets
 * around callouts are a timer's, and only when retain is set. Functions
 * queued with a release (perform requests, idle tasks, queued functions)
 * get it exactly once whatever happened to them, NULL info included.
 */
#include <CRunLoop.h>
#include <CRunLoopLinux.h>
#include <CRunLoopMonitor.h>
#include <CRunLoopThread.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include "rltest.h"

#define DEF kRLRunLoopDefaultMode

static atomic_int retains, releases;
static int token;

static const void *count_retain(const void *info) {
    atomic_fetch_add(&retains, 1);
    return info;
}
static void count_release(const void *info) {
    (void)info;
    atomic_fetch_add(&releases, 1);
}

/* The four contexts: with and without retain, with a NULL and a real info. */
typedef struct {
    bool with_retain;
    void *info;
    const char *name;
} variant;
static const variant variants[] = {
    {true, &token, "retain+release, info"},
    {true, NULL, "retain+release, NULL info"},
    {false, &token, "release only, info"},
    {false, NULL, "release only, NULL info"},
};
#define VARIANTS (int)(sizeof variants / sizeof variants[0])

static void reset(void) {
    atomic_store(&retains, 0);
    atomic_store(&releases, 0);
}

/* While the object lives: created with one retain (if set), nothing released. */
static void expect_alive(const variant *v, int bracket_retains) {
    int r = atomic_load(&retains), l = atomic_load(&releases);
    if (r != (v->with_retain ? 1 + bracket_retains : 0) || l != bracket_retains)
        RL_FAIL_("%s while alive: %d retains, %d releases", v->name, r, l);
}

/* After the end: balanced, released exactly once beyond the brackets. */
static void expect_done(const variant *v, int bracket_retains) {
    int r = atomic_load(&retains), l = atomic_load(&releases);
    if (r != (v->with_retain ? 1 + bracket_retains : 0) || l != 1 + bracket_retains)
        RL_FAIL_("%s at the end: %d retains, %d releases", v->name, r, l);
}

static void nothing(void *info) {
    (void)info;
}

static void ownership_source_version0(void) {
    for (int k = 0; k < VARIANTS; k++) {
        const variant *v = &variants[k];
        reset();
        RLRunLoopSourceContext c = {0, v->info, v->with_retain ? count_retain : NULL, count_release,
                                    .perform = nothing};
        RLRunLoopSourceRef s = RLRunLoopSourceCreate(0, &c);
        RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
        RLRunLoopSourceSignal(s);
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 1, true), kRLRunLoopRunHandledSource);
        RLRunLoopSourceInvalidate(s);
        expect_alive(v, 0); /* a source releases its info when freed */
        RLRelease(s);
        expect_done(v, 0);
    }
}

static int no_fd(void *info) {
    (void)info;
    return -1;
}

static void ownership_source_version1(void) {
    for (int k = 0; k < VARIANTS; k++) {
        const variant *v = &variants[k];
        reset();
        RLRunLoopSourceContext1 c = {1,
                                     v->info,
                                     v->with_retain ? count_retain : NULL,
                                     count_release,
                                     .getFileDescriptor = no_fd,
                                     .perform = nothing};
        RLRunLoopSourceRef s = RLRunLoopSourceCreate(0, (RLRunLoopSourceContext *)&c);
        RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
        RLRunLoopRemoveSource(RLRunLoopGetCurrent(), s, DEF);
        expect_alive(v, 0);
        RLRelease(s);
        expect_done(v, 0);
    }
}

static int observed;
static void observe(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
    observed++;
}

static void ownership_observer(void) {
    RLRunLoopSourceRef keep = rl_test_keep_mode(RLRunLoopGetCurrent(), DEF);
    for (int k = 0; k < VARIANTS; k++) {
        const variant *v = &variants[k];
        reset();
        RLRunLoopObserverContext c = {0, v->info, v->with_retain ? count_retain : NULL, count_release, NULL};
        RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopEntry, true, 0, observe, &c);
        RLRunLoopAddObserver(RLRunLoopGetCurrent(), o, DEF);
        observed = 0;
        RLRunLoopRunInMode(DEF, 0, false);
        RLRunLoopRunInMode(DEF, 0, false);
        RL_ASSERT_EQ_INT(observed, 2);
        expect_alive(v, 0);
        RLRunLoopObserverInvalidate(o);
        expect_done(v, 0); /* an observer releases its info when invalidated */
        RLRelease(o);
        expect_done(v, 0);
    }
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
}

static int fired;
static void fire(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    if (++fired == 2) RLRunLoopStop(RLRunLoopGetCurrent());
}

static void ownership_timer(void) {
    for (int k = 0; k < VARIANTS; k++) {
        const variant *v = &variants[k];
        reset();
        RLRunLoopTimerContext c = {0, v->info, v->with_retain ? count_retain : NULL, count_release, NULL};
        RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent(), 0.01, 0, 0, fire, &c);
        RLRunLoopAddTimer(RLRunLoopGetCurrent(), t, DEF);
        fired = 0;
        RLRunLoopRunInMode(DEF, 5, false);
        RL_ASSERT_EQ_INT(fired, 2);
        /* Each callout is bracketed when retain is set. */
        int brackets = v->with_retain ? 2 : 0;
        expect_alive(v, brackets);
        RLRunLoopTimerInvalidate(t);
        expect_done(v, brackets);
        RLRelease(t);
        expect_done(v, brackets);
    }
}

static int fd_calls;
static void fd_callback(RLFileDescriptorRef f, RLOptionFlags types, void *info) {
    (void)f;
    (void)types;
    (void)info;
    fd_calls++;
}

static void ownership_file_descriptor(void) {
    for (int k = 0; k < VARIANTS; k++) {
        const variant *v = &variants[k];
        reset();
        int fds[2];
        RL_ASSERT_EQ_INT(pipe(fds), 0);
        RLFileDescriptorContext c = {0, v->info, v->with_retain ? count_retain : NULL, count_release, NULL};
        RLFileDescriptorRef f = RLFileDescriptorCreate(fds[0], true, fd_callback, &c);
        RL_ASSERT(f != NULL);
        RLRunLoopSourceRef s = RLFileDescriptorCreateRunLoopSource(f, 0);
        RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
        RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
        RL_ASSERT_EQ_INT(write(fds[1], "x", 1), 1);
        fd_calls = 0;
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
        RL_ASSERT_EQ_INT(fd_calls, 1);
        expect_alive(v, 0);
        RLFileDescriptorInvalidate(f);
        expect_done(v, 0);
        RLRelease(s);
        RLRelease(f);
        expect_done(v, 0);
        close(fds[1]);
    }
}

static int port_calls;
static void port_callback(RLMessagePortRef p, int32_t id, const void *b, size_t n, void *info) {
    (void)p;
    (void)id;
    (void)b;
    (void)n;
    (void)info;
    port_calls++;
}

static void ownership_message_port(void) {
    for (int k = 0; k < VARIANTS; k++) {
        const variant *v = &variants[k];
        reset();
        RLMessagePortContext c = {0, v->info, v->with_retain ? count_retain : NULL, count_release, NULL};
        RLMessagePortRef p = RLMessagePortCreate(port_callback, &c, 0);
        RLRunLoopSourceRef s = RLMessagePortCreateRunLoopSource(p, 0);
        RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
        RL_ASSERT_EQ_INT(RLMessagePortSend(p, 1, NULL, 0), 0);
        port_calls = 0;
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
        RL_ASSERT_EQ_INT(port_calls, 1);
        expect_alive(v, 0);
        RLMessagePortInvalidate(p);
        expect_done(v, 0);
        RLRelease(s);
        RLRelease(p);
        expect_done(v, 0);
    }
    /* Never invalidated: released when freed. */
    reset();
    RLMessagePortContext c = {0, NULL, count_retain, count_release, NULL};
    RLMessagePortRef p = RLMessagePortCreate(port_callback, &c, 0);
    RLRelease(p);
    expect_done(&variants[1], 0);
}

static int signals_seen;
static void signal_callback(int signo, uint32_t count, void *info) {
    (void)signo;
    (void)info;
    signals_seen += (int)count;
}

static void ownership_signal_source(void) {
    for (int k = 0; k < VARIANTS; k++) {
        const variant *v = &variants[k];
        reset();
        RLSignalSourceContext c = {0, v->info, v->with_retain ? count_retain : NULL, count_release, NULL};
        RLRunLoopSourceRef s = RLSignalSourceCreate(SIGUSR2, 0, signal_callback, &c);
        RL_ASSERT(s != NULL);
        RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
        signals_seen = 0;
        kill(getpid(), SIGUSR2);
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
        RL_ASSERT_EQ_INT(signals_seen, 1);
        expect_alive(v, 0);
        RLRunLoopSourceInvalidate(s);
        RLRelease(s);
        expect_done(v, 0);
    }
}

static void ownership_hang_monitor(void) {
    for (int k = 0; k < VARIANTS; k++) {
        const variant *v = &variants[k];
        reset();
        RLHangMonitorContext c = {0, v->info, v->with_retain ? count_retain : NULL, count_release, NULL};
        RLHangMonitorRef m = RLHangMonitorCreate(RLRunLoopGetCurrent(), 10, NULL, &c);
        RL_ASSERT(m != NULL);
        RL_ASSERT(RLHangMonitorStart(m));
        RLRunLoopRunInMode(DEF, 0, false);
        expect_alive(v, 0);
        RLHangMonitorInvalidate(m);
        expect_done(v, 0);
        RLHangMonitorRelease(m);
        expect_done(v, 0);
    }
}

/* ---- functions queued with a release ------------------------------------- */

static atomic_int queued_releases;
static void queued_release(void *info) {
    (void)info;
    atomic_fetch_add(&queued_releases, 1);
}

static void ownership_queued_functions_release_once(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    void *infos[2] = {&token, NULL};
    for (int k = 0; k < 2; k++) {
        atomic_store(&queued_releases, 0);
        RLRunLoopPerformFunctionWithRelease(rl, DEF, nothing, infos[k], queued_release);   /* runs */
        RLRunLoopPerformFunctionWithRelease(rl, NULL, nothing, infos[k], queued_release);  /* bad input */
        RLRunLoopPerformFunctionWithRelease(NULL, DEF, nothing, infos[k], queued_release); /* bad input */
        RLRunLoopRunInMode(DEF, 0, false);
        RL_ASSERT_EQ_INT(atomic_load(&queued_releases), 3);

        atomic_store(&queued_releases, 0);
        RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(rl, NULL, 0, NULL, nothing, infos[k], queued_release, true, 1),
                         kRLPerformRequestDone);
        RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(NULL, NULL, 0, NULL, nothing, infos[k], queued_release, false, 0),
                         kRLPerformRequestInvalid);
        RLPerformRequestRef r =
            RLRunLoopPerformRequestAfterDelay(rl, 100, NULL, 0, NULL, nothing, infos[k], queued_release);
        RL_ASSERT(RLPerformRequestCancel(r));
        RLPerformRequestRelease(r);
        RL_ASSERT_EQ_INT(atomic_load(&queued_releases), 3);

        atomic_store(&queued_releases, 0);
        RLIdleQueueRef q = RLIdleQueueCreate(rl, DEF, 0);
        RLIdleTaskToken t1 = RLIdleQueueSubmit(q, nothing, infos[k], queued_release);
        RLIdleTaskToken t2 = RLIdleQueueSubmit(q, nothing, infos[k], queued_release);
        RL_ASSERT(RLIdleQueueSubmit(q, NULL, infos[k], queued_release) == 0);
        RL_ASSERT(RLIdleQueueCancel(q, t2));
        RLRunLoopSourceRef keep = rl_test_keep_mode(rl, DEF);
        while (RLIdleQueueGetPendingCount(q) > 0) RLRunLoopRunInMode(DEF, 0.05, false);
        RL_ASSERT(t1 != 0);
        RLIdleQueueSubmit(q, nothing, infos[k], queued_release); /* dropped by invalidation */
        RLIdleQueueInvalidate(q);
        RLIdleQueueRelease(q);
        RLRunLoopSourceInvalidate(keep);
        RLRelease(keep);
        RL_ASSERT_EQ_INT(atomic_load(&queued_releases), 4);
    }
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(ownership_source_version0),
        RL_TEST(ownership_source_version1),
        RL_TEST(ownership_observer),
        RL_TEST(ownership_timer),
        RL_TEST(ownership_file_descriptor),
        RL_TEST(ownership_message_port),
        RL_TEST(ownership_signal_source),
        RL_TEST(ownership_hang_monitor),
        RL_TEST(ownership_queued_functions_release_once),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
