/*
 * test_fd_exhaustion.c: a process out of file descriptors. The loop keeps its
 * promises (timeouts, timers) without the descriptors it would like to make,
 * never spins, and recovers once descriptors are back. Each test runs in its
 * own child process, so lowering its descriptor limit touches nothing else.
 */
#include <CRunLoop.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include "rltest.h"

#define LIMIT 64

/* Lowers the limit (valgrind refuses: then its own, lower, limit serves)
   and opens /dev/null until no descriptor is left; returns how many were
   opened (their numbers are in *fds, malloc'd). */
static int exhaust(int **fds) {
    struct rlimit lim = {LIMIT, LIMIT};
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) RL_ASSERT_EQ_INT(getrlimit(RLIMIT_NOFILE, &lim), 0);
    RL_ASSERT_LE_INT(lim.rlim_cur, 1 << 16);
    *fds = malloc(lim.rlim_cur * sizeof **fds);
    int n = 0;
    for (;;) {
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            RL_ASSERT_EQ_INT(errno, EMFILE);
            break;
        }
        RL_ASSERT((rlim_t)n < lim.rlim_cur);
        (*fds)[n++] = fd;
    }
    return n;
}

static void release_fds(int *fds, int n) {
    for (int i = 0; i < n; i++) close(fds[i]);
    free(fds);
}

static int fired;
static void count_fire(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    fired++;
}

/* No timerfd can be made: the run still times out, and its timer fires. */
static void run_times_out_without_a_timerfd(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    int *fds;
    int n = exhaust(&fds);
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.1, 0, count_fire, NULL);
    double start = rl_test_now();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.3, false), kRLRunLoopRunTimedOut);
    double took = rl_test_now() - start;
    RL_ASSERT_EQ_INT(fired, 1);
    RL_ASSERT_GE_DBL(took, 0.3);
    RL_ASSERT_LE_DBL(took, 5.0); /* generous: it must only not hang */
    /* Descriptors back: timers keep working. */
    release_fds(fds, n);
    RLRunLoopTimerRef t2 = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.05, 0, count_fire, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.2, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(fired, 2);
    RLRelease(t);
    RLRelease(t2);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
}

/* A timer added from another thread while the loop sleeps without a timerfd
   still fires on time. */
typedef struct {
    RLRunLoopRef rl;
    RLRunLoopTimerRef t;
} adder;

static void *add_timer_later(void *arg) {
    adder *a = arg;
    rl_test_wait_sleeping(a->rl, 10);
    RLRunLoopAddTimer(a->rl, a->t, kRLRunLoopDefaultMode);
    return NULL;
}

static void timer_added_while_sleeping_without_a_timerfd(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    int *fds;
    int n = exhaust(&fds);
    adder a = {rl, rl_test_timer(RLAbsoluteTimeGetCurrent() + 0.1, 0, rl_test_stop_current, NULL)};
    pthread_t th;
    pthread_create(&th, NULL, add_timer_later, &a);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 20, false), kRLRunLoopRunStopped);
    pthread_join(th, NULL);
    release_fds(fds, n);
    RLRelease(a.t);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
}

/* ---- a file descriptor object whose fd was closed behind its back ------- */

typedef struct {
    int callbacks;
} fd_counts;

static void count_callback(RLFileDescriptorRef f, RLOptionFlags types, void *info) {
    (void)f;
    (void)types;
    ((fd_counts *)info)->callbacks++;
}

static RLFileDescriptorRef watch_reads(int fd, fd_counts *counts) {
    RLFileDescriptorContext ctx = {0, counts, NULL, NULL, NULL};
    RLFileDescriptorRef f = RLFileDescriptorCreate(fd, false, count_callback, &ctx);
    RL_ASSERT(f != NULL);
    RLRunLoopSourceRef s = RLFileDescriptorCreateRunLoopSource(f, 0);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, kRLRunLoopDefaultMode);
    RLRelease(s);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    return f;
}

static int sleeps_in(double seconds) {
    RLRunLoopRunResult r;
    int sleeps = rl_test_count_sleeps(kRLRunLoopDefaultMode, seconds, &r);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunTimedOut);
    return sleeps;
}

static void closed_fd_object_does_not_spin_without_fds(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    int p[2];
    RL_ASSERT_EQ_INT(pipe2(p, O_NONBLOCK), 0);
    int alive = dup(p[0]); /* the file outlives its number */
    fd_counts counts = {0};
    RLFileDescriptorRef f = watch_reads(p[0], &counts);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(write(p[1], "x", 1), 1);
    close(p[0]);
    int *fds;
    int n = exhaust(&fds);
    int sleeps = sleeps_in(0.5);
    RL_ASSERT_LE_INT(counts.callbacks, 1); /* one-shot: one callout per enable */
    RL_ASSERT_LE_INT(sleeps, 3);
    /* Enabled again, still out of descriptors: once more, then quiet. */
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    sleeps = sleeps_in(0.3);
    RL_ASSERT_LE_INT(counts.callbacks, 2);
    RL_ASSERT_LE_INT(sleeps, 3);
    release_fds(fds, n);

    /* Descriptors back: the loop is whole again. */
    sleeps = sleeps_in(0.3);
    RL_ASSERT_LE_INT(sleeps, 2);
    int q[2];
    RL_ASSERT_EQ_INT(pipe2(q, O_NONBLOCK), 0);
    fd_counts fresh = {0};
    RLFileDescriptorRef g = watch_reads(q[0], &fresh);
    RL_ASSERT_EQ_INT(write(q[1], "y", 1), 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(fresh.callbacks, 1);
    RLFileDescriptorInvalidate(g);
    RLRelease(g);
    RLFileDescriptorInvalidate(f);
    RLRelease(f);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
    close(alive);
    close(p[1]);
    close(q[0]);
    close(q[1]);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(run_times_out_without_a_timerfd),
        RL_TEST(timer_added_while_sleeping_without_a_timerfd),
        RL_TEST(closed_fd_object_does_not_spin_without_fds),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
