/*
 * test_fork.c: after fork() the child shares the parent's open files, and
 * with them, until they are remade, its loops' epoll set, eventfd and timerfd.
 * Whatever the child does with an inherited loop must not touch the parent's
 * loops; in the child the loop works (its kernel objects are remade on first
 * use).
 */
#include <CRunLoop.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include "rltest.h"

static int child_fired;
static void child_timer(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    child_fired++;
}

/* The child runs the loop it inherited with a timer; exits 0 if it fired. */
static void child_runs_a_timer(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.02, 0, child_timer, NULL);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.3, false);
    RLRelease(t);
    _exit(child_fired == 1 ? 0 : 3);
}

static void expect_child_ok(pid_t pid) {
    int status = 0;
    RL_ASSERT_EQ_INT(waitpid(pid, &status, 0), pid);
    RL_ASSERT(WIFEXITED(status));
    RL_ASSERT_EQ_INT(WEXITSTATUS(status), 0);
}

/* ---- the child runs the loop while the parent sleeps in it ---------------- */

static void parents_run_times_out_after_child_plays(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.01, false), kRLRunLoopRunTimedOut);
    pid_t pid = fork();
    if (pid == 0) {
        rl_test_sleep(0.1); /* the parent is asleep in its run by now */
        rl_test_add_timer(rl, kRLRunLoopDefaultMode, 100, 0, child_timer, NULL); /* far; lives until exit */
        child_runs_a_timer();
    }
    double start = rl_test_now();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1.0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LE_DBL(rl_test_now() - start, 8.0); /* it returns; the bound is only against a hang */
    expect_child_ok(pid);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
}

/* ---- the child runs the loop while the parent waits to be stopped --------- */

static void *stop_when_sleeping(void *arg) {
    RLRunLoopRef rl = arg;
    rl_test_wait_sleeping(rl, 10);
    RLRunLoopStop(rl);
    return NULL;
}

static void parents_stop_still_wakes_it(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    for (int i = 0; i < 5; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            /* Sleeps in the inherited loop while the parent is woken. */
            RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.5, false);
            _exit(0);
        }
        pthread_t t;
        pthread_create(&t, NULL, stop_when_sleeping, rl);
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, false), kRLRunLoopRunStopped);
        pthread_join(t, NULL);
        expect_child_ok(pid);
    }
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
}

/* ---- the child removes a source ------------------------------------------ */

/* In a child: a draining source in the default mode of rl watching a new
   pipe that has a byte to read (the child exits 2 when it cannot). */
static RLRunLoopSourceRef child_adds_a_readable_source(RLRunLoopRef rl, rl_test_fd_info *info) {
    int p[2];
    if (pipe2(p, O_NONBLOCK) != 0 || write(p[1], "x", 1) != 1) _exit(2);
    *info = (rl_test_fd_info){.fd = p[0], .drain = true};
    RLRunLoopSourceRef s = rl_test_fd_source(info);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    return s;
}

static void childs_remove_leaves_parents_registration(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int p[2];
    RL_ASSERT_EQ_INT(pipe2(p, O_NONBLOCK), 0);
    rl_test_fd_info info = {.fd = p[0], .drain = true};
    RLRunLoopSourceRef s = rl_test_fd_source(&info);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    pid_t pid = fork();
    if (pid == 0) {
        RLRunLoopRemoveSource(rl, s, kRLRunLoopDefaultMode);
        RLRunLoopSourceInvalidate(s);
        _exit(0);
    }
    expect_child_ok(pid);
    RL_ASSERT_EQ_INT(write(p[1], "x", 1), 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(info.performed, 1);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    close(p[0]);
    close(p[1]);
}

/* ---- the child adds a readable fd ---------------------------------------- */

static void childs_readable_fd_does_not_spin_parent(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    int ready[2], done[2];
    RL_ASSERT_EQ_INT(pipe(ready), 0);
    RL_ASSERT_EQ_INT(pipe(done), 0);
    pid_t pid = fork();
    if (pid == 0) {
        rl_test_fd_info info;
        child_adds_a_readable_source(rl, &info); /* lives until the child exits */
        if (write(ready[1], "r", 1) != 1) _exit(2);
        char c;
        if (read(done[0], &c, 1) != 1) _exit(2); /* keeps the readable pipe open meanwhile */
        _exit(0);
    }
    char c;
    RL_ASSERT_EQ_INT(read(ready[0], &c, 1), 1);
    rl_test_log log = {0};
    RLRunLoopObserverRef o = rl_test_log_observer(kRLRunLoopAfterWaiting, 0, &log);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.5, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(write(done[1], "d", 1), 1);
    expect_child_ok(pid);
    RL_ASSERT_LE_INT(log.n, 2);
    RLRunLoopRemoveObserver(rl, o, kRLRunLoopDefaultMode);
    RLRelease(o);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
}

/* ---- the child's loop works ---------------------------------------------- */

static void child_uses_its_inherited_loop(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.01, false), kRLRunLoopRunTimedOut);
    pid_t pid = fork();
    if (pid == 0) {
        /* A source, a stop from another thread, a timer: all in the child. */
        rl_test_fd_info info;
        RLRunLoopSourceRef s = child_adds_a_readable_source(rl, &info);
        if (RLRunLoopRunInMode(kRLRunLoopDefaultMode, 2, true) != kRLRunLoopRunHandledSource) _exit(4);
        pthread_t t;
        pthread_create(&t, NULL, stop_when_sleeping, rl);
        if (RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, false) != kRLRunLoopRunStopped) _exit(5);
        pthread_join(t, NULL);
        RLRunLoopSourceInvalidate(s);
        child_runs_a_timer();
    }
    expect_child_ok(pid);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
}

/* ---- a port made in the parent ------------------------------------------- */

static int port_delivered;
static void port_callback(RLMessagePortRef port, int32_t msgid, const void *bytes, size_t len, void *info) {
    (void)port;
    (void)msgid;
    (void)bytes;
    (void)len;
    (void)info;
    port_delivered++;
}

/* A port whose source is in the current loop's default mode, the loop having
   slept once with it (so its registration is in the wait set). */
static RLMessagePortRef port_in_loop(RLRunLoopRef rl, RLRunLoopSourceRef *src) {
    RLMessagePortRef port = RLMessagePortCreate(port_callback, NULL, 0);
    RL_ASSERT(port != NULL);
    *src = RLMessagePortCreateRunLoopSource(port, 0);
    RLRunLoopAddSource(rl, *src, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.01, false), kRLRunLoopRunTimedOut);
    return port;
}

static void drop_port(RLMessagePortRef port, RLRunLoopSourceRef src) {
    RLMessagePortInvalidate(port);
    RLRelease(src);
    RLRelease(port);
}

/* The child's sends to an inherited port fail and never wake the parent. */
static void childs_send_to_inherited_port_does_not_wake_parent(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef src;
    RLMessagePortRef port = port_in_loop(rl, &src);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 100; i++)
            if (RLMessagePortSend(port, i, "x", 1) != -EPIPE) _exit(2);
        if (RLMessagePortIsValid(port)) _exit(3);
        _exit(0);
    }
    expect_child_ok(pid);
    rl_test_log log = {0};
    RLRunLoopObserverRef o = rl_test_log_observer(kRLRunLoopAfterWaiting, 0, &log);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.3, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LE_INT(log.n, 1); /* the wake-up at the timeout only */
    RL_ASSERT_EQ_INT(port_delivered, 0);
    RL_ASSERT(RLMessagePortIsValid(port));
    /* The port still works in the parent. */
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, 7, NULL, 0), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(port_delivered, 1);
    RLRunLoopRemoveObserver(rl, o, kRLRunLoopDefaultMode);
    RLRelease(o);
    drop_port(port, src);
}

/* In a child: tells the parent it is about to run (a byte on ready_fd), runs
   the default mode of rl for 0.6 s, and returns how often the loop woke from
   a sleep meanwhile. */
static int child_runs_counting_wakes(RLRunLoopRef rl, int ready_fd) {
    rl_test_log log = {0};
    RLRunLoopObserverRef o = rl_test_log_observer(kRLRunLoopAfterWaiting, 0, &log);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    if (write(ready_fd, "r", 1) != 1) _exit(2);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.6, false);
    RLRunLoopRemoveObserver(rl, o, kRLRunLoopDefaultMode);
    RLRelease(o);
    return log.n;
}

/* The child runs the loop holding the inherited port, with a message queued
   before the fork and one sent while it sleeps: it delivers neither, does not
   spin, and leaves the parent's wake-up for both. */
static void childs_loop_leaves_parents_port_messages(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef src;
    RLMessagePortRef port = port_in_loop(rl, &src);
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, 1, "before", 6), 0);
    int ready[2];
    RL_ASSERT_EQ_INT(pipe(ready), 0);
    pid_t pid = fork();
    if (pid == 0) {
        RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
        int wakes = child_runs_counting_wakes(rl, ready[1]);
        if (port_delivered != 0) _exit(3);
        if (wakes > 3) _exit(4);
        if (RLMessagePortSend(port, 3, NULL, 0) != -EPIPE) _exit(5);
        RLMessagePortInvalidate(port); /* the child's cleanup touches nothing of the parent's */
        RLRelease(src);
        RLRelease(port);
        RLRunLoopSourceInvalidate(keep);
        RLRelease(keep);
        _exit(0);
    }
    char c;
    RL_ASSERT_EQ_INT(read(ready[0], &c, 1), 1);
    rl_test_sleep(0.15); /* the child sleeps in its loop by now (or soon will) */
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, 2, "after", 5), 0);
    expect_child_ok(pid);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(port_delivered, 2);
    RL_ASSERT_EQ_INT(RLMessagePortGetQueuedCount(port), 0);
    close(ready[0]);
    close(ready[1]);
    drop_port(port, src);
}

/* ---- a signal source made in the parent ---------------------------------- */

static int signals_heard;
static void signal_callback(int signo, uint32_t count, void *info) {
    (void)signo;
    (void)info;
    signals_heard += (int)count;
}

/* The child's loop holds the parent's SIGUSR1 source: it neither takes nor
   hides the parent's signal, and hears its own. */
static void signal_sources_hear_their_own_process(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = RLSignalSourceCreate(SIGUSR1, 0, signal_callback, NULL);
    RL_ASSERT(s != NULL);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.01, false), kRLRunLoopRunTimedOut);
    int ready[2];
    RL_ASSERT_EQ_INT(pipe(ready), 0);
    pid_t pid = fork();
    if (pid == 0) {
        int wakes = child_runs_counting_wakes(rl, ready[1]); /* the parent is signalled meanwhile */
        if (signals_heard != 0) _exit(3);
        if (wakes > 3) _exit(4);
        kill(getpid(), SIGUSR1);
        if (RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, true) != kRLRunLoopRunHandledSource) _exit(5);
        if (signals_heard != 1) _exit(6);
        RLRunLoopSourceInvalidate(s);
        RLRelease(s);
        _exit(0);
    }
    char c;
    RL_ASSERT_EQ_INT(read(ready[0], &c, 1), 1);
    rl_test_sleep(0.15); /* the child sleeps in its loop by now (or soon will) */
    RL_ASSERT_EQ_INT(kill(getpid(), SIGUSR1), 0);
    expect_child_ok(pid);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(signals_heard, 1);
    close(ready[0]);
    close(ready[1]);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(parents_run_times_out_after_child_plays),
        RL_TEST(parents_stop_still_wakes_it),
        RL_TEST(childs_remove_leaves_parents_registration),
        RL_TEST(childs_readable_fd_does_not_spin_parent),
        RL_TEST(child_uses_its_inherited_loop),
        RL_TEST(childs_send_to_inherited_port_does_not_wake_parent),
        RL_TEST(childs_loop_leaves_parents_port_messages),
        RL_TEST(signal_sources_hear_their_own_process),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
