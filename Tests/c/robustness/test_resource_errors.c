/*
 * test_resource_errors.c: kernel calls running out of memory or room where
 * no natural exhaustion reaches them: epoll_ctl (ENOMEM, ENOSPC: the
 * per-user limit of watched descriptors) while the loop registers a
 * descriptor, eventfd (EMFILE) while a forked child remakes its loop. Those
 * are resource errors: the loop must never abort for them, and never be
 * left broken for good. This program defines its own epoll_ctl and eventfd,
 * which the library (linked statically) calls: they fail chosen calls and
 * forward everything else to the C library's.
 */
#include <CRunLoop.h>
#include <CRunLoopEmbed.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include "rltest.h"

#define ANY_TIMERFD   (-2)
#define ANY_EPOLL_SET (-3)

static atomic_int fail_adds;    /* how many ADDs of fail_fd still fail */
static atomic_int fail_fd = -1; /* a number, or ANY_TIMERFD */
static atomic_int fail_errno;

static bool is_kind(int fd, const char *kind) {
    char path[64], link[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(path, link, sizeof link - 1);
    if (n < 0) return false;
    link[n] = '\0';
    return strcmp(link, kind) == 0;
}

static bool matches(int want, int fd) {
    if (want == ANY_TIMERFD) return is_kind(fd, "anon_inode:[timerfd]");
    if (want == ANY_EPOLL_SET) return is_kind(fd, "anon_inode:[eventpoll]");
    return want == fd;
}

static bool injected_failure(int op, int fd) {
    if (op != EPOLL_CTL_ADD || atomic_load(&fail_adds) <= 0) return false;
    int want = atomic_load(&fail_fd);
    if (!matches(want, fd)) return false;
    return atomic_fetch_sub(&fail_adds, 1) > 0;
}

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *event) {
    static int (*real)(int, int, int, struct epoll_event *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "epoll_ctl");
    if (injected_failure(op, fd)) {
        errno = atomic_load(&fail_errno);
        return -1;
    }
    return real(epfd, op, fd, event);
}

static atomic_int fail_eventfds; /* how many eventfd() calls still fail */

int eventfd(unsigned int initval, int flags) {
    static int (*real)(unsigned int, int);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "eventfd");
    if (atomic_load(&fail_eventfds) > 0 && atomic_fetch_sub(&fail_eventfds, 1) > 0) {
        errno = EMFILE;
        return -1;
    }
    return real(initval, flags);
}

static void fail_next_adds_of(int fd, int error, int times) {
    atomic_store(&fail_fd, fd);
    atomic_store(&fail_errno, error);
    atomic_store(&fail_adds, times);
}

static void count_perform(void *info) {
    int *fd = info;
    char c;
    RL_ASSERT_EQ_INT(read(fd[0], &c, 1), 1);
    fd[2]++;
}

static int pipe_read_end(void *info) {
    return ((int *)info)[0];
}

/* Before: the ADD failed, the source stayed in the mode (Contains said yes)
   and was never watched: its data sat there and the run timed out. */
static void source_added_while_the_set_is_full_is_not_added(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int p[3] = {-1, -1, 0}; /* read end, write end, performs */
    RL_ASSERT_EQ_INT(pipe(p), 0);
    RLRunLoopSourceRef s = rl_test_source1(0, pipe_read_end, count_perform, p);
    fail_next_adds_of(p[0], ENOSPC, 1);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(atomic_load(&fail_adds), 0);
    RL_ASSERT(!RLRunLoopContainsSource(rl, s, kRLRunLoopDefaultMode));
    /* Room again: the same add works. */
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RL_ASSERT(RLRunLoopContainsSource(rl, s, kRLRunLoopDefaultMode));
    RL_ASSERT_EQ_INT(write(p[1], "x", 1), 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p[2], 1);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
}

/* Before: a rebuilt set (one user fd was closed behind its source's back)
   that could not take another source's fd back (ENOMEM) left that source
   unwatched for good. Now it is registered again before the next wait. */
static void registration_lost_in_a_rebuild_is_retried(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int a[3] = {-1, -1, 0}, b[3] = {-1, -1, 0};
    RL_ASSERT_EQ_INT(pipe(a), 0);
    RL_ASSERT_EQ_INT(pipe(b), 0);
    RLRunLoopSourceRef sa = rl_test_source1(0, pipe_read_end, count_perform, a);
    RLRunLoopSourceRef sb = rl_test_source1(0, pipe_read_end, count_perform, b);
    RLRunLoopAddSource(rl, sa, kRLRunLoopDefaultMode);
    RLRunLoopAddSource(rl, sb, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    close(a[0]);                                          /* behind sa's back */
    RLRunLoopRemoveSource(rl, sa, kRLRunLoopDefaultMode); /* DEL fails: the set is rebuilt */
    fail_next_adds_of(b[0], ENOMEM, 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(atomic_load(&fail_adds), 0); /* the rebuild met the failure */
    RL_ASSERT_EQ_INT(write(b[1], "x", 1), 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(b[2], 1);
    RLRunLoopSourceInvalidate(sa);
    RLRunLoopSourceInvalidate(sb);
    RLRelease(sa);
    RLRelease(sb);
}

static void count_fire(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (*(int *)info)++;
}

/* The timerfd cannot join the set (ENOMEM): the run's own timeout stands in
   and the timer still fires; the next arm makes a timerfd again. */
static void timerfd_that_cannot_join_the_set_is_retried(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    int fired = 0;
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent() + 0.05, 0, count_fire, &fired);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    fail_next_adds_of(ANY_TIMERFD, ENOMEM, 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.3, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(atomic_load(&fail_adds), 0);
    RL_ASSERT_EQ_INT(fired, 1);
    RLRunLoopTimerRef t2 = rl_test_timer(RLAbsoluteTimeGetCurrent() + 0.05, 0, count_fire, &fired);
    RLRunLoopAddTimer(rl, t2, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.3, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(fired, 2);
    RL_ASSERT(rl_test_find_fd("anon_inode:[timerfd]") >= 0);
    RLRelease(t);
    RLRelease(t2);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
}

/* The loop's wait set could not join the embedding descriptor (ENOMEM).
   Before: nothing tried again, so the host's descriptor never became
   readable, and a host sleeping on it with Prepare's timeout (-1: no timer)
   slept through the work another thread sent. Now Prepare joins it again
   (and, while it cannot, caps the host's timeout). */
typedef struct {
    RLRunLoopRef rl;
    RLRunLoopSourceRef source;
} waker;

static void *signal_when_host_sleeps(void *arg) {
    waker *w = arg;
    rl_test_wait_sleeping(w->rl, 10);
    RLRunLoopSourceSignal(w->source);
    RLRunLoopWakeUp(w->rl);
    return NULL;
}

static void embedding_set_that_could_not_be_joined_is_retried(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    waker w = {rl, rl_test_keep_mode(rl, kRLRunLoopDefaultMode)};
    fail_next_adds_of(ANY_EPOLL_SET, ENOMEM, 1);
    int fd = RLRunLoopEmbedGetFD(rl);
    RL_ASSERT(fd >= 0);
    RL_ASSERT_EQ_INT(atomic_load(&fail_adds), 0);
    int timeout = 0;
    RL_ASSERT(!RLRunLoopEmbedPrepare(rl, kRLRunLoopDefaultMode, &timeout));
    pthread_t th;
    pthread_create(&th, NULL, signal_when_host_sleeps, &w);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int ready = 0;
    for (double end = rl_test_now() + 5; !ready && rl_test_now() < end;) {
        ready = poll(&p, 1, timeout < 0 || timeout > 5000 ? 5000 : timeout);
        if (!ready) RLRunLoopEmbedPrepare(rl, kRLRunLoopDefaultMode, &timeout);
    }
    RL_ASSERT_EQ_INT(ready, 1);
    pthread_join(th, NULL);
    RLRunLoopEmbedCancel(rl);
    RLRunLoopSourceInvalidate(w.source);
    RLRelease(w.source);
}

/* A forked child's loop could not remake its wake eventfd (twice: when it
   first remade its objects, and again before its first sleep). Before: it
   slept on a set with no wake-up in it, so a stop from another thread went
   unheard until the run timed out. Now, without a wake eventfd, it sleeps
   in short slices (and keeps trying to make one). */
static void *stop_when_sleeping(void *arg) {
    RLRunLoopRef rl = arg;
    rl_test_wait_sleeping(rl, 10);
    RLRunLoopStop(rl);
    return NULL;
}

static void child_without_a_wake_eventfd_still_hears_a_stop(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    pid_t pid = fork();
    RL_ASSERT(pid >= 0);
    if (pid == 0) {
        atomic_store(&fail_eventfds, 2);
        pthread_t th;
        pthread_create(&th, NULL, stop_when_sleeping, rl);
        RLRunLoopRunResult result = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, false);
        pthread_join(th, NULL);
        _exit(result == kRLRunLoopRunStopped && atomic_load(&fail_eventfds) == 0 ? 0 : 10 + (int)result);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {}
    RL_ASSERT(WIFEXITED(status));
    RL_ASSERT_EQ_INT(WEXITSTATUS(status), 0);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(source_added_while_the_set_is_full_is_not_added),
        RL_TEST(registration_lost_in_a_rebuild_is_retried),
        RL_TEST(timerfd_that_cannot_join_the_set_is_retried),
        RL_TEST(embedding_set_that_could_not_be_joined_is_retried),
        RL_TEST(child_without_a_wake_eventfd_still_hears_a_stop),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
