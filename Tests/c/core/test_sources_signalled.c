/* test_sources_signalled.c: which signalled version-0 sources a pass
   performs, and that a pass costs what is signalled, not what is registered.
   The loop keeps its signalled sources aside; these tests pin down that it
   performs exactly what a full scan would: the current mode's signalled
   sources, by order then the time each was signalled (as CF); other modes' sources
   stay signalled; removal, invalidation, moves between loops, a signal sent
   before the source joined any loop; signals from many threads, none lost. */
#include <CRunLoop.h>
#include "rltest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#define DEF kRLRunLoopDefaultMode

static void release_all(RLRunLoopSourceRef *s, int n) {
    for (int i = 0; i < n; i++) {
        RLRunLoopSourceInvalidate(s[i]);
        RLRelease(s[i]);
    }
}

/* ---- order and modes ---- */

/* Signals one source after the monotonic clock has moved on since the
   last, so that no two signals of a test share a time stamp. */
static void signal_in_turn(RLRunLoopSourceRef s) {
    static struct timespec last;
    struct timespec now;
    do clock_gettime(CLOCK_MONOTONIC, &now);
    while (now.tv_sec == last.tv_sec && now.tv_nsec == last.tv_nsec);
    RLRunLoopSourceSignal(s);
    do clock_gettime(CLOCK_MONOTONIC, &last);
    while (last.tv_sec == now.tv_sec && last.tv_nsec == now.tv_nsec);
}

/* As CF: equal orders perform earliest-signalled first, whatever order they
   joined the mode in; a lower order goes first whenever it was signalled. */
static void ties_go_to_the_earliest_signal(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s[4];
    for (int i = 0; i < 4; i++) s[i] = rl_test_source0(i < 2 ? 7 : 3, rl_test_log_perform, (void *)(intptr_t)i);
    for (int i = 0; i < 4; i++) RLRunLoopAddSource(rl, s[i], "A");
    for (int i = 3; i >= 0; i--) RLRunLoopAddSource(rl, s[i], "B");
    int signal_order[] = {1, 0, 3, 2};
    for (int i = 0; i < 4; i++) signal_in_turn(s[signal_order[i]]);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("A", 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 3, 2, 1, 0);
    rl_test_callouts.n = 0;
    for (int i = 0; i < 4; i++) signal_in_turn(s[i]);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("B", 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 2, 3, 0, 1);
    release_all(s, 4);
}

/* Only the edge from unsignalled to signalled is stamped: signalling a
   source again before it performs keeps its place. */
static void signalling_again_keeps_the_first_signal_time(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s[2];
    for (int i = 0; i < 2; i++) s[i] = rl_test_source0(0, rl_test_log_perform, (void *)(intptr_t)i);
    for (int i = 1; i >= 0; i--) RLRunLoopAddSource(rl, s[i], DEF);
    signal_in_turn(s[0]);
    signal_in_turn(s[1]);
    signal_in_turn(s[0]);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 0, 1);
    /* Performed, it is stamped anew by its next signal. */
    rl_test_callouts.n = 0;
    signal_in_turn(s[1]);
    signal_in_turn(s[0]);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 1, 0);
    release_all(s, 2);
}

/* Returning after a handled source, only the earliest-signalled of the
   lowest order performs; the others wait for the next run. */
static void return_after_source_handled_performs_the_earliest_signalled(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s[3];
    for (int i = 0; i < 3; i++) s[i] = rl_test_source0(i == 2 ? 9 : 4, rl_test_log_perform, (void *)(intptr_t)i);
    for (int i = 0; i < 3; i++) RLRunLoopAddSource(rl, s[i], DEF);
    signal_in_turn(s[2]);
    signal_in_turn(s[1]);
    signal_in_turn(s[0]);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_LOG(&rl_test_callouts, 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_LOG(&rl_test_callouts, 1, 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_LOG(&rl_test_callouts, 1, 0, 2);
    release_all(s, 3);
}

/* A signalled source of another mode is left signalled: it performs once,
   when its mode runs; one in two modes performs once, in the first to run. */
static void signalled_sources_wait_for_their_mode_and_perform_once(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, DEF);
    RLRunLoopSourceRef a = rl_test_source0(0, rl_test_log_perform, (void *)1);
    RLRunLoopSourceRef ab = rl_test_source0(0, rl_test_log_perform, (void *)2);
    RLRunLoopAddSource(rl, a, "A");
    RLRunLoopAddSource(rl, ab, "A");
    RLRunLoopAddSource(rl, ab, "B");
    RLRunLoopSourceSignal(a);
    RLRunLoopSourceSignal(ab);
    for (int i = 0; i < 3; i++) RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_callouts.n, 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("B", 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 2);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("A", 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 2, 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("A", 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("B", 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 2, 1);
    RLRunLoopSourceRef all[] = {keep, a, ab};
    release_all(all, 3);
}

/* Common-mode sources perform in every common mode, ordered with the
   mode's own sources. */
static void common_and_own_sources_perform_together_by_order(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopAddCommonMode(rl, "C");
    RLRunLoopSourceRef common = rl_test_source0(5, rl_test_log_perform, (void *)1);
    RLRunLoopSourceRef own = rl_test_source0(1, rl_test_log_perform, (void *)2);
    RLRunLoopSourceRef later = rl_test_source0(9, rl_test_log_perform, (void *)3);
    RLRunLoopAddSource(rl, common, kRLRunLoopCommonModes);
    RLRunLoopAddSource(rl, own, "C");
    RLRunLoopAddSource(rl, later, "C");
    for (int round = 0; round < 2; round++) {
        RLRunLoopSourceSignal(later);
        RLRunLoopSourceSignal(common);
        RLRunLoopSourceSignal(own);
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode("C", 0, false), kRLRunLoopRunTimedOut);
    }
    RL_ASSERT_LOG(&rl_test_callouts, 2, 1, 3, 2, 1, 3);
    RLRunLoopSourceSignal(common);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 2, 1, 3, 2, 1, 3, 1);
    RLRunLoopSourceRef all[] = {common, own, later};
    release_all(all, 3);
}

/* ---- membership changes while signalled ---- */

/* A signal sent before the source joined any loop is kept: it performs once
   added. */
static void signalled_before_joining_a_loop_performs_once_added(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_log_perform, (void *)1);
    RLRunLoopSourceSignal(s);
    RLRunLoopAddSource(rl, s, DEF);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 1);
    release_all(&s, 1);
}

/* Removal does not clear the signal: removed, the source does not perform;
   added back (to another mode, or the same), it does, once. */
static void removed_while_signalled_performs_when_added_back(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, DEF);
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_log_perform, (void *)1);
    RLRunLoopAddSource(rl, s, DEF);
    RLRunLoopSourceSignal(s);
    RLRunLoopRemoveSource(rl, s, DEF);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_callouts.n, 0);
    RLRunLoopAddSource(rl, s, "A");
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("A", 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("A", 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 1);
    /* Removed from the mode it was signalled in, kept in another. */
    RLRunLoopAddSource(rl, s, DEF);
    RLRunLoopSourceSignal(s);
    RLRunLoopRemoveSource(rl, s, "A");
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 1, 1);
    RLRunLoopSourceRef all[] = {keep, s};
    release_all(all, 2);
}

/* A perform that invalidates a later signalled source of the same pass
   stops it from performing; one that only removes it from the mode does not
   (as CF, the pass collected it first); one that signals a source not yet
   signalled leaves it for the next pass. */
static RLRunLoopSourceRef g_s[4];
static void first_perform(void *info) {
    rl_test_log_perform(info);
    RLRunLoopRemoveSource(RLRunLoopGetCurrent(), g_s[1], DEF);
    RLRunLoopSourceInvalidate(g_s[2]);
    RLRunLoopSourceSignal(g_s[3]);
}

static void performs_change_what_the_rest_of_the_pass_performs(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    g_s[0] = rl_test_source0(0, first_perform, (void *)0);
    for (int i = 1; i < 4; i++) g_s[i] = rl_test_source0(i, rl_test_log_perform, (void *)(intptr_t)i);
    for (int i = 0; i < 4; i++) RLRunLoopAddSource(rl, g_s[i], DEF);
    for (int i = 0; i < 3; i++) RLRunLoopSourceSignal(g_s[i]);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 0, 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 0, 1, 3);
    /* The removed one performed: back in the mode, it waits for a signal. */
    RLRunLoopAddSource(rl, g_s[1], DEF);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 0, 1, 3);
    release_all(g_s, 4);
}

/* An invalidated source never performs, even if signalled again. */
static void invalidated_while_signalled_never_performs(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, DEF);
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_log_perform, (void *)1);
    RLRunLoopAddSource(rl, s, DEF);
    RLRunLoopSourceSignal(s);
    RLRunLoopSourceInvalidate(s);
    RLRunLoopSourceSignal(s);
    RLRunLoopAddSource(rl, s, DEF);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_callouts.n, 0);
    RLRunLoopSourceRef all[] = {keep, s};
    release_all(all, 2);
}

/* Moved to another thread's loop while signalled, it performs there. */
static atomic_int g_moved_performs;
static void count_moved(void *info) {
    (void)info;
    atomic_fetch_add(&g_moved_performs, 1);
}
static void *run_moved(void *arg) {
    RLRunLoopSourceRef s = arg;
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
    RLRunLoopRunInMode(DEF, 0, false);
    RLRunLoopRunInMode(DEF, 0, false);
    RLRunLoopRemoveSource(RLRunLoopGetCurrent(), s, DEF);
    return NULL;
}

static void moved_to_another_loop_while_signalled_performs_there(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, DEF);
    RLRunLoopSourceRef s = rl_test_source0(0, count_moved, NULL);
    RLRunLoopAddSource(rl, s, DEF);
    RLRunLoopSourceSignal(s);
    RLRunLoopRemoveSource(rl, s, DEF);
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, run_moved, s), 0);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(atomic_load(&g_moved_performs), 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(atomic_load(&g_moved_performs), 1);
    RLRunLoopSourceRef all[] = {keep, s};
    release_all(all, 2);
}

/* A fork keeps the signal in the child as in the parent: each performs the
   source once. */
static void signalled_source_performs_once_in_a_forked_child_too(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, DEF);
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_log_perform, (void *)1);
    RLRunLoopAddSource(rl, s, DEF);
    RLRunLoopSourceSignal(s);
    fflush(NULL);
    pid_t child = fork();
    RL_ASSERT(child >= 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0, false), kRLRunLoopRunTimedOut);
    if (child == 0) _exit(rl_test_callouts.n == 1 && rl_test_callouts.ev[0] == 1 ? 0 : 1);
    RL_ASSERT_LOG(&rl_test_callouts, 1);
    int status = 0;
    RL_ASSERT_EQ_INT(waitpid(child, &status, 0), child);
    RL_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    RLRunLoopSourceRef all[] = {keep, s};
    release_all(all, 2);
}

/* ---- many threads, many loops ---- */

/* One source in the loops of two threads, signalled by a third: each
   signal waits for its perform, so performs == signals exactly (a lost
   signal hangs the sender and the test times out). */
enum { LOOPS = 2 };
static RLRunLoopSourceRef g_shared;
static RLRunLoopRef g_loops[LOOPS];
static atomic_int g_ready, g_done;
static atomic_long g_performs;
static void shared_perform(void *info) {
    (void)info;
    atomic_fetch_add(&g_performs, 1);
}

static void *serve(void *arg) {
    intptr_t i = (intptr_t)arg;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    g_loops[i] = (RLRunLoopRef)RLRetain(rl);
    RLRunLoopAddSource(rl, g_shared, DEF);
    atomic_fetch_add(&g_ready, 1);
    while (!atomic_load(&g_done)) RLRunLoopRunInMode(DEF, 0.05, false);
    RLRunLoopRemoveSource(rl, g_shared, DEF);
    return NULL;
}

static void one_source_in_two_loops_loses_no_signal(void) {
    long n = rl_test_scaled(20000);
    g_shared = rl_test_source0(0, shared_perform, NULL);
    pthread_t th[LOOPS];
    for (intptr_t i = 0; i < LOOPS; i++) RL_ASSERT_EQ_INT(pthread_create(&th[i], NULL, serve, (void *)i), 0);
    while (atomic_load(&g_ready) < LOOPS) rl_test_sleep(0.001);
    for (long k = 1; k <= n; k++) {
        RLRunLoopSourceSignal(g_shared);
        RLRunLoopWakeUp(g_loops[k % LOOPS]);
        RLRunLoopWakeUp(g_loops[(k + 1) % LOOPS]);
        while (atomic_load(&g_performs) < k) sched_yield();
    }
    atomic_store(&g_done, 1);
    for (int i = 0; i < LOOPS; i++) {
        RLRunLoopWakeUp(g_loops[i]);
        pthread_join(th[i], NULL);
        RLRelease(g_loops[i]);
    }
    RL_ASSERT_EQ_INT(atomic_load(&g_performs), n);
    release_all(&g_shared, 1);
}

/* Many sources of one loop signalled by several threads at once, each
   signal followed by a wake-up: every source performs after its last
   signal (the perform records the signal count it saw). */
enum { SENDERS = 3, PER_SENDER = 8 };
static RLRunLoopSourceRef g_many[SENDERS * PER_SENDER];
static atomic_long g_sent[SENDERS * PER_SENDER], g_seen[SENDERS * PER_SENDER];
static atomic_int g_senders_left;
static RLRunLoopRef g_rl;
static long g_rounds;

static void record_seen(void *info) {
    intptr_t i = (intptr_t)info;
    atomic_store(&g_seen[i], atomic_load(&g_sent[i]));
}

static void *send_signals(void *arg) {
    intptr_t t = (intptr_t)arg;
    for (long r = 0; r < g_rounds; r++) {
        intptr_t i = t * PER_SENDER + r % PER_SENDER;
        atomic_fetch_add(&g_sent[i], 1);
        RLRunLoopSourceSignal(g_many[i]);
        RLRunLoopWakeUp(g_rl);
        if (r % 64 == 0) sched_yield();
    }
    atomic_fetch_sub(&g_senders_left, 1);
    RLRunLoopWakeUp(g_rl);
    return NULL;
}

static bool all_seen(void) {
    for (int i = 0; i < SENDERS * PER_SENDER; i++)
        if (atomic_load(&g_seen[i]) != atomic_load(&g_sent[i])) return false;
    return true;
}

static void signals_from_several_threads_are_each_followed_by_a_perform(void) {
    g_rl = RLRunLoopGetCurrent();
    g_rounds = rl_test_scaled(40000);
    RLRunLoopSourceRef keep = rl_test_keep_mode(g_rl, DEF);
    for (intptr_t i = 0; i < SENDERS * PER_SENDER; i++) {
        g_many[i] = rl_test_source0(i % 3, record_seen, (void *)i);
        RLRunLoopAddSource(g_rl, g_many[i], i % 2 ? DEF : kRLRunLoopCommonModes);
    }
    atomic_store(&g_senders_left, SENDERS);
    pthread_t th[SENDERS];
    for (intptr_t t = 0; t < SENDERS; t++) RL_ASSERT_EQ_INT(pthread_create(&th[t], NULL, send_signals, (void *)t), 0);
    /* Runs until the senders are done and every last signal was performed;
       a lost one keeps it running until the test's time limit. */
    while (atomic_load(&g_senders_left) > 0 || !all_seen()) RLRunLoopRunInMode(DEF, 0.1, true);
    for (int t = 0; t < SENDERS; t++) pthread_join(th[t], NULL);
    release_all(g_many, SENDERS * PER_SENDER);
    release_all(&keep, 1);
}

/* ---- cost ---- */

/* A pass performs the signalled sources without visiting the others: with
   100,000 sources registered and one signalled per pass, 100,000 passes take
   well under a second; a pass that scanned every source would need minutes
   and run into the test's time limit. */
static RLRunLoopSourceRef g_active;
static long g_active_performs, g_active_want;
static void active_perform(void *info) {
    (void)info;
    if (++g_active_performs < g_active_want) RLRunLoopSourceSignal(g_active);
    else RLRunLoopStop(RLRunLoopGetCurrent());
}

static void a_pass_costs_what_is_signalled_not_what_is_registered(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    enum { N = 100000 };
    static RLRunLoopSourceRef s[N];
    for (long i = 0; i < N; i++) {
        s[i] = rl_test_source0((RLIndex)i, i == N / 2 ? active_perform : rl_test_nothing, NULL);
        RLRunLoopAddSource(rl, s[i], DEF);
    }
    g_active = s[N / 2];
    g_active_want = rl_test_scaled(100000);
    RLRunLoopSourceSignal(g_active);
    while (g_active_performs < g_active_want) RLRunLoopRunInMode(DEF, 10, false);
    RL_ASSERT_EQ_INT(g_active_performs, g_active_want);
    release_all(s, N);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(ties_go_to_the_earliest_signal),
        RL_TEST(signalling_again_keeps_the_first_signal_time),
        RL_TEST(return_after_source_handled_performs_the_earliest_signalled),
        RL_TEST(signalled_sources_wait_for_their_mode_and_perform_once),
        RL_TEST(common_and_own_sources_perform_together_by_order),
        RL_TEST(signalled_before_joining_a_loop_performs_once_added),
        RL_TEST(removed_while_signalled_performs_when_added_back),
        RL_TEST(performs_change_what_the_rest_of_the_pass_performs),
        RL_TEST(invalidated_while_signalled_never_performs),
        RL_TEST(moved_to_another_loop_while_signalled_performs_there),
        RL_TEST(signalled_source_performs_once_in_a_forked_child_too),
        RL_TEST(one_source_in_two_loops_loses_no_signal),
        RL_TEST(signals_from_several_threads_are_each_followed_by_a_perform),
        RL_TEST(a_pass_costs_what_is_signalled_not_what_is_registered),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
