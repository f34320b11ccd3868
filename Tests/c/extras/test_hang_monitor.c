/*
 * test_hang_monitor.c: RLHangMonitor. A stall (a callout that sleeps longer
 * than the threshold) is reported, repeatedly while it lasts, with the loop
 * thread's stack, the mode and the activity; a healthy loop, a sleeping loop
 * and a stopped monitor report nothing. Timing is asserted only as lower
 * bounds; thresholds scale with RL_TEST_SLOW (valgrind).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <CRunLoop.h>
#include "rltest.h"
#include "../../../Sources/CRunLoop/core/rl_callout.h" /* the callouts: global, not public */

static double slow(void) {
    const char *s = getenv("RL_TEST_SLOW");
    double f = s ? atof(s) : 1;
    return f >= 1 ? f : 1;
}

/* What the callback saw (it runs on the watchdog thread). */
typedef struct {
    pthread_mutex_t lock;
    int reports;
    uint64_t stall_first, stall_last;
    uint32_t last_report_number;
    double first_duration, last_duration;
    RLRunLoopActivity activity;
    char mode[64];
    int frames;
    int named_frames;
    int timer_callout_frames;
    uint64_t passes, sleeps; /* the first report's loop statistics */
    int invalidate_in_callback;
    RLHangMonitorRef monitor;
} seen_t;

static seen_t seen = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* "module(name+0x..)": a frame with a symbol name. */
static int frame_is_named(const char *f) {
    const char *p = f ? strchr(f, '(') : NULL;
    return p && p[1] && p[1] != '+' && p[1] != ')';
}

static void record(RLHangMonitorRef m, const RLHangReport *r, void *info) {
    (void)info;
    pthread_mutex_lock(&seen.lock);
    seen.reports++;
    if (seen.reports == 1) {
        seen.stall_first = r->stallNumber;
        seen.first_duration = r->duration;
        seen.activity = r->activity;
        snprintf(seen.mode, sizeof seen.mode, "%s", r->mode ? r->mode : "(null)");
        seen.passes = r->statistics ? r->statistics->passes : 0;
        seen.sleeps = r->statistics ? r->statistics->sleeps : 0;
    }
    seen.stall_last = r->stallNumber;
    seen.last_report_number = r->reportNumber;
    seen.last_duration = r->duration;
    if (r->frameCount > seen.frames) seen.frames = r->frameCount;
    int named = 0;
    for (int i = 0; i < r->frameCount; i++) {
        if (frame_is_named(r->frames[i])) named++;
        uintptr_t a = (uintptr_t)r->addresses[i], f = (uintptr_t)RL_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION;
        if (a > f && a < f + 256) seen.timer_callout_frames++;
    }
    if (named > seen.named_frames) seen.named_frames = named;
    bool invalidate = seen.invalidate_in_callback;
    pthread_mutex_unlock(&seen.lock);
    if (invalidate) RLHangMonitorInvalidate(m);
    if (getenv("RL_TEST_VERBOSE")) RLHangReportWrite(r, 2);
}

static int seen_reports(void) {
    pthread_mutex_lock(&seen.lock);
    int n = seen.reports;
    pthread_mutex_unlock(&seen.lock);
    return n;
}

static RLHangMonitorRef make_monitor(double threshold) {
    RLHangMonitorRef m = RLHangMonitorCreate(RLRunLoopGetCurrent(), threshold, record, NULL);
    RL_ASSERT(m != NULL);
    RL_ASSERT(RLHangMonitorStart(m));
    RL_ASSERT(RLHangMonitorIsRunning(m));
    return m;
}

static void stall_callout(RLRunLoopTimerRef t, void *info) {
    (void)t;
    rl_test_sleep(*(double *)info); /* restarts after the monitor's signal */
}

/* Runs the current loop in `mode` with a timer that stalls for `stall` seconds
   after `delay`, until a timer stops it at `delay + stall + tail`. */
static void run_with_stall(RLRunLoopMode mode, double delay, double stall, double tail) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLAbsoluteTime now = RLAbsoluteTimeGetCurrent();
    RLRunLoopTimerRef t = rl_test_timer(now + delay, 0, stall_callout, &stall);
    RLRunLoopTimerRef stop = rl_test_timer(now + delay + stall + tail, 0, rl_test_stop_current, NULL);
    RLRunLoopAddTimer(rl, t, mode);
    RLRunLoopAddTimer(rl, stop, mode);
    RLRunLoopRunInMode(mode, 60, false);
    RLRunLoopTimerInvalidate(stop);
    RLRelease(t);
    RLRelease(stop);
}

static void monitor_reports_injected_stall_with_stack_mode_and_activity(void) {
    double k = slow();
    RLHangMonitorRef m = make_monitor(0.1 * k);
    RLRunLoopAddCommonMode(RLRunLoopGetCurrent(), "tracking");
    RLHangMonitorAddMode(m, "tracking");
    run_with_stall("tracking", 0.05, 0.3 * k, 0.05);
    RLHangMonitorRelease(m);
    RL_ASSERT_GE_INT(seen.reports, 1);
    RL_ASSERT_EQ_INT(seen.stall_first, 1);
    RL_ASSERT_GE_DBL(seen.first_duration, 0.1 * k);
    RL_ASSERT_EQ_INT(seen.activity, kRLRunLoopAfterWaiting); /* the timer woke the loop */
    RL_ASSERT_STR_EQ(seen.mode, "tracking");
    RL_ASSERT_GE_INT(seen.frames, 1);
    RL_ASSERT_GE_INT(seen.named_frames, 1);         /* at least libc's, by name */
    RL_ASSERT_GE_INT(seen.timer_callout_frames, 1); /* the phase is on the stack */
    RL_ASSERT_GE_INT(seen.passes, 1);               /* the loop's statistics came along */
    /* Not that it slept: on a slow machine (valgrind) the stalling timer is
       due before the first pass waits, which then only polls. */
}

/* On a manual clock a callout's work takes the time it advances the clock
   by: three steps of 150 ms, each waiting (real time, bounded) for the
   report it makes, stall for 450 ms, reported at 150, 300 and 450 ms. */
static void stall_in_steps(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    for (int i = 1; i <= 3; i++) {
        rl_test_advance(0.15);
        double end = rl_test_now() + 20;
        while (seen_reports() < i && rl_test_now() < end) rl_test_sleep(0.001);
    }
}

static void long_stall_is_reported_repeatedly_with_growing_duration(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLHangMonitorRef m = make_monitor(0.1);
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.02, 0, stall_in_steps, NULL);
    rl_test_advance(1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 60, false), kRLRunLoopRunFinished);
    RLRelease(t);
    /* The watchdog may be reporting still: invalidating waits for it, so the
       counts and what the callback saw are read at the same point. */
    RLHangMonitorInvalidate(m);
    uint64_t stalls = RLHangMonitorGetStallCount(m);
    uint64_t reports = RLHangMonitorGetReportCount(m);
    RLHangMonitorRelease(m);
    RL_ASSERT_EQ_INT(seen.reports, 3);
    RL_ASSERT_EQ_INT(seen.stall_last, seen.stall_first);     /* one stall ... */
    RL_ASSERT_EQ_INT(seen.last_report_number, seen.reports); /* ... numbered reports */
    RL_ASSERT(fabs(seen.first_duration - 0.15) < 1e-5);
    RL_ASSERT(fabs(seen.last_duration - 0.45) < 1e-5);
    RL_ASSERT_EQ_INT(stalls, 1);
    RL_ASSERT_EQ_INT(reports, seen.reports);
}

/* A healthy loop: a 1 ms repeating timer and a source signalled from another
   thread, thousands of short passes, for a while. */
static _Atomic bool feeding = true;
static _Atomic long performed;

static void count_perform(void *info) {
    (void)info;
    atomic_fetch_add(&performed, 1);
}

static void *feeder(void *arg) {
    RLRunLoopSourceRef s = arg;
    while (atomic_load(&feeding)) {
        RLRunLoopSourceSignal(s);
        RLRunLoopWakeUp(RLRunLoopGetMain());
        rl_test_sleep(0.0005);
    }
    return NULL;
}

static void tick(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (*(long *)info)++;
}

static void healthy_loop_reports_nothing(void) {
    double k = slow();
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RL_ASSERT(rl == RLRunLoopGetMain());
    RLHangMonitorRef m = make_monitor(0.25 * k);
    long ticks = 0;
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0.001, tick, &ticks);
    RLRunLoopSourceRef s = rl_test_source0(0, count_perform, NULL);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    pthread_t th;
    pthread_create(&th, NULL, feeder, s);
    double end = rl_test_now() + 1.0;
    long passes = 0;
    while (rl_test_now() < end) {
        RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.01, false);
        RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
        passes += 2;
    }
    atomic_store(&feeding, false);
    pthread_join(th, NULL);
    RLRunLoopTimerInvalidate(t);
    RLRunLoopSourceInvalidate(s);
    RLRelease(t);
    RLRelease(s);
    RLHangMonitorInvalidate(m);
    uint64_t reports = RLHangMonitorGetReportCount(m);
    RLHangMonitorRelease(m);
    RL_ASSERT_GE_INT(passes, 10);
    RL_ASSERT_GE_INT(ticks + atomic_load(&performed), 10);
    RL_ASSERT_EQ_INT(reports, 0);
    RL_ASSERT_EQ_INT(seen.reports, 0);
}

static void sleeping_loop_is_not_a_stall(void) {
    double k = slow();
    RLHangMonitorRef m = make_monitor(0.05 * k);
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef stop = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.5 * k, 0, rl_test_stop_current, NULL);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 60, false);
    rl_test_sleep(0.2 * k); /* outside any run: not watched either */
    RLHangMonitorRelease(m);
    RLRelease(stop);
    RL_ASSERT_EQ_INT(seen.reports, 0);
}

/* A callout that runs the loop in another mode, made after Start (so not
   watched), which sleeps there: the watchdog sees RLRunLoopIsWaiting. And a
   watched nested mode that sleeps: BeforeWaiting. */
static void nested_stop(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    RLRunLoopStop(RLRunLoopGetCurrent());
}

static void run_nested(RLRunLoopTimerRef t, void *info) {
    (void)t;
    const char *mode = info;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef stop = rl_test_add_timer(rl, mode, 0.4 * slow(), 0, nested_stop, NULL);
    RLRunLoopRunInMode(mode, 60, false);
    RLRelease(stop);
}

static void nested_run_that_sleeps_is_not_a_stall(void) {
    double k = slow();
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLHangMonitorRef m = make_monitor(0.1 * k);
    RLHangMonitorAddMode(m, "watched-inner");
    const char *modes[] = {"watched-inner", "unwatched-inner"};
    for (int i = 0; i < 2; i++) {
        RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent() + 0.01, 0, run_nested, (void *)modes[i]);
        RLRunLoopTimerRef stop = rl_test_timer(RLAbsoluteTimeGetCurrent() + 0.2, 0, rl_test_stop_current, NULL);
        RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
        RLRunLoopAddTimer(rl, stop, kRLRunLoopDefaultMode);
        RLRunLoopRunInMode(kRLRunLoopDefaultMode, 60, false);
        RLRelease(t);
        RLRelease(stop);
    }
    RLHangMonitorRelease(m);
    RL_ASSERT_EQ_INT(seen.reports, 0);
}

static void *stop_later(void *arg) {
    rl_test_sleep(0.05);
    RLHangMonitorStop(arg);
    return NULL;
}

static void stop_from_another_thread_ends_reports(void) {
    double k = slow();
    RLHangMonitorRef m = make_monitor(0.1 * k);
    pthread_t th;
    pthread_create(&th, NULL, stop_later, m);
    pthread_join(th, NULL);
    RL_ASSERT(!RLHangMonitorIsRunning(m));
    run_with_stall(kRLRunLoopDefaultMode, 0.01, 0.3 * k, 0.01);
    RL_ASSERT_EQ_INT(seen.reports, 0);
    /* Restart: it watches again. */
    RL_ASSERT(RLHangMonitorStart(m));
    run_with_stall(kRLRunLoopDefaultMode, 0.01, 0.3 * k, 0.01);
    RL_ASSERT_GE_INT(seen_reports(), 1);
    RLHangMonitorRelease(m);
}

static void *invalidate_later(void *arg) {
    rl_test_sleep(0.05);
    RLHangMonitorInvalidate(arg);
    return NULL;
}

static void invalidate_from_another_thread_during_a_stall(void) {
    double k = slow();
    RLHangMonitorRef m = make_monitor(0.03 * k);
    pthread_t th;
    pthread_create(&th, NULL, invalidate_later, m);
    run_with_stall(kRLRunLoopDefaultMode, 0.0, 0.3 * k, 0.01);
    pthread_join(th, NULL);
    RL_ASSERT(!RLHangMonitorIsValid(m));
    RL_ASSERT(!RLHangMonitorStart(m));
    int n = seen_reports();
    run_with_stall(kRLRunLoopDefaultMode, 0.0, 0.2 * k, 0.01);
    RL_ASSERT_EQ_INT(seen_reports(), n);
    RLHangMonitorRelease(m);
}

static void invalidate_from_the_callback_reports_once(void) {
    double k = slow();
    seen.invalidate_in_callback = 1;
    RLHangMonitorRef m = make_monitor(0.1 * k);
    run_with_stall(kRLRunLoopDefaultMode, 0.01, 0.5 * k, 0.01);
    RL_ASSERT_EQ_INT(seen_reports(), 1);
    RL_ASSERT(!RLHangMonitorIsValid(m));
    RLHangMonitorRelease(m);
}

/* The monitor of a loop on another thread, released from the main thread
   while that loop keeps running. */
static _Atomic bool other_running = true;

static void *other_loop(void *arg) {
    RLRunLoopRef *out = arg;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    __atomic_store_n(out, rl, __ATOMIC_SEQ_CST);
    while (atomic_load(&other_running)) RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.01, false);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
    return NULL;
}

static void monitor_of_another_threads_loop(void) {
    RLRunLoopRef shared = NULL, rl;
    pthread_t th;
    pthread_create(&th, NULL, other_loop, &shared);
    while (!(rl = __atomic_load_n(&shared, __ATOMIC_SEQ_CST))) rl_test_sleep(0.001);
    RLHangMonitorRef m = RLHangMonitorCreate(rl, 0.2 * slow(), record, NULL);
    RL_ASSERT(RLHangMonitorStart(m));
    rl_test_sleep(0.3);
    RLHangMonitorRelease(m);
    atomic_store(&other_running, false);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(seen.reports, 0);
}

static void bad_input_is_ignored(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RL_ASSERT(RLHangMonitorCreate(NULL, 1, NULL, NULL) == NULL);
    RL_ASSERT(RLHangMonitorCreate(rl, 0, NULL, NULL) == NULL);
    RL_ASSERT(RLHangMonitorCreate(rl, -1, NULL, NULL) == NULL);
    RL_ASSERT(RLHangMonitorCreate(rl, NAN, NULL, NULL) == NULL);
    RL_ASSERT(!RLHangMonitorStart(NULL));
    RLHangMonitorStop(NULL);
    RLHangMonitorInvalidate(NULL);
    RLHangMonitorRelease(NULL);
    RLHangMonitorAddMode(NULL, "x");
    RL_ASSERT(!RLHangMonitorIsRunning(NULL));
    RL_ASSERT(!RLHangMonitorIsValid(NULL));
    RL_ASSERT_EQ_INT(RLHangMonitorGetStallCount(NULL), 0);
    RL_ASSERT_EQ_INT(RLHangMonitorGetReportCount(NULL), 0);
    RL_ASSERT_EQ_DBL(RLHangMonitorGetThreshold(NULL), 0);
    RLHangReportWrite(NULL, 2);
    RL_ASSERT_STR_EQ(RLRunLoopActivityGetName((RLRunLoopActivity)12345), "unknown");
    RL_ASSERT_STR_EQ(RLRunLoopActivityGetName(kRLRunLoopBeforeWaiting), "kRLRunLoopBeforeWaiting");

    RLHangMonitorRef m = RLHangMonitorCreate(rl, 1e-9, NULL, NULL);
    RL_ASSERT_EQ_DBL(RLHangMonitorGetThreshold(m), 0.001);
    RLHangMonitorAddMode(m, NULL);
    RLHangMonitorAddMode(m, "");
    RLHangMonitorAddMode(m, kRLRunLoopCommonModes);
    RL_ASSERT(RLHangMonitorStart(m));
    RL_ASSERT(RLHangMonitorStart(m)); /* started already */
    RLHangMonitorStop(m);
    RLHangMonitorStop(m);
    RLHangMonitorInvalidate(m);
    RLHangMonitorInvalidate(m);
    RL_ASSERT(!RLHangMonitorStart(m));
    RLHangMonitorRelease(m);
    /* Created and released without ever starting. */
    RLHangMonitorRelease(RLHangMonitorCreate(rl, 1e9, NULL, NULL));
    /* The previous action is back once no monitor is started. */
    struct sigaction sa;
    sigaction(RLHangMonitorGetSignal(), NULL, &sa);
    RL_ASSERT(sa.sa_handler == SIG_DFL);
}

/* The default callback writes to stderr; here only that it does not crash
   and that the context's info is released once. */
static int released;
static void count_release(const void *info) {
    (void)info;
    released++;
}

static void default_callback_and_context_release(void) {
    double k = slow();
    int token = 7;
    RLHangMonitorContext ctx = {0, &token, NULL, count_release, NULL};
    FILE *log = tmpfile();
    RL_ASSERT(log != NULL);
    int saved = dup(2);
    dup2(fileno(log), 2); /* the default callback writes here */
    RLHangMonitorRef m = RLHangMonitorCreate(RLRunLoopGetCurrent(), 0.1 * k, NULL, &ctx);
    RL_ASSERT(RLHangMonitorStart(m));
    run_with_stall(kRLRunLoopDefaultMode, 0.01, 0.25 * k, 0.01);
    RLHangMonitorStop(m);
    dup2(saved, 2);
    RL_ASSERT_GE_INT(RLHangMonitorGetReportCount(m), 1);
    static char text[1 << 16];
    rewind(log);
    size_t got = fread(text, 1, sizeof text - 1, log);
    fclose(log);
    RL_ASSERT(got > 0);
    RL_ASSERT(strstr(text, "RLHangMonitor: run loop") != NULL);
    RL_ASSERT(strstr(text, "after kRLRunLoopAfterWaiting") != NULL);
    RL_ASSERT(strstr(text, "  loop statistics:\n  passes ") != NULL);
    RLHangMonitorInvalidate(m);
    RL_ASSERT_EQ_INT(released, 1);
    RLHangMonitorRelease(m);
    RL_ASSERT_EQ_INT(released, 1);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(monitor_reports_injected_stall_with_stack_mode_and_activity),
        RL_TEST(long_stall_is_reported_repeatedly_with_growing_duration),
        RL_TEST(healthy_loop_reports_nothing),
        RL_TEST(sleeping_loop_is_not_a_stall),
        RL_TEST(nested_run_that_sleeps_is_not_a_stall),
        RL_TEST(stop_from_another_thread_ends_reports),
        RL_TEST(invalidate_from_another_thread_during_a_stall),
        RL_TEST(invalidate_from_the_callback_reports_once),
        RL_TEST(monitor_of_another_threads_loop),
        RL_TEST(bad_input_is_ignored),
        RL_TEST(default_callback_and_context_release),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
