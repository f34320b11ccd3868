/*
 * test_wait.c: the sleep itself. Signals do not end it, a wake-up is seen only
 * by the run it was sent to, and modes cost no file descriptors of their own.
 */
#include <CRunLoop.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include "rltest.h"

/* ---- signals ------------------------------------------------------------- */

static volatile sig_atomic_t signals_seen;
static void count_signal(int sig) {
    (void)sig;
    signals_seen++;
}

typedef struct {
    pthread_t target;
    _Atomic int stop;
} signaller;

/* About 1 kHz of SIGUSR1 at the loop's thread. */
static void *send_signals(void *arg) {
    signaller *s = arg;
    while (!atomic_load(&s->stop)) {
        pthread_kill(s->target, SIGUSR1);
        rl_test_sleep(0.001);
    }
    return NULL;
}

/* SIGUSR1 counts into signals_seen (and interrupts whatever call it hits). */
static void install_sigusr1_counter(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = count_signal;
    sigaction(SIGUSR1, &sa, NULL);
}

/* Runs the default mode for `seconds` while another thread sends SIGUSR1 at
   this one. */
static RLRunLoopRunResult run_default_mode_under_signals(double seconds) {
    signaller s = {.target = pthread_self()};
    pthread_t t;
    pthread_create(&t, NULL, send_signals, &s);
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, seconds, false);
    atomic_store(&s.stop, 1);
    pthread_join(t, NULL);
    return r;
}

static void signals_do_not_end_the_sleep(void) {
    install_sigusr1_counter();
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    rl_test_log log = {0};
    RLRunLoopObserverRef o = rl_test_log_observer(kRLRunLoopAfterWaiting, 0, &log);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);

    RLRunLoopRunResult r = run_default_mode_under_signals(0.5);

    RL_ASSERT_EQ_INT(r, kRLRunLoopRunTimedOut);
    RL_ASSERT_GE_INT(signals_seen, 20); /* the signals did arrive during the sleep */
    RL_ASSERT_EQ_INT(log.n, 1);         /* one sleep, ended by the timeout */
    RLRunLoopRemoveObserver(rl, o, kRLRunLoopDefaultMode);
    RLRelease(o);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
}

/* A timer in a run whose sleep is interrupted by signals still fires on its
   date, once. */
static int timer_fired;
static void note_timer(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    timer_fired++;
}

static void signals_do_not_disturb_timers(void) {
    install_sigusr1_counter();
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    double start = rl_test_now();
    RLRunLoopTimerRef tm = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.2, 0, note_timer, NULL);
    RLRunLoopRunResult r = run_default_mode_under_signals(0.5);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunFinished); /* the one-shot timer left the mode empty */
    RL_ASSERT_EQ_INT(timer_fired, 1);
    RL_ASSERT_GE_DBL(rl_test_now() - start, 0.2);
    RLRelease(tm);
}

/* ---- wake-ups ------------------------------------------------------------ */

typedef struct {
    RLRunLoopRef rl;
} stopper;

static void *stop_when_sleeping(void *arg) {
    stopper *s = arg;
    rl_test_wait_sleeping(s->rl, 10);
    RLRunLoopStop(s->rl);
    return NULL;
}

/* A wake-up sent to a run in mode A must not end a later sleep in mode B. */
static void wake_up_is_seen_only_by_its_run(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef a = rl_test_keep_mode(rl, "A");
    RLRunLoopSourceRef b = rl_test_keep_mode(rl, "B");
    /* B has been run (and slept) before, so anything it keeps is in place. */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("B", 0.01, false), kRLRunLoopRunTimedOut);
    rl_test_log log = {0};
    RLRunLoopObserverRef o = rl_test_log_observer(kRLRunLoopAfterWaiting, 0, &log);
    RLRunLoopAddObserver(rl, o, "B");

    for (int i = 0; i < 3; i++) {
        stopper st = {rl};
        pthread_t t;
        pthread_create(&t, NULL, stop_when_sleeping, &st);
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode("A", 10, false), kRLRunLoopRunStopped);
        pthread_join(t, NULL);
    }
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("B", 0.3, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(log.n, 1); /* one sleep, ended by the timeout */

    RLRunLoopRemoveObserver(rl, o, "B");
    RLRelease(o);
    RLRunLoopSourceInvalidate(a);
    RLRunLoopSourceInvalidate(b);
    RLRelease(a);
    RLRelease(b);
}

/* ---- modes and file descriptors ------------------------------------------ */

static void modes_hold_no_file_descriptors(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.001, false), kRLRunLoopRunTimedOut);
    int before = rl_test_open_fds();
    int n = (int)rl_test_scaled(2000);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "private-%d", i);
        RLRunLoopSourceRef s = rl_test_keep_mode(rl, name);
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(name, 0.0001, false), kRLRunLoopRunTimedOut);
        RLRunLoopRemoveSource(rl, s, name);
        RLRelease(s);
    }
    int after = rl_test_open_fds();
    RL_ASSERT_LE_INT(after - before, 2);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
}

/* Thousands of modes do not make waking a sleeping loop do more work: the
   loop still wakes and stops (timing is the benchmark's job). */
static void wake_up_with_many_modes(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int n = (int)rl_test_scaled(3000);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    int before = rl_test_open_fds();
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "m-%d", i);
        RLRunLoopSourceRef s = rl_test_keep_mode(rl, name);
        RLRelease(s); /* stays in the mode */
    }
    RL_ASSERT_LE_INT(rl_test_open_fds() - before, 2);
    stopper st = {rl};
    pthread_t t;
    pthread_create(&t, NULL, stop_when_sleeping, &st);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunStopped);
    pthread_join(t, NULL);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(signals_do_not_end_the_sleep),    RL_TEST(signals_do_not_disturb_timers),
        RL_TEST(wake_up_is_seen_only_by_its_run), RL_TEST(modes_hold_no_file_descriptors),
        RL_TEST(wake_up_with_many_modes),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
