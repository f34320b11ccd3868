/* test_lock_pressure.c: the loop's own thread keeps its timeouts however hard
   other threads use the API on its loop (adding, invalidating and releasing
   items, describing the loop), and a description holds the loop's lock only
   to take a snapshot: user copyDescription callbacks run unlocked, may take
   their time and may call into the loop. */
#include <CRunLoop.h>
#include "rltest.h"

#include <pthread.h>
#include <stdatomic.h>

static double slow_factor(void) {
    const char *s = getenv("RL_TEST_SLOW");
    double f = s ? atof(s) : 1;
    return f > 1 ? f : 1;
}

static void nothing(void *info) {
    (void)info;
}
static void timer_nothing(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
}
static void observer_nothing(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
}

static RLRunLoopSourceRef keep_mode_alive(RLRunLoopRef rl, RLRunLoopMode mode) {
    RLRunLoopSourceContext c;
    memset(&c, 0, sizeof c);
    c.perform = nothing;
    RLRunLoopSourceRef s = RLRunLoopSourceCreate(0, &c);
    RLRunLoopAddSource(rl, s, mode);
    return s;
}

static void drop_source(RLRunLoopSourceRef s) {
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
}

/* ---- a short run under API pressure ---------------------------------------- */

/* Each churner adds a batch of timers (due now), sources and observers (of
   every activity) to the loop's mode, then invalidates and releases them,
   over and over; a describer describes the loop over and over. */
#define CHURNERS 2
#define BATCH    300
static RLRunLoopRef g_loop;
static atomic_int g_stop;
static atomic_long g_churned, g_described;

static void *churn(void *arg) {
    (void)arg;
    RLRunLoopSourceContext c;
    memset(&c, 0, sizeof c);
    c.perform = nothing;
    RLRunLoopTimerRef t[BATCH];
    RLRunLoopSourceRef s[BATCH];
    RLRunLoopObserverRef o[BATCH];
    while (!atomic_load(&g_stop)) {
        for (int i = 0; i < BATCH; i++) {
            t[i] = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent(), 0, 0, 0, timer_nothing, NULL);
            RLRunLoopAddTimer(g_loop, t[i], kRLRunLoopDefaultMode);
            s[i] = RLRunLoopSourceCreate(0, &c);
            RLRunLoopAddSource(g_loop, s[i], kRLRunLoopDefaultMode);
            o[i] = RLRunLoopObserverCreate(kRLRunLoopAllActivities, true, 0, observer_nothing, NULL);
            RLRunLoopAddObserver(g_loop, o[i], kRLRunLoopDefaultMode);
        }
        for (int i = 0; i < BATCH; i++) {
            RLRunLoopTimerInvalidate(t[i]);
            RLRelease(t[i]);
            drop_source(s[i]);
            RLRunLoopObserverInvalidate(o[i]);
            RLRelease(o[i]);
        }
        atomic_fetch_add(&g_churned, 1);
    }
    return NULL;
}

static void *describe(void *arg) {
    (void)arg;
    while (!atomic_load(&g_stop)) {
        free(RLCopyDescription(g_loop));
        atomic_fetch_add(&g_described, 1);
    }
    return NULL;
}

/* Healthy: each 10 ms run returns within a few milliseconds of its timeout
   (the pass under way when it passes finishes first), 20 runs in about a
   quarter of a second. When the loop's thread queued for its lock behind
   every caller, and behind whole descriptions, at every callout, a run took
   a quarter of a second at the median and seconds at worst. */
static void a_short_run_returns_on_time_under_api_pressure(void) {
    g_loop = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = keep_mode_alive(g_loop, kRLRunLoopDefaultMode);
    pthread_t threads[CHURNERS + 1];
    for (int i = 0; i < CHURNERS; i++) RL_ASSERT_EQ_INT(pthread_create(&threads[i], NULL, churn, NULL), 0);
    RL_ASSERT_EQ_INT(pthread_create(&threads[CHURNERS], NULL, describe, NULL), 0);
    /* Let the pressure build up before the first run. */
    while (atomic_load(&g_churned) < 2 || atomic_load(&g_described) < 2) rl_test_sleep(0.001);
    double worst = 0, total = 0;
    long runs = rl_test_scaled(20);
    for (long i = 0; i < runs; i++) {
        double t0 = rl_test_now();
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.01, false), kRLRunLoopRunTimedOut);
        double took = rl_test_now() - t0;
        total += took;
        if (took > worst) worst = took;
    }
    atomic_store(&g_stop, 1);
    for (int i = 0; i <= CHURNERS; i++) pthread_join(threads[i], NULL);
    printf("  %ld 10 ms runs: %.1f ms in all, the slowest %.1f ms\n", runs, total * 1e3, worst * 1e3);
    RL_ASSERT_LE_DBL(worst, 2.0 * slow_factor());
    RL_ASSERT_LE_DBL(total, 0.125 * (double)runs * slow_factor());
    drop_source(keep);
}

/* ---- a busy loop lets callers in ------------------------------------------------ */

/* The loop's thread runs pass after pass (a source that signals itself), and
   holds its lock for most of each: callers still get their turn every pass.
   Healthy: the 1000 rounds of calls take a millisecond or a few. */
static RLRunLoopSourceRef g_busy;
static atomic_int g_calls_done;
static void busy_perform(void *info) {
    (void)info;
    if (!atomic_load(&g_calls_done)) RLRunLoopSourceSignal(g_busy);
}

static void *call_the_api(void *arg) {
    double *took = arg;
    double t0 = rl_test_now();
    for (int i = 0; i < 1000; i++) {
        RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 60, 0, 0, 0, timer_nothing, NULL);
        RLRunLoopAddTimer(g_loop, t, kRLRunLoopDefaultMode);
        RLRunLoopTimerInvalidate(t);
        RLRelease(t);
    }
    *took = rl_test_now() - t0;
    atomic_store(&g_calls_done, 1);
    RLRunLoopWakeUp(g_loop);
    return NULL;
}

static void a_busy_loop_lets_callers_in(void) {
    g_loop = RLRunLoopGetCurrent();
    g_busy = rl_test_source0(0, busy_perform, NULL);
    RLRunLoopAddSource(g_loop, g_busy, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(g_busy);
    double took = 0;
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, call_the_api, &took), 0);
    while (!atomic_load(&g_calls_done)) RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false);
    pthread_join(th, NULL);
    printf("  1000 rounds of calls beside a busy loop: %.1f ms\n", took * 1e3);
    RL_ASSERT_LE_DBL(took, 5.0 * slow_factor());
    drop_source(g_busy);
}

/* ---- a description's user code runs unlocked ------------------------------- */

static atomic_int g_describing; /* the slow copyDescription has started */
static atomic_int g_may_finish; /* the loop's run has returned */
static char *slow_description(const void *info) {
    (void)info;
    atomic_store(&g_describing, 1);
    /* Waits for the run on the loop's thread to return (at most 5 s). */
    for (int i = 0; i < 5000 && !atomic_load(&g_may_finish); i++) rl_test_sleep(0.001);
    return strdup("slow");
}

static void *describe_once(void *arg) {
    char *d = RLCopyDescription(arg);
    return d;
}

/* A description prints info through copyDescription only when info is not NULL. */
static RLRunLoopSourceRef described_source(char *(*copy)(const void *), const char *info) {
    RLRunLoopSourceContext c;
    memset(&c, 0, sizeof c);
    c.info = (void *)info;
    c.copyDescription = copy;
    c.perform = nothing;
    return RLRunLoopSourceCreate(0, &c);
}

/* Healthy: the 10 ms run returns in about 10 ms while the copyDescription
   waits for it; a description holding the loop's lock around it kept the run
   from returning until the callback gave up (5 s). */
static void a_slow_copy_description_does_not_hold_up_the_loop(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = described_source(slow_description, "slow");
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, describe_once, rl), 0);
    while (!atomic_load(&g_describing)) rl_test_sleep(0.001);
    double t0 = rl_test_now();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.01, false), kRLRunLoopRunTimedOut);
    double took = rl_test_now() - t0;
    atomic_store(&g_may_finish, 1);
    char *d = NULL;
    pthread_join(th, (void **)&d);
    RL_ASSERT(d && strstr(d, "slow"));
    free(d);
    RL_ASSERT_LE_DBL(took, 2.5 * slow_factor());
    drop_source(s);
}

/* A copyDescription that asks the loop something (here: whether it holds the
   source) while the loop is being described: it deadlocked when the
   description held the loop's lock around user code. */
static RLRunLoopRef g_asked_loop;
static RLRunLoopSourceRef g_asked_source;
static char *asking_description(const void *info) {
    (void)info;
    bool in = RLRunLoopContainsSource(g_asked_loop, g_asked_source, kRLRunLoopDefaultMode);
    return strdup(in ? "asked: contained" : "asked: not contained");
}

static void *describe_and_flag(void *arg) {
    char *d = RLCopyDescription(arg);
    atomic_store(&g_may_finish, 1);
    return d;
}

static void a_copy_description_may_call_into_the_loop(void) {
    RLRunLoopRef rl = g_asked_loop = RLRunLoopGetCurrent();
    g_asked_source = described_source(asking_description, "asking");
    RLRunLoopAddSource(rl, g_asked_source, kRLRunLoopDefaultMode);
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, describe_and_flag, rl), 0);
    /* A deadlocked describer never flags: give it 10 s (healthy: microseconds). */
    for (int i = 0; i < 10000 && !atomic_load(&g_may_finish); i++) rl_test_sleep(0.001);
    if (!atomic_load(&g_may_finish)) RL_FAIL_("the description did not finish within 10 s");
    char *d = NULL;
    pthread_join(th, (void **)&d);
    RL_ASSERT(d && strstr(d, "asked: contained"));
    free(d);
    /* The item's own description calls it too. */
    d = RLCopyDescription(g_asked_source);
    RL_ASSERT(d && strstr(d, "asked: contained"));
    free(d);
    drop_source(g_asked_source);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(a_short_run_returns_on_time_under_api_pressure),
        RL_TEST(a_busy_loop_lets_callers_in),
        RL_TEST(a_slow_copy_description_does_not_hold_up_the_loop),
        RL_TEST(a_copy_description_may_call_into_the_loop),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
