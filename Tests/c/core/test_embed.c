/*
 * test_embed.c: a loop run by a host's poll(): the embedding descriptor is
 * readable exactly when a pass has work, and an idle loop never wakes the host.
 */
#include <CRunLoop.h>
#include <CRunLoopEmbed.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include "rltest.h"

#define MODE kRLRunLoopDefaultMode

/* The host's sleep: whether the descriptor became readable within ms
   (-1: no limit, the test's alarm bounds it). */
static int host_poll(int fd, int ms) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int n;
    while ((n = poll(&p, 1, ms)) < 0) {}
    return n > 0 && (p.revents & POLLIN);
}

static void count_fire(RLRunLoopTimerRef t, void *info) {
    (void)t;
    atomic_fetch_add((_Atomic int *)info, 1);
}

static void count_perform(void *info) {
    atomic_fetch_add((_Atomic int *)info, 1);
}

/* A timer in `mode`, due `delay` seconds from now (negative: in the past),
   counting its firings into *fired. */
static RLRunLoopTimerRef add_counting_timer(RLRunLoopRef rl, RLRunLoopMode mode, double delay, double interval,
                                            _Atomic int *fired) {
    return rl_test_add_timer(rl, mode, delay, interval, count_fire, fired);
}

/* A version-0 source in the default mode counting its performs. */
static RLRunLoopSourceRef add_counting_source(RLRunLoopRef rl, _Atomic int *performed) {
    RLRunLoopSourceRef s = rl_test_source0(0, count_perform, performed);
    RLRunLoopAddSource(rl, s, MODE);
    return s;
}

/* Prepare says there is no work now, and the host's poll stays quiet for ms. */
static void expect_quiet(RLRunLoopRef rl, RLRunLoopMode mode, int fd, int ms) {
    RL_ASSERT(!RLRunLoopEmbedPrepare(rl, mode, NULL));
    RL_ASSERT(!host_poll(fd, ms));
}

/* Prepare says there is work now, and the descriptor is readable already. */
static void expect_work_now(RLRunLoopRef rl, RLRunLoopMode mode, int fd) {
    RL_ASSERT(RLRunLoopEmbedPrepare(rl, mode, NULL));
    RL_ASSERT(host_poll(fd, 0));
}

/* The host sleeps until the descriptor is readable, then runs one pass. */
static void host_sleeps_then_runs_a_pass(int fd, RLRunLoopMode mode) {
    RL_ASSERT(host_poll(fd, -1));
    RLRunLoopRunInMode(mode, 0, false);
}

/* ---- the descriptor ------------------------------------------------------ */

static void descriptor_is_stable(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fd = RLRunLoopEmbedGetFD(rl);
    RL_ASSERT_GE_INT(fd, 0);
    RL_ASSERT_EQ_INT(RLRunLoopEmbedGetFD(rl), fd);
    RL_ASSERT_EQ_INT(RLRunLoopEmbedGetFD(NULL), -1);
    RL_ASSERT(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    /* Running the loop by itself leaves the number alone. */
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, MODE);
    RLRunLoopRunInMode(MODE, 0.01, false);
    RL_ASSERT_EQ_INT(RLRunLoopEmbedGetFD(rl), fd);
    RLRelease(keep);
}

static void *get_fd_of(void *arg) {
    return (void *)(intptr_t)RLRunLoopEmbedGetFD(arg);
}

static void descriptor_from_another_thread_is_the_same(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    pthread_t t;
    void *got;
    pthread_create(&t, NULL, get_fd_of, rl);
    pthread_join(t, &got);
    RL_ASSERT_GE_INT((intptr_t)got, 0);
    RL_ASSERT_EQ_INT(RLRunLoopEmbedGetFD(rl), (intptr_t)got);
}

static void *prepare_elsewhere(void *arg) {
    int timeout = 5;
    bool r = RLRunLoopEmbedPrepare(arg, MODE, &timeout);
    return (void *)(intptr_t)(r ? 1000 : timeout);
}

static void prepare_refuses_bad_input(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int timeout = 5;
    RL_ASSERT(!RLRunLoopEmbedPrepare(NULL, MODE, &timeout));
    RL_ASSERT_EQ_INT(timeout, -1);
    timeout = 5;
    RL_ASSERT(!RLRunLoopEmbedPrepare(rl, NULL, &timeout));
    RL_ASSERT_EQ_INT(timeout, -1);
    RL_ASSERT(!RLRunLoopEmbedPrepare(rl, "", &timeout));
    RL_ASSERT(!RLRunLoopEmbedPrepare(rl, kRLRunLoopCommonModes, &timeout));
    RL_ASSERT(!RLRunLoopEmbedPrepare(rl, MODE, NULL)); /* nothing to do, no crash */
    /* Another thread's loop: refused. */
    pthread_t t;
    void *got;
    pthread_create(&t, NULL, prepare_elsewhere, rl);
    pthread_join(t, &got);
    RL_ASSERT_EQ_INT((intptr_t)got, -1);
    RLRunLoopEmbedCancel(NULL);
}

/* ---- idle ---------------------------------------------------------------- */

static void idle_loop_never_makes_it_readable(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fd = RLRunLoopEmbedGetFD(rl);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, MODE);
    _Atomic int fired = 0;
    RLRunLoopTimerRef far = add_counting_timer(rl, MODE, 1000, 0, &fired);
    int timeout = 0;
    RL_ASSERT(!RLRunLoopEmbedPrepare(rl, MODE, &timeout));
    RL_ASSERT_GE_INT(timeout, 990000);
    RL_ASSERT(RLRunLoopIsWaiting(rl));
    RL_ASSERT(!host_poll(fd, 300));
    /* Passes with nothing to do leave it quiet too. */
    for (int i = 0; i < 5; i++) {
        RLRunLoopRunInMode(MODE, 0, false);
        RL_ASSERT(!RLRunLoopEmbedPrepare(rl, MODE, &timeout));
        RL_ASSERT(!host_poll(fd, 20));
    }
    RL_ASSERT_EQ_INT(fired, 0);
    RLRunLoopTimerInvalidate(far);
    RLRelease(far);
    RLRelease(keep);
}

static void no_timer_means_no_timeout(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, MODE);
    int timeout = 0;
    RL_ASSERT(!RLRunLoopEmbedPrepare(rl, MODE, &timeout));
    RL_ASSERT_EQ_INT(timeout, -1);
    RLRelease(keep);
}

/* ---- timers -------------------------------------------------------------- */

static void due_timer_makes_it_readable_and_one_pass_fires_it(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fd = RLRunLoopEmbedGetFD(rl);
    _Atomic int fired = 0;
    double start = rl_test_now();
    RLRunLoopTimerRef t = add_counting_timer(rl, MODE, 0.05, 0, &fired);
    int timeout = -1;
    /* (A slow machine may already be past the date: then it is work now.) */
    if (RLRunLoopEmbedPrepare(rl, MODE, &timeout)) {
        RL_ASSERT_EQ_INT(timeout, 0);
    } else {
        RL_ASSERT_GE_INT(timeout, 1);
        RL_ASSERT_LE_INT(timeout, 51);
    }
    RL_ASSERT(host_poll(fd, -1)); /* the descriptor alone wakes the host */
    RL_ASSERT_GE_DBL(rl_test_now() - start, 0.049);
    RLRunLoopRunInMode(MODE, 0, false);
    RL_ASSERT_EQ_INT(fired, 1);
    RLRelease(t);
}

static void past_timer_is_work_now(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fd = RLRunLoopEmbedGetFD(rl);
    _Atomic int fired = 0;
    RLRunLoopTimerRef t = add_counting_timer(rl, MODE, -1, 0, &fired);
    int timeout = -1;
    RL_ASSERT(RLRunLoopEmbedPrepare(rl, MODE, &timeout));
    RL_ASSERT_EQ_INT(timeout, 0);
    host_sleeps_then_runs_a_pass(fd, MODE);
    RL_ASSERT_EQ_INT(fired, 1);
    RLRelease(t);
}

/* The host wakes once per firing of a repeating timer, never more. */
static void repeating_timer_costs_one_wake_up_per_firing(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fd = RLRunLoopEmbedGetFD(rl);
    _Atomic int fired = 0;
    RLRunLoopTimerRef t = add_counting_timer(rl, MODE, 0.01, 0.01, &fired);
    int wakeups = 0;
    while (fired < 20) {
        int timeout;
        RLRunLoopEmbedPrepare(rl, MODE, &timeout);
        RL_ASSERT(host_poll(fd, -1));
        wakeups++;
        RLRunLoopRunInMode(MODE, 0, false);
    }
    /* A loaded machine may coalesce firings, never add wake-ups. */
    RL_ASSERT_LE_INT(wakeups, 20);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
}

static void other_modes_timers_and_sources_stay_quiet(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fd = RLRunLoopEmbedGetFD(rl);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, MODE);
    _Atomic int fired = 0;
    RLRunLoopTimerRef t = add_counting_timer(rl, "other", 0.02, 0, &fired);
    int timeout = 0;
    RL_ASSERT(!RLRunLoopEmbedPrepare(rl, MODE, &timeout));
    RL_ASSERT_EQ_INT(timeout, -1);
    RL_ASSERT(!host_poll(fd, 150));
    /* Aimed at the other mode, it is work now. */
    RL_ASSERT(RLRunLoopEmbedPrepare(rl, "other", &timeout));
    host_sleeps_then_runs_a_pass(fd, "other");
    RL_ASSERT_EQ_INT(fired, 1);
    RLRelease(t);
    RLRelease(keep);
}

typedef struct {
    RLRunLoopRef rl;
    RLRunLoopTimerRef timer;
    RLRunLoopSourceRef source;
    double delay;
} poke;

static void *add_timer_later(void *arg) {
    poke *p = arg;
    rl_test_sleep(p->delay);
    RLRunLoopAddTimer(p->rl, p->timer, MODE);
    return NULL;
}

static void timer_added_from_another_thread_wakes_the_host(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fd = RLRunLoopEmbedGetFD(rl);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, MODE);
    _Atomic int fired = 0;
    poke p = {.rl = rl, .delay = 0.05};
    p.timer = rl_test_timer(RLAbsoluteTimeGetCurrent() + 0.1, 0, count_fire, &fired);
    int timeout = 0;
    RL_ASSERT(!RLRunLoopEmbedPrepare(rl, MODE, &timeout));
    RL_ASSERT_EQ_INT(timeout, -1);
    pthread_t th;
    pthread_create(&th, NULL, add_timer_later, &p);
    RL_ASSERT(host_poll(fd, -1));
    pthread_join(th, NULL);
    RLRunLoopRunInMode(MODE, 0, false);
    RL_ASSERT_EQ_INT(fired, 1);
    RLRelease(p.timer);
    RLRelease(keep);
}

/* ---- wake-ups, version-0 sources, blocks --------------------------------- */

static void *signal_and_wake_later(void *arg) {
    poke *p = arg;
    rl_test_sleep(p->delay);
    if (p->source) RLRunLoopSourceSignal(p->source);
    RLRunLoopWakeUp(p->rl);
    return NULL;
}

static void wake_up_from_another_thread_makes_it_readable_once(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fd = RLRunLoopEmbedGetFD(rl);
    _Atomic int performed = 0;
    RLRunLoopSourceRef s = add_counting_source(rl, &performed);
    poke p = {.rl = rl, .source = s, .delay = 0.05};
    RL_ASSERT(!RLRunLoopEmbedPrepare(rl, MODE, NULL));
    pthread_t th;
    pthread_create(&th, NULL, signal_and_wake_later, &p);
    RL_ASSERT(host_poll(fd, -1));
    pthread_join(th, NULL);
    RLRunLoopRunInMode(MODE, 0, false);
    RL_ASSERT_EQ_INT(performed, 1);
    /* Consumed: quiet again. */
    expect_quiet(rl, MODE, fd, 50);
    RLRelease(s);
}

static void signalled_source_without_wake_up_is_work_now(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fd = RLRunLoopEmbedGetFD(rl);
    _Atomic int performed = 0;
    RLRunLoopSourceRef s = add_counting_source(rl, &performed);
    RLRunLoopSourceSignal(s);
    int timeout = -1;
    RL_ASSERT(RLRunLoopEmbedPrepare(rl, MODE, &timeout));
    RL_ASSERT_EQ_INT(timeout, 0);
    RL_ASSERT(host_poll(fd, 0));
    RLRunLoopRunInMode(MODE, 0, false);
    RL_ASSERT_EQ_INT(performed, 1);
    expect_quiet(rl, MODE, fd, 50);
    RLRelease(s);
}

static void queued_block_is_work_now(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fd = RLRunLoopEmbedGetFD(rl);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, MODE);
    _Atomic int ran = 0;
    RLRunLoopPerformFunction(rl, MODE, count_perform, &ran);
    expect_work_now(rl, MODE, fd);
    RLRunLoopRunInMode(MODE, 0, false);
    RL_ASSERT_EQ_INT(ran, 1);
    expect_quiet(rl, MODE, fd, 50);
    RLRelease(keep);
}

/* A wake-up with nothing to run, on a mode with nothing in it: the pass
   finishes at once, and the descriptor must not stay readable (the host
   would spin). */
static void wake_up_of_an_empty_mode_does_not_spin(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fd = RLRunLoopEmbedGetFD(rl);
    RL_ASSERT(!RLRunLoopEmbedPrepare(rl, MODE, NULL));
    RLRunLoopWakeUp(rl);
    RL_ASSERT(host_poll(fd, 0));
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(MODE, 0, false), kRLRunLoopRunFinished);
    expect_quiet(rl, MODE, fd, 50);
}

static void cancel_stops_wake_ups_writing(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fd = RLRunLoopEmbedGetFD(rl);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, MODE);
    RLRunLoopEmbedPrepare(rl, MODE, NULL);
    RL_ASSERT(RLRunLoopIsWaiting(rl));
    RLRunLoopEmbedCancel(rl);
    RL_ASSERT(!RLRunLoopIsWaiting(rl));
    RLRunLoopWakeUp(rl);
    RL_ASSERT(!host_poll(fd, 50));
    /* The pending wake-up is seen by the next Prepare. */
    expect_work_now(rl, MODE, fd);
    RLRunLoopRunInMode(MODE, 0, false);
    expect_quiet(rl, MODE, fd, 50);
    RLRelease(keep);
}

/* ---- version-1 sources --------------------------------------------------- */

typedef struct {
    int fd;
    _Atomic int performed;
} pipe_source;

static int pipe_fd(void *info) {
    return ((pipe_source *)info)->fd;
}
static void pipe_perform(void *info) {
    pipe_source *p = info;
    char buf[64];
    while (read(p->fd, buf, sizeof buf) > 0) {}
    atomic_fetch_add(&p->performed, 1);
}

/* A new non-blocking pipe p whose read end a version-1 source in `mode`
   watches, draining it and counting into ps. */
static RLRunLoopSourceRef add_pipe_source(RLRunLoopRef rl, RLRunLoopMode mode, int p[2], pipe_source *ps) {
    RL_ASSERT_EQ_INT(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
    ps->fd = p[0];
    atomic_init(&ps->performed, 0);
    RLRunLoopSourceRef s = rl_test_source1(0, pipe_fd, pipe_perform, ps);
    RLRunLoopAddSource(rl, s, mode);
    return s;
}

static void ready_source_makes_it_readable_only_in_its_mode(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fd = RLRunLoopEmbedGetFD(rl);
    int p[2];
    pipe_source ps;
    RLRunLoopSourceRef s = add_pipe_source(rl, "other", p, &ps);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, MODE);
    RL_ASSERT_EQ_INT(write(p[1], "x", 1), 1);
    expect_quiet(rl, MODE, fd, 100);
    RL_ASSERT(!RLRunLoopEmbedPrepare(rl, "other", NULL)); /* the host's poll sees it */
    host_sleeps_then_runs_a_pass(fd, "other");
    RL_ASSERT_EQ_INT(ps.performed, 1);
    expect_quiet(rl, "other", fd, 50);
    /* A write while the host sleeps. */
    RL_ASSERT_EQ_INT(write(p[1], "y", 1), 1);
    host_sleeps_then_runs_a_pass(fd, "other");
    RL_ASSERT_EQ_INT(ps.performed, 2);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    RLRelease(keep);
    close(p[0]);
    close(p[1]);
}

/* A host built on epoll (libuv, CF) nests the descriptor in its own set. */
static void works_inside_a_hosts_epoll_set(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fd = RLRunLoopEmbedGetFD(rl);
    int host = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 7};
    RL_ASSERT_EQ_INT(epoll_ctl(host, EPOLL_CTL_ADD, fd, &ev), 0);
    _Atomic int fired = 0;
    RLRunLoopTimerRef t = add_counting_timer(rl, MODE, 0.02, 0.02, &fired);
    int wakeups = 0;
    while (fired < 5) {
        int timeout;
        RLRunLoopEmbedPrepare(rl, MODE, &timeout);
        struct epoll_event out;
        int n;
        while ((n = epoll_wait(host, &out, 1, -1)) < 0) {}
        RL_ASSERT_EQ_INT(n, 1);
        wakeups++;
        RLRunLoopRunInMode(MODE, 0, false);
    }
    RL_ASSERT_LE_INT(wakeups, 5);
    RLRunLoopTimerInvalidate(t);
    RLRunLoopEmbedPrepare(rl, MODE, NULL);
    struct epoll_event out;
    RL_ASSERT_EQ_INT(epoll_wait(host, &out, 1, 100), 0);
    RLRelease(t);
    close(host);
}

/* Running the loop by itself between host passes (a nested run, a modal
   wait) leaves the descriptor working for the host afterwards. */
static void own_runs_in_between_keep_it_working(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fd = RLRunLoopEmbedGetFD(rl);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, MODE);
    RLRunLoopSourceRef keep2 = rl_test_keep_mode(rl, "modal");
    _Atomic int fired = 0;
    RLRunLoopTimerRef t = add_counting_timer(rl, MODE, 0.15, 0, &fired);
    RLRunLoopEmbedPrepare(rl, MODE, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("modal", 0.02, false), kRLRunLoopRunTimedOut);
    RLRunLoopEmbedPrepare(rl, MODE, NULL);
    host_sleeps_then_runs_a_pass(fd, MODE);
    RL_ASSERT_EQ_INT(fired, 1);
    RLRelease(t);
    RLRelease(keep);
    RLRelease(keep2);
}

/* Stress: wake-ups and signals from another thread while the host loop
   runs: every signal handled, and the host never spins on a quiet loop. */
typedef struct {
    RLRunLoopRef rl;
    RLRunLoopSourceRef source;
    int n;
    _Atomic int sent;
} sender;

static void *send_many(void *arg) {
    sender *s = arg;
    for (int i = 0; i < s->n; i++) {
        RLRunLoopSourceSignal(s->source);
        RLRunLoopWakeUp(s->rl);
        atomic_fetch_add(&s->sent, 1);
        if (i % 64 == 0) rl_test_sleep(0.0002);
    }
    return NULL;
}

static _Atomic int stress_performed;
static void stress_perform(void *info) {
    (void)info;
    atomic_fetch_add(&stress_performed, 1);
}

static void stress_signals_from_another_thread(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fd = RLRunLoopEmbedGetFD(rl);
    RLRunLoopSourceRef s = rl_test_source0(0, stress_perform, NULL);
    RLRunLoopAddSource(rl, s, MODE);
    sender snd = {.rl = rl, .source = s, .n = (int)rl_test_scaled(20000)};
    pthread_t th;
    pthread_create(&th, NULL, send_many, &snd);
    while (atomic_load(&snd.sent) < snd.n) {
        RLRunLoopEmbedPrepare(rl, MODE, NULL);
        host_poll(fd, 100);
        RLRunLoopRunInMode(MODE, 0, false);
    }
    pthread_join(th, NULL);
    /* The last signal is seen: prepare reports it or it was handled. */
    if (RLRunLoopEmbedPrepare(rl, MODE, NULL)) {
        RL_ASSERT(host_poll(fd, 0));
        RLRunLoopRunInMode(MODE, 0, false);
    }
    RL_ASSERT(!RLRunLoopEmbedPrepare(rl, MODE, NULL));
    RL_ASSERT_GE_INT(stress_performed, 1);
    /* At most one stale edge left from the race with the last pass. */
    int extra = 0;
    while (host_poll(fd, 20) && extra < 5) {
        extra++;
        RLRunLoopRunInMode(MODE, 0, false);
        RLRunLoopEmbedPrepare(rl, MODE, NULL);
    }
    RL_ASSERT_LE_INT(extra, 1);
    RLRelease(s);
}

/* The loop remakes its wait set when a watched fd was closed before its
   source left; the host's descriptor stays the same and keeps working. */
static void descriptor_survives_the_wait_set_being_remade(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fd = RLRunLoopEmbedGetFD(rl);
    int p[2];
    pipe_source ps;
    RLRunLoopSourceRef s = add_pipe_source(rl, MODE, p, &ps);
    RLRunLoopEmbedPrepare(rl, MODE, NULL);
    close(p[0]);
    RLRunLoopRemoveSource(rl, s, MODE); /* by a closed number: the set is remade */
    _Atomic int fired = 0;
    RLRunLoopTimerRef t = add_counting_timer(rl, MODE, 0.03, 0, &fired);
    RLRunLoopEmbedPrepare(rl, MODE, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopEmbedGetFD(rl), fd);
    host_sleeps_then_runs_a_pass(fd, MODE);
    RL_ASSERT_EQ_INT(fired, 1);
    RLRunLoopEmbedPrepare(rl, MODE, NULL);
    RL_ASSERT(!host_poll(fd, 50));
    RLRelease(t);
    RLRelease(s);
    close(p[1]);
}

static void *thread_with_a_loop(void *arg) {
    *(RLRunLoopRef *)arg = (RLRunLoopRef)RLRetain(RLRunLoopGetCurrent());
    return NULL;
}

static void dead_loop_has_no_descriptor(void) {
    RLRunLoopRef rl = NULL;
    pthread_t th;
    pthread_create(&th, NULL, thread_with_a_loop, &rl);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopEmbedGetFD(rl), -1);
    RLRelease(rl);
}

static void forked_child_gets_its_own_descriptor(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fd = RLRunLoopEmbedGetFD(rl);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, MODE);
    pid_t pid = fork();
    if (pid == 0) {
        /* Same number, the child's own: the child's timer wakes the child. */
        _Atomic int fired = 0;
        RLRunLoopTimerRef timer = add_counting_timer(rl, MODE, 0.02, 0, &fired);
        RLRunLoopEmbedPrepare(rl, MODE, NULL);
        if (RLRunLoopEmbedGetFD(rl) != fd) _exit(2);
        if (!host_poll(fd, 5000)) _exit(3);
        RLRunLoopRunInMode(MODE, 0, false);
        RLRelease(timer); /* the child's leak checker runs at _exit */
        _exit(fired == 1 ? 0 : 4);
    }
    /* Meanwhile the parent's descriptor stays quiet. */
    RLRunLoopEmbedPrepare(rl, MODE, NULL);
    RL_ASSERT(!host_poll(fd, 200));
    int status = 0;
    waitpid(pid, &status, 0);
    RL_ASSERT(WIFEXITED(status));
    RL_ASSERT_EQ_INT(WEXITSTATUS(status), 0);
    RL_ASSERT(!host_poll(fd, 50));
    RLRelease(keep);
}

/* The parent's descriptor was readable when it forked: the child's
   descriptor (same number) is the child's own from the first call, so it
   shows none of the parent's readiness before the child prepares. */
static void forked_childs_descriptor_never_shows_the_parents_readiness(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fd = RLRunLoopEmbedGetFD(rl);
    _Atomic int performed = 0;
    RLRunLoopSourceRef s = add_counting_source(rl, &performed);
    RLRunLoopSourceSignal(s);
    expect_work_now(rl, MODE, fd);
    pid_t pid = fork();
    if (pid == 0) {
        if (RLRunLoopEmbedGetFD(rl) != fd) _exit(2);
        if (host_poll(fd, 0)) _exit(3);        /* the parent's wake-up */
        RLRunLoopEmbedPrepare(rl, MODE, NULL); /* the child's own work: its copy of the signal */
        if (!host_poll(fd, 5000)) _exit(4);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    RL_ASSERT(WIFEXITED(status));
    RL_ASSERT_EQ_INT(WEXITSTATUS(status), 0);
    RL_ASSERT(host_poll(fd, 0)); /* the parent's readiness is still its own */
    RLRunLoopRunInMode(MODE, 0, false);
    RL_ASSERT_EQ_INT(performed, 1);
    RLRelease(s);
}

/* ---- the host breaks the descriptor ------------------------------------------ */
/* The descriptor is the loop's: a host that closes it, and lets another file
   take its number, would sleep on that file (/dev/null: always readable, a
   spin) or on a dead number (poll's POLLNVAL: a spin too). Prepare notices
   before the host sleeps and aborts, naming the embedding set, as for the
   loop's other own descriptors. Each breaks it in a child process. */

/* A loop with something in its mode, embedded once: the descriptor works. */
static int embedded_loop(RLRunLoopRef *out) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    rl_test_keep_mode(rl, MODE);
    int fd = RLRunLoopEmbedGetFD(rl);
    RL_ASSERT(fd >= 0);
    RL_ASSERT(!RLRunLoopEmbedPrepare(rl, MODE, NULL));
    *out = rl;
    return fd;
}

static void prepare_after_dev_null_took_the_number(void) {
    RLRunLoopRef rl;
    int fd = embedded_loop(&rl);
    close(fd);
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC); /* the lowest free number: fd's */
    RL_ASSERT_EQ_INT(null_fd, fd);
    RLRunLoopEmbedPrepare(rl, MODE, NULL);
}

/* Before: Prepare went on handing the host /dev/null's number to sleep on. */
static void descriptor_closed_and_reused_by_another_file_aborts_in_prepare(void) {
    RL_EXPECT_ABORT(prepare_after_dev_null_took_the_number, "epoll_ctl", "the loop's embedding set", strerror(EINVAL));
}

static void prepare_after_close(void) {
    RLRunLoopRef rl;
    int fd = embedded_loop(&rl);
    close(fd);
    RLRunLoopEmbedPrepare(rl, MODE, NULL);
}

static void closed_descriptor_aborts_in_prepare(void) {
    RL_EXPECT_ABORT(prepare_after_close, "epoll_ctl", "the loop's embedding set", strerror(EBADF));
}

static void prepare_after_another_epoll_set_took_the_number(void) {
    RLRunLoopRef rl;
    int fd = embedded_loop(&rl);
    int other = epoll_create1(EPOLL_CLOEXEC);
    RL_ASSERT(other >= 0);
    RL_ASSERT_EQ_INT(dup2(other, fd), fd); /* closes the loop's set */
    close(other);
    RLRunLoopEmbedPrepare(rl, MODE, NULL);
}

/* Another epoll set under the number (the host made one) does not hold the
   loop's wait set. */
static void descriptor_replaced_by_another_epoll_set_aborts_in_prepare(void) {
    RL_EXPECT_ABORT(prepare_after_another_epoll_set_took_the_number, "epoll_ctl", "the loop's embedding set",
                    strerror(ENOENT));
}

/* A working descriptor passes the check every time, whatever Prepare finds. */
static void intact_descriptor_passes_every_prepare(void) {
    RLRunLoopRef rl;
    int fd = embedded_loop(&rl);
    _Atomic int performed = 0;
    RLRunLoopSourceRef s = add_counting_source(rl, &performed);
    for (int i = 0; i < 100; i++) {
        RLRunLoopSourceSignal(s);
        expect_work_now(rl, MODE, fd);
        RLRunLoopRunInMode(MODE, 0, false);
        expect_quiet(rl, MODE, fd, 0);
    }
    RL_ASSERT_EQ_INT(performed, 100);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(descriptor_is_stable),
        RL_TEST(descriptor_from_another_thread_is_the_same),
        RL_TEST(prepare_refuses_bad_input),
        RL_TEST(idle_loop_never_makes_it_readable),
        RL_TEST(no_timer_means_no_timeout),
        RL_TEST(due_timer_makes_it_readable_and_one_pass_fires_it),
        RL_TEST(past_timer_is_work_now),
        RL_TEST(repeating_timer_costs_one_wake_up_per_firing),
        RL_TEST(other_modes_timers_and_sources_stay_quiet),
        RL_TEST(timer_added_from_another_thread_wakes_the_host),
        RL_TEST(wake_up_from_another_thread_makes_it_readable_once),
        RL_TEST(signalled_source_without_wake_up_is_work_now),
        RL_TEST(queued_block_is_work_now),
        RL_TEST(wake_up_of_an_empty_mode_does_not_spin),
        RL_TEST(cancel_stops_wake_ups_writing),
        RL_TEST(ready_source_makes_it_readable_only_in_its_mode),
        RL_TEST(works_inside_a_hosts_epoll_set),
        RL_TEST(own_runs_in_between_keep_it_working),
        RL_TEST(stress_signals_from_another_thread),
        RL_TEST(descriptor_survives_the_wait_set_being_remade),
        RL_TEST(dead_loop_has_no_descriptor),
        RL_TEST(forked_child_gets_its_own_descriptor),
        RL_TEST(forked_childs_descriptor_never_shows_the_parents_readiness),
        RL_TEST(descriptor_closed_and_reused_by_another_file_aborts_in_prepare),
        RL_TEST(closed_descriptor_aborts_in_prepare),
        RL_TEST(descriptor_replaced_by_another_epoll_set_aborts_in_prepare),
        RL_TEST(intact_descriptor_passes_every_prepare),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
