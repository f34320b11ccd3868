/* test_statistics.c: RLRunLoopCopyStatistics. Invariants checked: a scripted
   run's counts are exact (passes, sleeps, each wake-up reason, callouts of
   each kind, timers fired and late), including the callouts of long batches
   (counted in groups) and of nested runs; the longest callout names the
   function that took the time (alone, or the group it ended); the size
   field bounds what is written, both ways; and reading from another thread
   while the loop runs is defined (ThreadSanitizer) and never goes
   backwards. */
#include <CRunLoop.h>
#include "rltest.h"

#include <pthread.h>
#include <stdatomic.h>

static RLRunLoopStatistics stats_of(RLRunLoopRef rl) {
    RLRunLoopStatistics s = {.size = sizeof s};
    RL_ASSERT(RLRunLoopCopyStatistics(rl, &s));
    RL_ASSERT_EQ_INT(s.size, sizeof s);
    return s;
}

static long g_blocks;
static void count_block(void *info) {
    (void)info;
    g_blocks++;
}

static void a_new_loop_has_counted_nothing(void) {
    RLRunLoopStatistics s = stats_of(RLRunLoopGetCurrent());
    RL_ASSERT_EQ_INT(s.passes, 0);
    RL_ASSERT_EQ_INT(s.sleeps, 0);
    for (int i = 0; i < RL_STATISTICS_SLOTS; i++) {
        RL_ASSERT_EQ_INT(s.wakeUps[i], 0);
        RL_ASSERT_EQ_INT(s.callouts[i], 0);
    }
    RL_ASSERT_EQ_INT(s.longestCalloutNanoseconds, 0);
    RL_ASSERT(s.longestCalloutFunction == NULL);
    RL_ASSERT_EQ_INT(s.timersFired, 0);
}

/* One polling pass: 3 queued functions, 2 signalled sources, 4 due timers,
   an observer of every activity (Entry, BeforeTimers, BeforeSources, Exit). */
static void a_polling_pass_counts_each_callout(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    rl_test_log log = {0};
    RLRunLoopObserverRef o = rl_test_log_observer(kRLRunLoopAllActivities, 0, &log);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    for (int i = 0; i < 3; i++) RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, count_block, NULL);
    RLRunLoopSourceRef sources[2];
    for (int i = 0; i < 2; i++) {
        sources[i] = rl_test_source0(0, rl_test_count_perform, NULL);
        RLRunLoopAddSource(rl, sources[i], kRLRunLoopDefaultMode);
        RLRunLoopSourceSignal(sources[i]);
    }
    RLRunLoopTimerRef timers[4];
    for (int i = 0; i < 4; i++)
        timers[i] = rl_test_add_timer(rl, kRLRunLoopDefaultMode, -1, 0, rl_test_count_fire, NULL);

    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RLRunLoopStatistics s = stats_of(rl);
    RL_ASSERT_EQ_INT(s.passes, 1);
    RL_ASSERT_EQ_INT(s.sleeps, 0);
    RL_ASSERT_EQ_INT(s.callouts[kRLRunLoopCalloutBlock], 3);
    RL_ASSERT_EQ_INT(s.callouts[kRLRunLoopCalloutSource0], 2);
    RL_ASSERT_EQ_INT(s.callouts[kRLRunLoopCalloutTimer], 4);
    RL_ASSERT_EQ_INT(s.callouts[kRLRunLoopCalloutObserver], 4);
    RL_ASSERT_EQ_INT(s.callouts[kRLRunLoopCalloutSource1], 0);
    RL_ASSERT_EQ_INT(s.timersFired, 4);
    RL_ASSERT_EQ_INT(g_blocks, 3);
    RL_ASSERT_EQ_INT(rl_test_performed, 2);
    RL_ASSERT_EQ_INT(rl_test_fired, 4);
    for (int i = 0; i < 4; i++) RLRelease(timers[i]);
    for (int i = 0; i < 2; i++) RLRelease(sources[i]);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
}

/* A batch longer than the callouts timed alone is counted in groups; every
   callout is counted once the batch ends, whatever its length. */
static void long_batches_count_every_callout(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    static const long sizes[] = {1, 7, 8, 9, 71, 72, 73, 200, 1000};
    long total = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        for (long i = 0; i < sizes[k]; i++) RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, count_block, NULL);
        RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
        total += sizes[k];
        RL_ASSERT_EQ_INT(stats_of(rl).callouts[kRLRunLoopCalloutBlock], total);
    }
    RL_ASSERT_EQ_INT(g_blocks, total);
    RL_ASSERT_EQ_INT(stats_of(rl).passes, sizeof sizes / sizeof *sizes);
}

static void nested_block(void *info) {
    (void)info;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, count_block, NULL);
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, count_block, NULL);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
}

static void nested_runs_count_their_callouts_too(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, nested_block, NULL);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    RLRunLoopStatistics s = stats_of(rl);
    RL_ASSERT_EQ_INT(s.callouts[kRLRunLoopCalloutBlock], 3);
    RL_ASSERT_EQ_INT(s.passes, 2);
    RL_ASSERT_EQ_INT(g_blocks, 2);
}

/* How far ahead a deadline must be for the first pass to reach its wait
   before it: 50 ms, longer under valgrind (RL_TEST_SLOW), where a pass can
   take that long and the wait would only poll. */
static double ahead_of_the_first_pass(void) {
    const char *slow = getenv("RL_TEST_SLOW");
    double k = slow ? atof(slow) : 1;
    return 0.05 * (k > 1 ? k : 1);
}

/* A timer ahead: one sleep, ended by the timer. */
static void a_sleep_ended_by_a_timer(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef t =
        rl_test_add_timer(rl, kRLRunLoopDefaultMode, ahead_of_the_first_pass(), 0, rl_test_stop_current, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunStopped);
    RLRunLoopStatistics s = stats_of(rl);
    RL_ASSERT_EQ_INT(s.passes, 1);
    RL_ASSERT_EQ_INT(s.sleeps, 1);
    RL_ASSERT_EQ_INT(s.wakeUps[kRLRunLoopWakeReasonTimer], 1);
    RL_ASSERT_EQ_INT(s.wakeUps[kRLRunLoopWakeReasonTimeout], 0);
    RL_ASSERT_EQ_INT(s.callouts[kRLRunLoopCalloutTimer], 1);
    RL_ASSERT_EQ_INT(s.timersFired, 1);
    RLRelease(t);
}

/* Nothing but a source that never fires: the run's own deadline ends it. */
static void a_sleep_ended_by_the_timeout(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, ahead_of_the_first_pass(), false),
                     kRLRunLoopRunTimedOut);
    RLRunLoopStatistics s = stats_of(rl);
    RL_ASSERT_EQ_INT(s.passes, 1);
    RL_ASSERT_EQ_INT(s.sleeps, 1);
    RL_ASSERT_EQ_INT(s.wakeUps[kRLRunLoopWakeReasonTimeout], 1);
    RL_ASSERT_EQ_INT(s.wakeUps[kRLRunLoopWakeReasonTimer], 0);
    RLRelease(keep);
}

static void a_sleep_ended_by_a_descriptor(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fds[2];
    RL_ASSERT(pipe(fds) == 0);
    rl_test_fd_info info = {.fd = fds[0]};
    RLRunLoopSourceRef s1 = rl_test_fd_source(&info);
    RLRunLoopAddSource(rl, s1, kRLRunLoopDefaultMode);
    RL_ASSERT(write(fds[1], "x", 1) == 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, true), kRLRunLoopRunHandledSource);
    RLRunLoopStatistics s = stats_of(rl);
    RL_ASSERT_EQ_INT(s.sleeps, 1);
    RL_ASSERT_EQ_INT(s.wakeUps[kRLRunLoopWakeReasonDescriptor], 1);
    RL_ASSERT_EQ_INT(s.callouts[kRLRunLoopCalloutSource1], 1);
    RLRunLoopSourceInvalidate(s1);
    RLRelease(s1);
    close(fds[0]);
    close(fds[1]);
}

static void *stop_when_sleeping(void *arg) {
    RLRunLoopRef rl = arg;
    rl_test_wait_sleeping(rl, 10);
    RLRunLoopStop(rl);
    RLRunLoopWakeUp(rl);
    return NULL;
}

static void a_sleep_ended_by_a_wake_up(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    pthread_t th;
    pthread_create(&th, NULL, stop_when_sleeping, rl);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunStopped);
    pthread_join(th, NULL);
    RLRunLoopStatistics s = stats_of(rl);
    RL_ASSERT_EQ_INT(s.passes, 1);
    RL_ASSERT_EQ_INT(s.sleeps, 1);
    RL_ASSERT_EQ_INT(s.wakeUps[kRLRunLoopWakeReasonWakeUp], 1);
    RLRelease(keep);
}

static void on_usr1(int sig) {
    (void)sig;
}

typedef struct {
    RLRunLoopRef rl;
    pthread_t loop_thread;
} signal_args;

/* A signal sent just before the loop enters epoll_wait does not interrupt
   it: signal until the loop counts one, then stop it. */
static void *interrupt_until_counted(void *arg) {
    signal_args *a = arg;
    rl_test_wait_sleeping(a->rl, 10);
    for (int i = 0; i < 500; i++) {
        RLRunLoopStatistics s = {.size = sizeof s};
        RLRunLoopCopyStatistics(a->rl, &s);
        if (s.wakeUps[kRLRunLoopWakeReasonSignal] > 0) break;
        pthread_kill(a->loop_thread, SIGUSR1);
        rl_test_sleep(0.01);
    }
    RLRunLoopStop(a->rl);
    RLRunLoopWakeUp(a->rl);
    return NULL;
}

static void a_signal_interrupts_a_sleep_that_resumes(void) {
    struct sigaction sa = {.sa_handler = on_usr1};
    sigaction(SIGUSR1, &sa, NULL);
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    signal_args a = {rl, pthread_self()};
    pthread_t th;
    pthread_create(&th, NULL, interrupt_until_counted, &a);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 60, false), kRLRunLoopRunStopped);
    pthread_join(th, NULL);
    RLRunLoopStatistics s = stats_of(rl);
    RL_ASSERT_EQ_INT(s.sleeps, 1); /* resumed, not a new sleep */
    RL_ASSERT_GE_INT(s.wakeUps[kRLRunLoopWakeReasonSignal], 1);
    RL_ASSERT_EQ_INT(s.wakeUps[kRLRunLoopWakeReasonWakeUp], 1);
    RL_ASSERT_EQ_INT(s.passes, 1);
    RLRelease(keep);
}

/* Timers added with a date 50 ms past fire at once, 50 ms late: beyond the
   1 ms floor, and beyond the tolerance of the one with none. */
static void timers_later_than_their_tolerance_are_counted(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef strict = rl_test_add_timer(rl, kRLRunLoopDefaultMode, -0.05, 0, rl_test_count_fire, NULL);
    RLRunLoopTimerRef tolerant = rl_test_add_timer(rl, kRLRunLoopDefaultMode, -0.05, 0, rl_test_count_fire, NULL);
    RLRunLoopTimerSetTolerance(tolerant, 1000);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    RLRunLoopStatistics s = stats_of(rl);
    RL_ASSERT_EQ_INT(s.timersFired, 2);
    RL_ASSERT_EQ_INT(s.timersFiredLate, 1);
    RL_ASSERT_GE_INT(s.latestTimerNanoseconds, 50000000);
    RLRelease(strict);
    RLRelease(tolerant);
}

static void slow_block(void *info) {
    (void)info;
    rl_test_sleep(0.03);
}

/* The coarse clock is a tick (at most 10 ms) behind at either end, so 30 ms
   measure at least 20. */
#define SLOW_NS_AT_LEAST 20000000

static void the_longest_callout_names_its_function(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, count_block, NULL);
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, slow_block, NULL);
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, count_block, NULL);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    RLRunLoopStatistics s = stats_of(rl);
    RL_ASSERT_GE_INT(s.longestCalloutNanoseconds, SLOW_NS_AT_LEAST);
    RL_ASSERT(s.longestCalloutFunction == (const void *)slow_block);
    RL_ASSERT_EQ_INT(s.longestCalloutKind, kRLRunLoopCalloutBlock);
    RL_ASSERT_EQ_INT(s.longestCalloutSpan, 1);
}

/* Deep in a long batch a callout is timed with its group: the measurement
   spans several callouts and names the group's last. */
static void a_slow_callout_deep_in_a_batch_is_timed_with_its_group(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    for (int i = 0; i < 100; i++)
        RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, i == 50 ? slow_block : count_block, NULL);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    RLRunLoopStatistics s = stats_of(rl);
    RL_ASSERT_GE_INT(s.longestCalloutNanoseconds, SLOW_NS_AT_LEAST);
    RL_ASSERT_EQ_INT(s.longestCalloutKind, kRLRunLoopCalloutBlock);
    RL_ASSERT_GE_INT(s.longestCalloutSpan, 2);
    RL_ASSERT_LE_INT(s.longestCalloutSpan, 64);
    RL_ASSERT_EQ_INT(s.callouts[kRLRunLoopCalloutBlock], 100);
}

static void slow_nested_run(void *info) {
    (void)info;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, slow_block, NULL);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
}

/* A callout that runs the loop is timed whole, and named. */
static void a_callout_that_runs_the_loop_is_timed_whole(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, slow_nested_run, NULL);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    RLRunLoopStatistics s = stats_of(rl);
    RL_ASSERT_GE_INT(s.longestCalloutNanoseconds, SLOW_NS_AT_LEAST);
    RL_ASSERT(s.longestCalloutFunction == (const void *)slow_nested_run);
    RL_ASSERT_EQ_INT(s.longestCalloutSpan, 1);
    RL_ASSERT_EQ_INT(s.callouts[kRLRunLoopCalloutBlock], 2);
}

static void bad_input_is_refused(void) {
    RLRunLoopStatistics s = {.size = sizeof s};
    RL_ASSERT(!RLRunLoopCopyStatistics(NULL, &s));
    RL_ASSERT(!RLRunLoopCopyStatistics(RLRunLoopGetCurrent(), NULL));
    s.size = offsetof(RLRunLoopStatistics, passes);
    RL_ASSERT(!RLRunLoopCopyStatistics(RLRunLoopGetCurrent(), &s));
    RL_ASSERT(RLRunLoopStatisticsCopyDescription(NULL) == NULL);
    RL_ASSERT_EQ_INT(strcmp(RLRunLoopWakeReasonGetName((RLRunLoopWakeReason)99), "unknown"), 0);
    RL_ASSERT_EQ_INT(strcmp(RLRunLoopCalloutKindGetName(kRLRunLoopCalloutMainQueue), "main queue"), 0);
}

/* An older caller's smaller struct: nothing written past its size. A newer
   caller's larger one: the fields this library does not know read 0. */
static void the_size_field_bounds_the_copy(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, count_block, NULL);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);

    unsigned char small[sizeof(RLRunLoopStatistics)];
    memset(small, 0xAB, sizeof small);
    size_t old_size = offsetof(RLRunLoopStatistics, sleeps);
    ((RLRunLoopStatistics *)small)->size = old_size;
    RL_ASSERT(RLRunLoopCopyStatistics(rl, (RLRunLoopStatistics *)small));
    RL_ASSERT_EQ_INT(((RLRunLoopStatistics *)small)->size, old_size);
    RL_ASSERT_EQ_INT(((RLRunLoopStatistics *)small)->passes, 1);
    for (size_t i = old_size; i < sizeof small; i++) RL_ASSERT_EQ_INT(small[i], 0xAB);

    unsigned char large[sizeof(RLRunLoopStatistics) + 64];
    memset(large, 0xAB, sizeof large);
    ((RLRunLoopStatistics *)large)->size = sizeof large;
    RL_ASSERT(RLRunLoopCopyStatistics(rl, (RLRunLoopStatistics *)large));
    RL_ASSERT_EQ_INT(((RLRunLoopStatistics *)large)->size, sizeof(RLRunLoopStatistics));
    RL_ASSERT_EQ_INT(((RLRunLoopStatistics *)large)->callouts[kRLRunLoopCalloutBlock], 1);
    for (size_t i = sizeof(RLRunLoopStatistics); i < sizeof large; i++) RL_ASSERT_EQ_INT(large[i], 0);
}

static void the_description_shows_the_counts(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, slow_block, NULL);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    RLRunLoopStatistics s = stats_of(rl);
    char *text = RLRunLoopStatisticsCopyDescription(&s);
    RL_ASSERT(text != NULL);
    RL_ASSERT(strstr(text, "passes 1, sleeps 0") != NULL);
    RL_ASSERT(strstr(text, "block 1") != NULL);
    RL_ASSERT(strstr(text, "longest callout: ") != NULL);
    RL_ASSERT(strstr(text, " ms, block 0x") != NULL);
    free(text);
}

/* ---- read from another thread while the loop runs ------------------------ */

static atomic_bool g_reading_done;

static void requeue(void *info) {
    RLRunLoopRef rl = info;
    if (atomic_load(&g_reading_done)) {
        RLRunLoopStop(rl);
        return;
    }
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, requeue, rl);
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, count_block, NULL);
    RLRunLoopWakeUp(rl); /* queued work does not wake the loop: its next pass would sleep */
}

static void *read_while_running(void *arg) {
    RLRunLoopRef rl = arg;
    uint64_t last_passes = 0, last_blocks = 0;
    for (int i = 0; i < 2000; i++) {
        RLRunLoopStatistics s = {.size = sizeof s};
        RL_ASSERT(RLRunLoopCopyStatistics(rl, &s));
        RL_ASSERT(s.passes >= last_passes);
        RL_ASSERT(s.callouts[kRLRunLoopCalloutBlock] >= last_blocks);
        last_passes = s.passes;
        last_blocks = s.callouts[kRLRunLoopCalloutBlock];
    }
    atomic_store(&g_reading_done, true);
    return NULL;
}

static void another_thread_reads_while_the_loop_runs(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, requeue, rl);
    pthread_t th;
    pthread_create(&th, NULL, read_while_running, rl);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 60, false), kRLRunLoopRunStopped);
    pthread_join(th, NULL);
    RLRunLoopStatistics s = stats_of(rl);
    RL_ASSERT_EQ_INT(s.callouts[kRLRunLoopCalloutBlock], 2 * g_blocks + 1);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(a_new_loop_has_counted_nothing),
        RL_TEST(a_polling_pass_counts_each_callout),
        RL_TEST(long_batches_count_every_callout),
        RL_TEST(nested_runs_count_their_callouts_too),
        RL_TEST(a_sleep_ended_by_a_timer),
        RL_TEST(a_sleep_ended_by_the_timeout),
        RL_TEST(a_sleep_ended_by_a_descriptor),
        RL_TEST(a_sleep_ended_by_a_wake_up),
        RL_TEST(a_signal_interrupts_a_sleep_that_resumes),
        RL_TEST(timers_later_than_their_tolerance_are_counted),
        RL_TEST(the_longest_callout_names_its_function),
        RL_TEST(a_slow_callout_deep_in_a_batch_is_timed_with_its_group),
        RL_TEST(a_callout_that_runs_the_loop_is_timed_whole),
        RL_TEST(bad_input_is_refused),
        RL_TEST(the_size_field_bounds_the_copy),
        RL_TEST(the_description_shows_the_counts),
        RL_TEST(another_thread_reads_while_the_loop_runs),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
