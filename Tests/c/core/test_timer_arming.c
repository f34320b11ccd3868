/*
 * test_timer_arming.c: how often the loop programs its timerfd. A run that
 * returns after each handled source and is entered again (Foundation's
 * `run(mode:before:)` in a loop) asks for a deadline a little later each
 * time; that must not cost a timerfd_settime per entry. And the deadlines
 * still hold: an earlier one is armed at once, a kept earlier expiry only
 * wakes the loop early, never late.
 *
 * timerfd_settime is replaced in this program (it counts, notes the
 * expiry, then makes the system call itself), so every call the core makes
 * is seen, and what it armed for.
 */
#include <CRunLoop.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include "rltest.h"

static atomic_long settime_calls;
static _Atomic int64_t armed_for_ns; /* the last expiry armed (CLOCK_MONOTONIC ns); 0: disarmed */

int timerfd_settime(int fd, int flags, const struct itimerspec *value, struct itimerspec *old) {
    atomic_fetch_add(&settime_calls, 1);
    atomic_store(&armed_for_ns, (int64_t)value->it_value.tv_sec * 1000000000 + value->it_value.tv_nsec);
    return (int)syscall(SYS_timerfd_settime, fd, flags, value, old);
}

typedef struct {
    int fds[2];
    long handled;
} pipe_source;

static int pipe_read_end(void *info) {
    return ((pipe_source *)info)->fds[0];
}

static void drain_pipe(void *info) {
    pipe_source *p = info;
    char buf[64];
    while (read(p->fds[0], buf, sizeof buf) > 0) {}
    p->handled++;
}

static void make_readable(pipe_source *p) {
    RL_ASSERT_EQ_INT(write(p->fds[1], "x", 1), 1);
}

static RLRunLoopSourceRef add_pipe_source(pipe_source *p) {
    RL_ASSERT_EQ_INT(pipe2(p->fds, O_NONBLOCK | O_CLOEXEC), 0);
    RLRunLoopSourceRef s = rl_test_source1(0, pipe_read_end, drain_pipe, p);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, kRLRunLoopDefaultMode);
    return s;
}

static void remove_pipe_source(RLRunLoopSourceRef s, pipe_source *p) {
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    close(p->fds[0]);
    close(p->fds[1]);
}

/* 1000 entries of a 10 s run, each returning after the source it handled. */
static void reentered_run_does_not_reprogram_the_timer_each_time(void) {
    pipe_source p = {0};
    RLRunLoopSourceRef s = add_pipe_source(&p);
    const long entries = 1000;
    long before = atomic_load(&settime_calls);
    for (long i = 0; i < entries; i++) {
        make_readable(&p);
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10.0, true), kRLRunLoopRunHandledSource);
    }
    long calls = atomic_load(&settime_calls) - before;
    RL_ASSERT_EQ_INT(p.handled, entries);
    /* One arming, plus one each time the kept expiry falls too far behind
       (a run of this length on a loaded machine: a few at most). */
    RL_ASSERT_LE_INT(calls, 20);
    remove_pipe_source(s, &p);
}

/* Ten entries of a 10 s run, each returning after p's source: the loop is
   left armed far ahead. */
static void run_long_runs(pipe_source *p) {
    for (int i = 0; i < 10; i++) {
        make_readable(p);
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10.0, true), kRLRunLoopRunHandledSource);
    }
}

/* Fails unless a run of `seconds` times out, after at least that long and
   at most `limit` seconds. */
static void assert_run_ends_on_its_deadline(double seconds, double limit) {
    double t0 = rl_test_now();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, seconds, true), kRLRunLoopRunTimedOut);
    double took = rl_test_now() - t0;
    RL_ASSERT_GE_DBL(took, seconds);
    RL_ASSERT_LE_DBL(took, limit);
}

/* After long runs armed far ahead, a short run still ends on its deadline. */
static void earlier_deadline_is_armed_at_once(void) {
    pipe_source p = {0};
    RLRunLoopSourceRef s = add_pipe_source(&p);
    run_long_runs(&p);
    assert_run_ends_on_its_deadline(0.05, 5.0);
    remove_pipe_source(s, &p);
}

/* A kept expiry earlier than the run's deadline wakes the loop early; the
   run goes back to sleep and still ends at its own deadline, not before. */
static void kept_earlier_expiry_does_not_end_a_run_early(void) {
    pipe_source p = {0};
    RLRunLoopSourceRef s = add_pipe_source(&p);
    make_readable(&p);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.3, true), kRLRunLoopRunHandledSource);
    assert_run_ends_on_its_deadline(0.301, 10.0);
    remove_pipe_source(s, &p);
}

/* A timer added while the loop is armed far ahead fires on time. */
static void timer_after_long_runs_fires_on_time(void) {
    pipe_source p = {0};
    RLRunLoopSourceRef s = add_pipe_source(&p);
    run_long_runs(&p);
    rl_test_fire_note note = {0};
    double t0 = rl_test_now();
    RLRunLoopTimerRef t =
        rl_test_add_timer(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, 0.05, 0, rl_test_note_fire, &note);
    while (note.fired == 0 && rl_test_now() - t0 < 10) RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10.0, true);
    RL_ASSERT_GE_DBL(note.mono_at - t0, 0.05);
    RL_ASSERT_LE_DBL(note.mono_at - t0, 5.0);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
    remove_pipe_source(s, &p);
}

static int64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* What the loop arms its timerfd for when a host is about to sleep in `mode`
   (RLRunLoopEmbedPrepare arms it for the mode's wake-up, nothing runs). */
static int64_t wake_up_armed(RLRunLoopRef rl, RLRunLoopMode mode) {
    RLRunLoopEmbedPrepare(rl, mode, NULL);
    RLRunLoopEmbedCancel(rl);
    return atomic_load(&armed_for_ns);
}

static void never_runs(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
}

static RLRunLoopTimerRef add_timer_at(RLRunLoopRef rl, RLRunLoopMode mode, RLAbsoluteTime date) {
    RLRunLoopTimerRef t = rl_test_timer(date, 0, never_runs, NULL);
    RLRunLoopAddTimer(rl, t, mode);
    return t;
}

static void invalidate_and_release(RLRunLoopTimerRef t) {
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
}

/* A timer without tolerance may be held past its date, to share a wake-up
   with the timers after it, by at most an eighth of how far ahead of its
   date it was added (capped), or the thread's timer slack (50 us until the
   loop first runs), whichever is larger. Timer A, added about 300 us ahead,
   may so wait about 50 us; a neighbour B just past both is not worth waiting
   for: the loop must wake for A at A's date. The bound is read from the
   clock just before the add (the add's own "now" is no earlier), and A's
   deadline is what the loop arms for A alone; B's date is placed 10 us past
   the bound, so the check has no timing in it. Measured on a clock a tick
   coarse, A's distance ahead (and so its leeway) came out up to a tick too
   large: B's date fell inside A's window and the loop slept until B's. */
static void timer_is_not_held_past_its_leeway_for_a_neighbour(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    const int64_t slack_ns = 50000, margin_ns = 10000;
    for (int i = 0; i < 20; i++) {
        char mode[32];
        snprintf(mode, sizeof mode, "leeway.%d", i);
        RLAbsoluteTime date_a = RLAbsoluteTimeGetCurrent() + 300e-6;
        int64_t before_add = mono_ns();
        RLRunLoopTimerRef a = add_timer_at(rl, mode, date_a);
        int64_t deadline_a = wake_up_armed(rl, mode); /* a lone timer wakes the loop at its date */
        int64_t leeway_bound = (deadline_a - before_add) / 8;
        int64_t window = leeway_bound > slack_ns ? leeway_bound : slack_ns;
        RLRunLoopTimerRef b = add_timer_at(rl, mode, date_a + (double)(window + margin_ns) * 1e-9);
        RL_ASSERT_EQ_INT(wake_up_armed(rl, mode), deadline_a);
        invalidate_and_release(a);
        invalidate_and_release(b);
        wake_up_armed(rl, mode); /* disarms: the next round's expiry is armed afresh */
    }
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(reentered_run_does_not_reprogram_the_timer_each_time), RL_TEST(earlier_deadline_is_armed_at_once),
        RL_TEST(kept_earlier_expiry_does_not_end_a_run_early),         RL_TEST(timer_after_long_runs_fires_on_time),
        RL_TEST(timer_is_not_held_past_its_leeway_for_a_neighbour),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
