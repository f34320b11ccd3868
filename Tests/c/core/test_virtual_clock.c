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
#include <poll.h>
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
static RLRunLoopTimerRef g_next_attempt; /* held by the loop */
static void retry(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLAbsoluteTime now = RLRunLoopGetCurrentTime(rl);
    g_attempt_at[g_attempts++] = now;
    RLRunLoopTimerRef next = rl_test_timer(now + (double)(2 << (g_attempts - 1)), 0, retry, NULL);
    RLRunLoopAddTimer(rl, next, kRLRunLoopDefaultMode);
    RLRelease(next);
    g_next_attempt = next;
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
    RLRunLoopTimerInvalidate(g_next_attempt);
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

/* ---- switching clocks ---- */

static bool g_switched_in_callout = true;
static void try_to_switch(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    g_switched_in_callout = RLRunLoopUseRealClock(rl) || RLRunLoopUseManualClock(rl, 0);
}

static void *switch_from_elsewhere(void *arg) {
    RLRunLoopRef rl = arg;
    return (void *)(intptr_t)(RLRunLoopUseManualClock(rl, 0) || RLRunLoopUseRealClock(rl));
}

/* Only the loop's own thread switches, and never while a run is active. */
static void switching_is_refused_inside_a_run_and_from_other_threads(void) {
    RLRunLoopRef rl = manual_loop(0);
    RLRunLoopTimerRef t = rl_test_timer(1, 0, try_to_switch, NULL);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RL_ASSERT(RLRunLoopClockAdvance(rl, 1));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunFinished);
    RL_ASSERT(!g_switched_in_callout);
    RL_ASSERT(RLRunLoopHasManualClock(rl));
    pthread_t th;
    void *switched = (void *)1;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, switch_from_elsewhere, rl), 0);
    pthread_join(th, &switched);
    RL_ASSERT(switched == NULL);
    RL_ASSERT(RLRunLoopHasManualClock(rl));
    RLRelease(t);
}

/* A switch keeps every timer's date and the order of equal dates; the
   deadlines follow the new clock. Back on real time they are due by the
   wall clock (real time: one short timer). */
static void switching_clocks_keeps_dates_and_order(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLAbsoluteTime real = RLAbsoluteTimeGetCurrent();
    RLRunLoopTimerRef t[4];
    for (long i = 0; i < 3; i++) {
        t[i] = rl_test_indexed_timer(real + 1000, i);
        RLRunLoopAddTimer(rl, t[i], kRLRunLoopDefaultMode);
    }
    RLRunLoopTimerSetNextFireDate(t[0], real + 1000); /* after 1 and 2 now */
    t[3] = rl_test_indexed_timer(real + 500, 3);
    RLRunLoopAddTimer(rl, t[3], kRLRunLoopDefaultMode);
    RL_ASSERT(RLRunLoopUseManualClock(rl, real + 400));
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetNextFireDate(t[3]), real + 500);
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, kRLRunLoopDefaultMode), real + 500);
    RL_ASSERT(RLRunLoopClockAdvance(rl, 99.9));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunIdle);
    RL_ASSERT_EQ_INT(rl_test_callouts.n, 0);
    RL_ASSERT(RLRunLoopClockSetTime(rl, real + 500));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunIdle);
    RL_ASSERT_LOG(&rl_test_callouts, 3);
    /* Restarted at 0: the rest is due 16 years on (dates further ahead are
       clamped, as always); back to where it was: due. */
    RL_ASSERT(RLRunLoopUseManualClock(rl, 0));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunIdle);
    RL_ASSERT(RLRunLoopUseManualClock(rl, real + 1000));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunFinished);
    RL_ASSERT_LOG(&rl_test_callouts, 3, 1, 2, 0);
    /* On real time again, a timer 20 ms ahead fires by the wall clock. */
    RL_ASSERT(RLRunLoopUseRealClock(rl));
    RLRunLoopTimerRef soon = rl_test_indexed_timer(RLAbsoluteTimeGetCurrent() + 0.02, 4);
    RLRunLoopAddTimer(rl, soon, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 20, false), kRLRunLoopRunFinished);
    RL_ASSERT_LOG(&rl_test_callouts, 3, 1, 2, 0, 4);
    for (int i = 0; i < 4; i++) RLRelease(t[i]);
    RLRelease(soon);
}

/* ---- timers between a real and a manual loop ---- */

static RLThreadRef start_real_loop_thread(RLRunLoopRef *loop) {
    RLThreadRef th = RLThreadCreate("real");
    RL_ASSERT(RLThreadStart(th));
    *loop = RLThreadGetRunLoop(th);
    return th;
}

static atomic_int g_real_fires;
static void count_real_fire(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    atomic_fetch_add(&g_real_fires, 1);
}

/* A timer is in one loop at a time, whatever its clock; removed from one
   and added to the other, it keeps its date and is due by that loop's
   time. */
static void timer_moved_between_a_manual_and_a_real_loop_keeps_its_date(void) {
    RLRunLoopRef rl = manual_loop(0);
    RLRunLoopRef real_loop;
    RLThreadRef th = start_real_loop_thread(&real_loop);
    /* Dated 10 on the manual clock: added to both, the real loop ignores it. */
    RLRunLoopTimerRef t = rl_test_timer(10, 0, count_real_fire, NULL);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(real_loop, t, kRLRunLoopDefaultMode);
    RL_ASSERT(!RLRunLoopContainsTimer(real_loop, t, kRLRunLoopDefaultMode));
    /* Moved to the real loop: date 10 is long past on the wall clock. */
    RLRunLoopRemoveTimer(rl, t, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(real_loop, t, kRLRunLoopDefaultMode);
    rl_test_wait_for(&g_real_fires, 1, 20);
    RL_ASSERT_EQ_INT(atomic_load(&g_real_fires), 1);
    /* The other way: a real loop's timer dated an hour ahead joins the
       manual loop and is due when its time gets there. */
    RLAbsoluteTime in_an_hour = RLAbsoluteTimeGetCurrent() + 3600;
    RL_ASSERT(RLRunLoopClockSetTime(rl, in_an_hour - 7200));
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunIdle); /* caught up (a run of an empty mode would not) */
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
    static seen_rec r;
    RLRunLoopTimerRef u = rl_test_timer(in_an_hour, 0, note_time, &r);
    RLRunLoopAddTimer(real_loop, u, kRLRunLoopDefaultMode);
    RLRunLoopRemoveTimer(real_loop, u, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(rl, u, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, kRLRunLoopDefaultMode), in_an_hour);
    RL_ASSERT(RLRunLoopClockSetTime(rl, in_an_hour - 1));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunIdle);
    RL_ASSERT_EQ_INT(r.fired, 0);
    RL_ASSERT(RLRunLoopClockSetTime(rl, in_an_hour));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(r.fired, 1);
    /* The loop's time counts nanoseconds; a date near 8e8 s has a tenth of a
       microsecond's resolution as a double, so the two readings agree to that. */
    RL_ASSERT_LE_DBL(fabs(r.at[0] - in_an_hour), 1e-6);
    RLThreadStop(th);
    RLThreadRelease(th);
    RLRelease(t);
    RLRelease(u);
}

/* A repeating timer moved by its own callout from a manual loop to a real
   one goes on there on the wall clock (real time: it fires a few times);
   moved back by a later callout, it goes on on the manual clock from the
   date it fired for, on its grid. */
typedef struct {
    RLRunLoopRef manual, real;
    atomic_int on_manual, on_real;
    RLAbsoluteTime fired_for; /* its date when the last real callout moved it back */
    RLAbsoluteTime manual_at[4];
} bounce_clock_rec;
static bounce_clock_rec g_bc;

static void bounce_between_clocks(RLRunLoopTimerRef t, void *info) {
    (void)info;
    RLRunLoopRef cur = RLRunLoopGetCurrent();
    if (cur == g_bc.manual) {
        int n = atomic_fetch_add(&g_bc.on_manual, 1);
        if (n < 4) g_bc.manual_at[n] = RLRunLoopGetCurrentTime(cur);
        if (n > 0) return;
        RLRunLoopRemoveTimer(cur, t, kRLRunLoopDefaultMode);
        RLRunLoopAddTimer(g_bc.real, t, kRLRunLoopDefaultMode);
        return;
    }
    if (atomic_fetch_add(&g_bc.on_real, 1) + 1 < 3) return;
    g_bc.fired_for = RLRunLoopTimerGetNextFireDate(t);
    RLRunLoopRemoveTimer(cur, t, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(g_bc.manual, t, kRLRunLoopDefaultMode);
}

static void repeating_timer_moved_across_clocks_by_its_callout_goes_on_in_each(void) {
    RLAbsoluteTime start = RLAbsoluteTimeGetCurrent();
    g_bc.manual = manual_loop(start);
    RLThreadRef th = start_real_loop_thread(&g_bc.real);
    RLRunLoopTimerRef t = rl_test_timer(start + 0.01, 0.01, bounce_between_clocks, NULL);
    RLRunLoopAddTimer(g_bc.manual, t, kRLRunLoopDefaultMode);
    RLRunLoopSourceRef keep = rl_test_keep_mode(g_bc.manual, kRLRunLoopDefaultMode);
    RL_ASSERT(RLRunLoopClockAdvance(g_bc.manual, 0.01));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunIdle);
    RL_ASSERT_EQ_INT(atomic_load(&g_bc.on_manual), 1);
    /* Three fires on the wall clock, 10 ms apart: ~30 ms, bounded at 20 s. */
    double end = rl_test_now() + 20;
    while (!RLRunLoopContainsTimer(g_bc.manual, t, kRLRunLoopDefaultMode) && rl_test_now() < end) rl_test_sleep(0.001);
    RL_ASSERT_EQ_INT(atomic_load(&g_bc.on_real), 3);
    /* Back on the manual loop, whose time is still start + 0.01: the timer
       goes on from the date it fired for, one interval on, and fires on
       each grid point the clock passes. */
    RLAbsoluteTime next = RLRunLoopTimerGetNextFireDate(t);
    RL_ASSERT(fabs(next - (g_bc.fired_for + 0.01)) < 1e-6);
    RL_ASSERT(RLRunLoopClockSetTime(g_bc.manual, next + 0.015));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunIdle);
    RL_ASSERT_EQ_INT(atomic_load(&g_bc.on_manual), 3);
    RL_ASSERT(fabs(g_bc.manual_at[1] - next) < 1e-6);
    RL_ASSERT(fabs(g_bc.manual_at[2] - (next + 0.01)) < 1e-6);
    RLRunLoopTimerInvalidate(t);
    RLThreadStop(th);
    RLThreadRelease(th);
    RLRelease(t);
    RLRelease(keep);
}

/* ---- the rest of the library on the loop's time ---- */

static int g_delayed_runs;
static void delayed_work(void *info) {
    (void)info;
    g_delayed_runs++;
}

static void perform_after_delay_runs_when_the_clock_gets_there(void) {
    RLRunLoopRef rl = manual_loop(1000);
    RLPerformRequestRef r = RLRunLoopPerformRequestAfterDelay(rl, 5, NULL, 0, NULL, delayed_work, NULL, NULL);
    RL_ASSERT(r != NULL);
    RL_ASSERT(RLRunLoopClockAdvance(rl, 4.9));
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1e10, false);
    RL_ASSERT_EQ_INT(g_delayed_runs, 0);
    RL_ASSERT_EQ_INT(RLPerformRequestGetStatus(r), kRLPerformRequestPending);
    RL_ASSERT(RLRunLoopClockAdvance(rl, 0.1));
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1e10, false);
    RL_ASSERT_EQ_INT(g_delayed_runs, 1);
    RL_ASSERT_EQ_INT(RLPerformRequestGetStatus(r), kRLPerformRequestDone);
    RLPerformRequestRelease(r);
}

/* Each task takes 4 ms of the loop's time (it advances the clock): a 10 ms
   slice runs three of them per idle pass. */
static int g_idle_pass, g_task_pass[9], g_tasks_run;
static void count_idle_pass(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
    g_idle_pass++;
}
static void four_ms_task(void *info) {
    (void)info;
    g_task_pass[g_tasks_run++] = g_idle_pass;
    RL_ASSERT(RLRunLoopClockAdvance(RLRunLoopGetCurrent(), 0.004));
}

static void idle_slices_are_measured_on_the_loop_time(void) {
    RLRunLoopRef rl = manual_loop(0);
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopBeforeWaiting, true, 0, count_idle_pass, NULL);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RLIdleQueueRef q = RLIdleQueueCreate(rl, kRLRunLoopDefaultMode, 0.01);
    for (int i = 0; i < 9; i++) RLIdleQueueSubmit(q, four_ms_task, NULL, NULL);
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(g_tasks_run, 9);
    for (int i = 0; i < 9; i++) RL_ASSERT_EQ_INT(g_task_pass[i], 1 + i / 3);
    RL_ASSERT(fabs(RLRunLoopGetCurrentTime(rl) - 0.036) < 1e-9);
    RLIdleQueueRelease(q);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
}

/* A hang monitor on the loop's time: a callout that advances the clock by
   3 s (its work "took" 3 s) is a stall of 3 s against a 1 s threshold. A
   callout that takes real time but no clock time is not. The callout waits
   (real time, bounded) for the report, so it is made during the stall. */
typedef struct {
    atomic_int reports;
    _Atomic double duration;
} hang_rec;
static hang_rec g_hang;
static void note_hang(RLHangMonitorRef m, const RLHangReport *r, void *info) {
    (void)m;
    (void)info;
    atomic_store(&g_hang.duration, r->duration);
    atomic_fetch_add(&g_hang.reports, 1);
}

static void take_three_seconds(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    RL_ASSERT(RLRunLoopClockAdvance(RLRunLoopGetCurrent(), 3));
    rl_test_wait_for(&g_hang.reports, 1, 20);
}

static void take_real_time_only(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    rl_test_sleep(0.05);
}

static void hang_monitor_measures_stalls_on_the_loop_time(void) {
    RLRunLoopRef rl = manual_loop(0);
    RLHangMonitorRef m = RLHangMonitorCreate(rl, 1, note_hang, NULL);
    RL_ASSERT(RLHangMonitorStart(m));
    RLRunLoopTimerRef quiet = rl_test_timer(1, 0, take_real_time_only, NULL);
    RLRunLoopAddTimer(rl, quiet, kRLRunLoopDefaultMode);
    RL_ASSERT(RLRunLoopClockAdvance(rl, 1));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(atomic_load(&g_hang.reports), 0); /* 50 ms of real time is no stall here */
    RLRunLoopTimerRef slow = rl_test_timer(2, 0, take_three_seconds, NULL);
    RLRunLoopAddTimer(rl, slow, kRLRunLoopDefaultMode);
    RL_ASSERT(RLRunLoopClockAdvance(rl, 1));
    RL_ASSERT_EQ_INT(run_default(), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(atomic_load(&g_hang.reports), 1);
    RL_ASSERT_EQ_INT(RLHangMonitorGetStallCount(m), 1);
    RL_ASSERT_GE_DBL(atomic_load(&g_hang.duration), 2.99);
    RL_ASSERT_LE_DBL(atomic_load(&g_hang.duration), 3.01);
    RLHangMonitorRelease(m);
    RLRelease(quiet);
    RLRelease(slow);
}

/* A host embedding a manual loop sleeps until the clock is advanced past a
   timer: Prepare's timeout is -1 until then, 0 after (the descriptor is
   readable), and the host's polling pass fires it. */
static void embedded_manual_loop_wakes_its_host_only_for_advanced_timers(void) {
    RLRunLoopRef rl = manual_loop(0);
    static seen_rec r;
    RLRunLoopTimerRef t = add_noting_timer(rl, 5, 0, &r);
    int fd = RLRunLoopEmbedGetFD(rl);
    RL_ASSERT(fd >= 0);
    int timeout = 0;
    RL_ASSERT(!RLRunLoopEmbedPrepare(rl, kRLRunLoopDefaultMode, &timeout));
    RL_ASSERT_EQ_INT(timeout, -1);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    RL_ASSERT_EQ_INT(poll(&p, 1, 0), 0);
    RL_ASSERT(RLRunLoopClockAdvance(rl, 5));
    RL_ASSERT(RLRunLoopEmbedPrepare(rl, kRLRunLoopDefaultMode, &timeout));
    RL_ASSERT_EQ_INT(timeout, 0);
    RL_ASSERT_EQ_INT(poll(&p, 1, 0), 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(r.fired, 1);
    RL_ASSERT_EQ_DBL(r.at[0], 5);
    RLRunLoopEmbedCancel(rl);
    RLRelease(t);
}

/* A manual loop's description shows its two readings, and timers' dates
   from the loop's time. */
static void description_shows_the_manual_clock(void) {
    RLRunLoopRef rl = manual_loop(5);
    RLRunLoopTimerRef t = rl_test_timer(6, 0, rl_test_count_fire, NULL);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RL_ASSERT(RLRunLoopClockAdvance(rl, 0.5));
    char *d = RLCopyDescription(rl);
    RL_ASSERT(d != NULL);
    RL_ASSERT(strstr(d, "manual clock = {loop time = 5.000000, clock time = 5.500000}") != NULL);
    RL_ASSERT(strstr(d, "(+1.000000 s from now)") != NULL);
    free(d);
    RL_ASSERT(RLRunLoopUseRealClock(rl));
    d = RLCopyDescription(rl);
    RL_ASSERT(strstr(d, "manual clock") == NULL);
    free(d);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
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
        RL_TEST(switching_is_refused_inside_a_run_and_from_other_threads),
        RL_TEST(switching_clocks_keeps_dates_and_order),
        RL_TEST(timer_moved_between_a_manual_and_a_real_loop_keeps_its_date),
        RL_TEST(repeating_timer_moved_across_clocks_by_its_callout_goes_on_in_each),
        RL_TEST(perform_after_delay_runs_when_the_clock_gets_there),
        RL_TEST(idle_slices_are_measured_on_the_loop_time),
        RL_TEST(hang_monitor_measures_stalls_on_the_loop_time),
        RL_TEST(embedded_manual_loop_wakes_its_host_only_for_advanced_timers),
        RL_TEST(description_shows_the_manual_clock),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
