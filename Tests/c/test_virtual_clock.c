/* test_virtual_clock.c: a loop on a manual clock (CRunLoopClock.h). Its
   timers fire only as the program advances the clock, in date order, each
   at its own time (the loop's time steps from one wake-up to the next),
   repeating timers on their grid, tolerance and leeway grouping wake-ups as
   on real time; a run never sleeps and returns kRLRunLoopRunIdle by the
   documented rule; an advance made inside a callout is time passing while
   the loop works; other threads may advance it; nested runs, switching
   clocks and moving timers between the two kinds of loop; delayed perform
   requests, idle slices, the hang monitor and embedding on the loop's time.
   No test here waits for real time to pass, except where it says so. */
#include <CRunLoop.h>
#include "rltest.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/prctl.h>

static RLRunLoopRef manual_loop(RLAbsoluteTime start) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RL_ASSERT(RLRunLoopUseManualClock(rl, start));
    return rl;
}

/* Runs the default mode "for ever": on a manual clock, until it goes idle. */
static RLRunLoopRunResult run_default(void) {
    return RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1e10, false);
}

/* What a timer's callouts saw: the loop's time at each, in order. */
typedef struct {
    int fired;
    RLAbsoluteTime at[64];
    long id;
} seen_rec;

static void note_time(RLRunLoopTimerRef t, void *info) {
    (void)t;
    seen_rec *r = info;
    if (r->fired < 64) r->at[r->fired] = RLRunLoopGetCurrentTime(RLRunLoopGetCurrent());
    r->fired++;
    rl_test_log_add(&rl_test_callouts, r->id);
}

static RLRunLoopTimerRef add_noting_timer(RLRunLoopRef rl, RLAbsoluteTime date, RLTimeInterval interval, seen_rec *r) {
    RLRunLoopTimerRef t = rl_test_timer(date, interval, note_time, r);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    return t;
}

/* ---- the two readings -------------------------------------------------- */

static void manual_clock_reads_the_date_it_was_given(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RL_ASSERT(!RLRunLoopHasManualClock(rl));
    RL_ASSERT(RLRunLoopUseManualClock(rl, 100));
    RL_ASSERT(RLRunLoopHasManualClock(rl));
    RL_ASSERT_EQ_DBL(RLRunLoopGetCurrentTime(rl), 100);
    RL_ASSERT_EQ_DBL(RLRunLoopClockGetTime(rl), 100);
    /* Restarting it is allowed, even earlier. */
    RL_ASSERT(RLRunLoopUseManualClock(rl, -5.5));
    RL_ASSERT_EQ_DBL(RLRunLoopGetCurrentTime(rl), -5.5);
    RL_ASSERT(RLRunLoopUseRealClock(rl));
    RL_ASSERT(!RLRunLoopHasManualClock(rl));
    RLAbsoluteTime real = RLAbsoluteTimeGetCurrent();
    RL_ASSERT(fabs(RLRunLoopGetCurrentTime(rl) - real) < 60);
    RL_ASSERT(fabs(RLRunLoopClockGetTime(rl) - real) < 60);
    RL_ASSERT(RLRunLoopUseRealClock(rl)); /* already real */
}

static void clock_calls_refuse_bad_input(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RL_ASSERT(!RLRunLoopClockAdvance(rl, 1)); /* real time */
    RL_ASSERT(!RLRunLoopClockSetTime(rl, 1));
    RL_ASSERT(!RLRunLoopUseManualClock(NULL, 0));
    RL_ASSERT(!RLRunLoopUseRealClock(NULL));
    RL_ASSERT(!RLRunLoopHasManualClock(NULL));
    RL_ASSERT(!RLRunLoopUseManualClock(rl, NAN));
    RL_ASSERT(fabs(RLRunLoopGetCurrentTime(NULL) - RLAbsoluteTimeGetCurrent()) < 60);
    RL_ASSERT(RLRunLoopUseManualClock(rl, 10));
    RL_ASSERT(!RLRunLoopClockAdvance(NULL, 1));
    RL_ASSERT(!RLRunLoopClockAdvance(rl, -1));
    RL_ASSERT(!RLRunLoopClockAdvance(rl, NAN));
    RL_ASSERT(!RLRunLoopClockAdvance(rl, INFINITY));
    RL_ASSERT(RLRunLoopClockAdvance(rl, 0));
    RL_ASSERT(!RLRunLoopClockSetTime(rl, 9)); /* never back */
    RL_ASSERT(!RLRunLoopClockSetTime(rl, NAN));
    RL_ASSERT(RLRunLoopClockSetTime(rl, 12.5));
    RL_ASSERT_EQ_DBL(RLRunLoopClockGetTime(rl), 12.5);
    /* Nothing ran: the loop's time waits for a run. */
    RL_ASSERT_EQ_DBL(RLRunLoopGetCurrentTime(rl), 10);
    /* The clock stops at the latest date a timer may have. */
    RL_ASSERT(RLRunLoopClockAdvance(rl, 1e300));
    RL_ASSERT_LE_DBL(RLRunLoopClockGetTime(rl), 4039289856.0);
    RL_ASSERT_GE_DBL(RLRunLoopClockGetTime(rl), 4039289855.0);
}

/* ---- timers fire only as far as the clock went ---- */

static void timer_fires_only_once_the_clock_reaches_its_date(void) {
    RLRunLoopRef rl = manual_loop(0);
    static seen_rec r;
    RLRunLoopTimerRef t = add_noting_timer(rl, RLRunLoopGetCurrentTime(rl) + 30, 0, &r);
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunIdle);
    RL_ASSERT_EQ_INT(r.fired, 0);
    RL_ASSERT(RLRunLoopClockAdvance(rl, 29.9));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunIdle);
    RL_ASSERT_EQ_INT(r.fired, 0);
    RL_ASSERT_EQ_DBL(RLRunLoopGetCurrentTime(rl), 29.9);
    RL_ASSERT(RLRunLoopClockAdvance(rl, 0.1));
    /* Fired at 30, then its mode is empty: Finished. */
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(r.fired, 1);
    RL_ASSERT_EQ_DBL(r.at[0], 30);
    RL_ASSERT(!RLRunLoopTimerIsValid(t));
    RLRelease(t);
}

static void timers_fire_in_date_order_each_at_its_own_time(void) {
    RLRunLoopRef rl = manual_loop(0);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    static const double dates[] = {3, 1, 5, 0.5, 2, 4, 1};
    enum { N = sizeof dates / sizeof dates[0] };
    static seen_rec r[N];
    RLRunLoopTimerRef t[N];
    for (int i = 0; i < N; i++) {
        r[i].id = i;
        t[i] = add_noting_timer(rl, dates[i], 0, &r[i]);
    }
    RL_ASSERT(RLRunLoopClockAdvance(rl, 10));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunIdle);
    RL_ASSERT_LOG(&rl_test_callouts, 3, 1, 6, 4, 0, 5, 2);
    for (int i = 0; i < N; i++) {
        RL_ASSERT_EQ_INT(r[i].fired, 1);
        RL_ASSERT_EQ_DBL(r[i].at[0], dates[i]);
        RLRelease(t[i]);
    }
    RL_ASSERT_EQ_DBL(RLRunLoopGetCurrentTime(rl), 10);
    RLRelease(keep);
}

/* Ten seconds over a timer repeating every second: ten callouts, each on its
   grid point (real time would fire it once, late). */
static void repeating_timer_fires_on_every_grid_point_it_passes(void) {
    RLRunLoopRef rl = manual_loop(0);
    static seen_rec r;
    RLRunLoopTimerRef t = add_noting_timer(rl, 1, 1, &r);
    RL_ASSERT(RLRunLoopClockAdvance(rl, 10.5));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunIdle);
    RL_ASSERT_EQ_INT(r.fired, 10);
    for (int i = 0; i < 10; i++) RL_ASSERT_EQ_DBL(r.at[i], i + 1);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetNextFireDate(t), 11);
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, kRLRunLoopDefaultMode), 11);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
}

/* A retry with back-off: each callout schedules the next attempt 2^k
   seconds after its own time; advancing 7 s makes exactly three attempts,
   at 1, 3 and 7. */
static int g_attempts;
static RLAbsoluteTime g_attempt_at[8];
static void retry(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLAbsoluteTime now = RLRunLoopGetCurrentTime(rl);
    g_attempt_at[g_attempts++] = now;
    RLRunLoopTimerRef next = rl_test_timer(now + (double)(2 << (g_attempts - 1)), 0, retry, NULL);
    RLRunLoopAddTimer(rl, next, kRLRunLoopDefaultMode);
    RLRelease(next);
}

static void timers_scheduled_by_callouts_on_the_way_fire_in_their_place(void) {
    RLRunLoopRef rl = manual_loop(0);
    RLRunLoopTimerRef first = rl_test_timer(1, 0, retry, NULL);
    RLRunLoopAddTimer(rl, first, kRLRunLoopDefaultMode);
    RL_ASSERT(RLRunLoopClockAdvance(rl, 7));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunIdle);
    RL_ASSERT_EQ_INT(g_attempts, 3);
    RL_ASSERT_EQ_DBL(g_attempt_at[0], 1);
    RL_ASSERT_EQ_DBL(g_attempt_at[1], 3);
    RL_ASSERT_EQ_DBL(g_attempt_at[2], 7);
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, kRLRunLoopDefaultMode), 15);
    RLRelease(first);
}

/* Equal dates keep the order they were scheduled in. */
static void timers_of_equal_dates_fire_in_the_order_added(void) {
    RLRunLoopRef rl = manual_loop(0);
    RLRunLoopTimerRef t[20];
    for (long i = 0; i < 20; i++) {
        t[i] = rl_test_indexed_timer(2, i);
        RLRunLoopAddTimer(rl, t[i], kRLRunLoopDefaultMode);
    }
    RLRunLoopTimerSetNextFireDate(t[3], 2); /* re-dated: after the others */
    RL_ASSERT(RLRunLoopClockAdvance(rl, 2));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunFinished);
    RL_ASSERT_LOG(&rl_test_callouts, 0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 3);
    for (int i = 0; i < 20; i++) RLRelease(t[i]);
}

/* ---- tolerance, leeway and slack, as on real time ---- */

static void tolerance_and_leeway_group_wake_ups_as_on_real_time(void) {
    RLRunLoopRef rl = manual_loop(0);
    static seen_rec lone, early, late, near[2], far[2];
    /* Alone, a tolerant timer fires at its date. */
    RLRunLoopTimerRef a = rl_test_timer(1, 0, note_time, &lone);
    RLRunLoopTimerSetTolerance(a, 5);
    RLRunLoopAddTimer(rl, a, kRLRunLoopDefaultMode);
    RL_ASSERT(RLRunLoopClockAdvance(rl, 100));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_DBL(lone.at[0], 1);
    /* A tolerant timer waits for one in its window: both at the later date. */
    RLAbsoluteTime now = RLRunLoopGetCurrentTime(rl);
    RLRunLoopTimerRef b = rl_test_timer(now + 1, 0, note_time, &early);
    RLRunLoopTimerSetTolerance(b, 1);
    RLRunLoopAddTimer(rl, b, kRLRunLoopDefaultMode);
    RLRunLoopTimerRef c = add_noting_timer(rl, now + 1.5, 0, &late);
    RL_ASSERT(RLRunLoopClockAdvance(rl, 100));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_DBL(early.at[0], now + 1.5);
    RL_ASSERT_EQ_DBL(late.at[0], now + 1.5);
    /* Without tolerance: 200 us apart, scheduled a second ahead, they share
       a wake-up within the implicit leeway (500 us); 2 ms apart they do not. */
    now = RLRunLoopGetCurrentTime(rl);
    RLRunLoopTimerRef d[2] = {add_noting_timer(rl, now + 1, 0, &near[0]),
                              add_noting_timer(rl, now + 1.0002, 0, &near[1])};
    RLRunLoopTimerRef e[2] = {add_noting_timer(rl, now + 2, 0, &far[0]), add_noting_timer(rl, now + 2.002, 0, &far[1])};
    RL_ASSERT(RLRunLoopClockAdvance(rl, 100));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_DBL(near[0].at[0], now + 1.0002);
    RL_ASSERT_EQ_DBL(near[1].at[0], now + 1.0002);
    RL_ASSERT_EQ_DBL(far[0].at[0], now + 2);
    RL_ASSERT_EQ_DBL(far[1].at[0], now + 2.002);
    RLRelease(a);
    RLRelease(b);
    RLRelease(c);
    for (int i = 0; i < 2; i++) {
        RLRelease(d[i]);
        RLRelease(e[i]);
    }
}

/* ---- what a run returns ---- */

static void run_with_nothing_to_do_returns_idle_after_one_pass(void) {
    RLRunLoopRef rl = manual_loop(0);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    rl_test_log log = {0};
    RLRunLoopObserverRef o = rl_test_log_observer(kRLRunLoopAllActivities, 0, &log);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunIdle);
    RL_ASSERT_LOG(&log, kRLRunLoopEntry, kRLRunLoopBeforeTimers, kRLRunLoopBeforeSources, kRLRunLoopBeforeWaiting,
                  kRLRunLoopAfterWaiting, kRLRunLoopExit);
    RLRunLoopRun(); /* returns too */
    RL_ASSERT_EQ_DBL(RLRunLoopGetCurrentTime(rl), 0);
    RLRelease(o);
    RLRelease(keep);
}

/* The run's seconds are the clock's: TimedOut when the loop's time reaches
   them, however far the clock is ahead; then Idle once it caught up. */
static void run_times_out_on_the_clock(void) {
    RLRunLoopRef rl = manual_loop(0);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RL_ASSERT(RLRunLoopClockAdvance(rl, 100));
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_DBL(RLRunLoopGetCurrentTime(rl), 5);
    RL_ASSERT_EQ_DBL(RLRunLoopClockGetTime(rl), 100);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 200, false), kRLRunLoopRunIdle);
    RL_ASSERT_EQ_DBL(RLRunLoopGetCurrentTime(rl), 100);
    /* A deadline short of the clock's time: TimedOut. */
    RL_ASSERT(RLRunLoopClockAdvance(rl, 1));
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_DBL(RLRunLoopGetCurrentTime(rl), 101);
    RLRelease(keep);
}

/* A polling run makes one pass: it moves the loop's time one wake-up on. */
static void polling_run_moves_one_wake_up(void) {
    RLRunLoopRef rl = manual_loop(0);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopTimerRef t[3];
    for (long i = 0; i < 3; i++) {
        t[i] = rl_test_indexed_timer((double)(i + 1), i);
        RLRunLoopAddTimer(rl, t[i], kRLRunLoopDefaultMode);
    }
    RL_ASSERT(RLRunLoopClockAdvance(rl, 10));
    for (int i = 0; i < 3; i++) {
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
        RL_ASSERT_EQ_INT(rl_test_callouts.n, i + 1);
        RL_ASSERT_EQ_DBL(RLRunLoopGetCurrentTime(rl), i + 1);
    }
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_DBL(RLRunLoopGetCurrentTime(rl), 10);
    for (int i = 0; i < 3; i++) RLRelease(t[i]);
    RLRelease(keep);
}

/* Work that is no timer keeps the run going, as on real time: a signalled
   source, a queued block, a ready descriptor; once done, Idle. */
static void note_block(void *info) {
    (void)info;
    rl_test_log_add(&rl_test_callouts, 100);
}

static void sources_blocks_and_descriptors_run_before_idle(void) {
    RLRunLoopRef rl = manual_loop(0);
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_log_perform, (void *)1);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(s);
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, note_block, NULL);
    int fds[2];
    RL_ASSERT_EQ_INT(pipe2(fds, O_NONBLOCK), 0);
    static rl_test_fd_info info;
    info.fd = fds[0];
    info.drain = true;
    RLRunLoopSourceRef s1 = rl_test_fd_source(&info);
    RLRunLoopAddSource(rl, s1, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(write(fds[1], "x", 1), 1);
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunIdle);
    RL_ASSERT_LOG(&rl_test_callouts, 100, 1);
    RL_ASSERT_EQ_INT(info.performed, 1);
    RL_ASSERT_EQ_DBL(RLRunLoopGetCurrentTime(rl), 0);
    /* With returnAfterSourceHandled, as on real time. */
    RL_ASSERT_EQ_INT(write(fds[1], "y", 1), 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1e10, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(info.performed, 2);
    RLRunLoopSourceInvalidate(s1);
    RLRelease(s1);
    RLRelease(s);
    close(fds[0]);
    close(fds[1]);
}

/* A wake-up pending at the wait (here from a BeforeWaiting observer, the
   first two times) makes that pass go round again instead of going idle. */
static int g_wake_ups_left = 2;
static void wake_before_waiting(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (*(int *)info)++;
    if (g_wake_ups_left-- > 0) RLRunLoopWakeUp(RLRunLoopGetCurrent());
}

static void pending_wake_up_is_not_idle(void) {
    RLRunLoopRef rl = manual_loop(0);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    int waits = 0;
    RLRunLoopObserverContext ctx = {0, &waits, NULL, NULL, NULL};
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopBeforeWaiting, true, 0, wake_before_waiting, &ctx);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunIdle);
    RL_ASSERT_EQ_INT(waits, 3);
    RLRelease(o);
    RLRelease(keep);
}

/* Stopped and Finished come before Idle (CF's order, Idle last). */
static void stop_then_idle_exit_order(void) {
    RLRunLoopRef rl = manual_loop(0);
    RLRunLoopTimerRef t = rl_test_timer(1, 0, rl_test_stop_current, NULL);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RL_ASSERT(RLRunLoopClockAdvance(rl, 1));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunIdle);
    RLRunLoopSourceInvalidate(keep);
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunFinished);
    RLRelease(t);
    RLRelease(keep);
}

/* ---- time passing inside a callout ---- */

static RLAbsoluteTime g_after_advance;
static void advance_five(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RL_ASSERT(RLRunLoopClockAdvance(rl, 5));
    g_after_advance = RLRunLoopGetCurrentTime(rl);
}

/* The loop's time moves at once: a repeating timer on a one-second grid
   fires once, late, and skips to its grid; a one-shot due meanwhile fires
   late, in the next pass, as on real time. */
static void advance_inside_a_callout_is_time_the_callout_took(void) {
    RLRunLoopRef rl = manual_loop(0);
    RLRunLoopTimerRef slow = rl_test_timer(1, 0, advance_five, NULL);
    RLRunLoopAddTimer(rl, slow, kRLRunLoopDefaultMode);
    static seen_rec every, once;
    RLRunLoopTimerRef rep = add_noting_timer(rl, 1.5, 1, &every);
    RLRunLoopTimerRef one = add_noting_timer(rl, 2, 0, &once);
    RL_ASSERT(RLRunLoopClockAdvance(rl, 1));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunIdle);
    RL_ASSERT_EQ_DBL(g_after_advance, 6);
    RL_ASSERT_EQ_DBL(RLRunLoopClockGetTime(rl), 6);
    RL_ASSERT_EQ_INT(every.fired, 1);
    RL_ASSERT_EQ_DBL(every.at[0], 6);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetNextFireDate(rep), 6.5);
    RL_ASSERT_EQ_INT(once.fired, 1);
    RL_ASSERT_EQ_DBL(once.at[0], 6);
    RLRunLoopTimerInvalidate(rep);
    RLRelease(slow);
    RLRelease(rep);
    RLRelease(one);
}

/* ---- another thread advances the clock ---- */

static RLRunLoopRef g_loop;
static atomic_int g_go, g_done;
static void *advance_when_told(void *arg) {
    (void)arg;
    rl_test_wait_for(&g_go, 1, 20);
    RL_ASSERT(RLRunLoopClockAdvance(g_loop, 5));
    atomic_store(&g_done, 1);
    return NULL;
}

static RLAbsoluteTime g_seen_after_other_advance;
static void let_the_other_thread_advance(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    atomic_store(&g_go, 1);
    rl_test_wait_for(&g_done, 1, 20);
    g_seen_after_other_advance = RLRunLoopGetCurrentTime(RLRunLoopGetCurrent());
}

/* Advanced by another thread during a run: the loop's time does not jump
   (the loop was busy, not waiting for it), the run catches up before it
   goes idle, firing what came due on the way, each at its time. */
static void advance_from_another_thread_is_caught_up_before_idle(void) {
    RLRunLoopRef rl = g_loop = manual_loop(0);
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, advance_when_told, NULL), 0);
    RLRunLoopTimerRef first = rl_test_timer(1, 0, let_the_other_thread_advance, NULL);
    RLRunLoopAddTimer(rl, first, kRLRunLoopDefaultMode);
    static seen_rec later;
    RLRunLoopTimerRef t = add_noting_timer(rl, 3, 1, &later);
    RL_ASSERT(RLRunLoopClockAdvance(rl, 1));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunIdle);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_DBL(g_seen_after_other_advance, 1);
    RL_ASSERT_EQ_INT(later.fired, 4);
    RL_ASSERT_EQ_DBL(later.at[0], 3);
    RL_ASSERT_EQ_DBL(later.at[3], 6);
    RL_ASSERT_EQ_DBL(RLRunLoopGetCurrentTime(rl), 6);
    RLRunLoopTimerInvalidate(t);
    RLRelease(first);
    RLRelease(t);
}

/* A loop on its own thread driven by the test thread's advances: the
   worker runs until idle, the test advances, and so on; no real time. */
typedef struct {
    RLRunLoopRef rl;
    atomic_int ready, fired, quit;
    atomic_int idles;
} worker_rec;
static worker_rec g_worker;

static void count_worker_fire(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    atomic_fetch_add(&g_worker.fired, 1);
}

static void *manual_worker(void *arg) {
    (void)arg;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RL_ASSERT(RLRunLoopUseManualClock(rl, 0));
    RLRunLoopTimerRef t = rl_test_timer(1, 1, count_worker_fire, NULL);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    g_worker.rl = rl;
    atomic_store(&g_worker.ready, 1);
    while (!atomic_load(&g_worker.quit)) {
        if (run_default() == kRLRunLoopRunIdle) atomic_fetch_add(&g_worker.idles, 1);
        sched_yield();
    }
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
    return NULL;
}

static void loop_on_another_thread_follows_the_advances(void) {
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, manual_worker, NULL), 0);
    rl_test_wait_for(&g_worker.ready, 1, 20);
    for (int k = 1; k <= 5; k++) {
        RL_ASSERT(RLRunLoopClockAdvance(g_worker.rl, 1));
        rl_test_wait_for(&g_worker.fired, k, 20);
        RL_ASSERT_EQ_INT(atomic_load(&g_worker.fired), k);
    }
    atomic_store(&g_worker.quit, 1);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(atomic_load(&g_worker.fired), 5);
}

/* ---- nested runs ---- */

static RLRunLoopRunResult g_nested_result[2];
static RLAbsoluteTime g_nested_end[2];
static void run_nested_twice(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    g_nested_result[0] = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1.5, false);
    g_nested_end[0] = RLRunLoopGetCurrentTime(rl);
    g_nested_result[1] = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1e10, false);
    g_nested_end[1] = RLRunLoopGetCurrentTime(rl);
}

/* A run nested in a callout moves the time too: the first times out on the
   clock (1 + 1.5), the second catches up and goes idle; the outer run then
   has nothing left and goes idle. Timers fire once each, in order. */
static void nested_runs_move_the_time_and_go_idle_by_the_same_rule(void) {
    RLRunLoopRef rl = manual_loop(0);
    RLRunLoopTimerRef modal = rl_test_timer(1, 0, run_nested_twice, NULL);
    RLRunLoopAddTimer(rl, modal, kRLRunLoopDefaultMode);
    static seen_rec r;
    RLRunLoopTimerRef t = add_noting_timer(rl, 2, 1, &r);
    RL_ASSERT(RLRunLoopClockAdvance(rl, 5));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunIdle);
    RL_ASSERT_EQ_INT(g_nested_result[0], kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_DBL(g_nested_end[0], 2.5);
    RL_ASSERT_EQ_INT(g_nested_result[1], kRLRunLoopRunIdle);
    RL_ASSERT_EQ_DBL(g_nested_end[1], 5);
    RL_ASSERT_EQ_INT(r.fired, 4);
    for (int i = 0; i < 4; i++) RL_ASSERT_EQ_DBL(r.at[i], 2 + i);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
    RLRelease(modal);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(manual_clock_reads_the_date_it_was_given),
        RL_TEST(clock_calls_refuse_bad_input),
        RL_TEST(timer_fires_only_once_the_clock_reaches_its_date),
        RL_TEST(timers_fire_in_date_order_each_at_its_own_time),
        RL_TEST(repeating_timer_fires_on_every_grid_point_it_passes),
        RL_TEST(timers_scheduled_by_callouts_on_the_way_fire_in_their_place),
        RL_TEST(timers_of_equal_dates_fire_in_the_order_added),
        RL_TEST(tolerance_and_leeway_group_wake_ups_as_on_real_time),
        RL_TEST(run_with_nothing_to_do_returns_idle_after_one_pass),
        RL_TEST(run_times_out_on_the_clock),
        RL_TEST(polling_run_moves_one_wake_up),
        RL_TEST(sources_blocks_and_descriptors_run_before_idle),
        RL_TEST(pending_wake_up_is_not_idle),
        RL_TEST(stop_then_idle_exit_order),
        RL_TEST(advance_inside_a_callout_is_time_the_callout_took),
        RL_TEST(advance_from_another_thread_is_caught_up_before_idle),
        RL_TEST(loop_on_another_thread_follows_the_advances),
        RL_TEST(nested_runs_move_the_time_and_go_idle_by_the_same_rule),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
