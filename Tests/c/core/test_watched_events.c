/*
 * test_watched_events.c: version-1 sources that choose what their fd is
 * watched for (RLRunLoopSourceSetWatchedEvents), in the loop's own wait set,
 * and file descriptor objects built on them (no descriptor of their own).
 */
#include <CRunLoop.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include "rltest.h"

typedef struct {
    int fd;
    int performed;
    RLOptionFlags last_ready;
    RLRunLoopSourceRef self;
    RLOptionFlags then_watch; /* what perform watches afterwards */
} watcher;

static int w_fd(void *info) {
    return ((watcher *)info)->fd;
}

static void w_perform(void *info) {
    watcher *w = info;
    w->performed++;
    w->last_ready = RLRunLoopSourceGetReadyEvents(w->self);
    RLRunLoopSourceSetWatchedEvents(w->self, w->then_watch);
}

static RLRunLoopSourceRef make_watcher(watcher *w) {
    w->self = rl_test_source1(0, w_fd, w_perform, w);
    return w->self;
}

static void watches_for_writing(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int sv[2];
    RL_ASSERT_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    watcher w = {.fd = sv[0]};
    RLRunLoopSourceRef s = make_watcher(&w);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    /* Readable by default: nothing to read, so quiet. */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, true), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(w.performed, 0);
    RLRunLoopSourceSetWatchedEvents(s, kRLRunLoopSourceWritable);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(w.performed, 1);
    RL_ASSERT_EQ_INT(w.last_ready, kRLRunLoopSourceWritable);
    /* It stopped watching (then_watch = 0): quiet again. */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, true), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(w.performed, 1);
    /* Both: readable and writable in one perform. */
    RL_ASSERT_EQ_INT(write(sv[1], "x", 1), 1);
    RLRunLoopSourceSetWatchedEvents(s, kRLRunLoopSourceReadable | kRLRunLoopSourceWritable);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(w.last_ready, kRLRunLoopSourceReadable | kRLRunLoopSourceWritable);
    RL_ASSERT_EQ_INT(RLRunLoopSourceGetReadyEvents(s), 0); /* outside its perform */
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    close(sv[0]);
    close(sv[1]);
}

/* A closed fd (poll()'s POLLNVAL) is ready while watched; a plain source
   (that never set its events) with a closed fd is simply unwatched. */
static void closed_fd_is_ready_only_for_sources_that_set_events(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int p[2];
    RL_ASSERT_EQ_INT(pipe(p), 0);
    close(p[0]);
    watcher plain = {.fd = p[0]};
    RLRunLoopSourceRef a = make_watcher(&plain);
    RLRunLoopAddSource(rl, a, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, true), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(plain.performed, 0);
    RLRunLoopSourceInvalidate(a);
    RLRelease(a);

    watcher w = {.fd = p[0]};
    RLRunLoopSourceRef s = make_watcher(&w);
    RLRunLoopSourceSetWatchedEvents(s, kRLRunLoopSourceReadable);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(w.performed, 1);
    RL_ASSERT_EQ_INT(w.last_ready, kRLRunLoopSourceReadable);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, true), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(w.performed, 1);
    /* Watching again: ready again. */
    RLRunLoopSourceSetWatchedEvents(s, kRLRunLoopSourceReadable);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(w.performed, 2);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    close(p[1]);
}

typedef struct {
    RLRunLoopRef rl;
    RLRunLoopSourceRef s;
} later;

static void *watch_when_sleeping(void *arg) {
    later *l = arg;
    rl_test_wait_sleeping(l->rl, 10);
    RLRunLoopSourceSetWatchedEvents(l->s, kRLRunLoopSourceWritable);
    return NULL;
}

static void watching_from_another_thread_wakes_the_loop(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int sv[2];
    RL_ASSERT_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    watcher w = {.fd = sv[0]};
    RLRunLoopSourceRef s = make_watcher(&w);
    RLRunLoopSourceSetWatchedEvents(s, 0);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    later l = {rl, s};
    pthread_t t;
    pthread_create(&t, NULL, watch_when_sleeping, &l);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, true), kRLRunLoopRunHandledSource);
    pthread_join(t, NULL);
    RL_ASSERT_EQ_INT(w.last_ready, kRLRunLoopSourceWritable);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    close(sv[0]);
    close(sv[1]);
}

/* ---- file descriptor objects cost no descriptor of their own -------------- */

static void fd_cb(RLFileDescriptorRef f, RLOptionFlags types, void *info) {
    (void)f;
    (void)types;
    (*(int *)info)++;
}

static void file_descriptor_objects_hold_no_descriptors(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    enum { N = 300 };
    static int pipes[N][2];
    static RLFileDescriptorRef fds[N];
    int fired = 0;
    for (int i = 0; i < N; i++) RL_ASSERT_EQ_INT(pipe2(pipes[i], O_NONBLOCK), 0);
    int before = rl_test_open_fds();
    RLFileDescriptorContext ctx = {0, &fired, NULL, NULL, NULL};
    for (int i = 0; i < N; i++) {
        fds[i] = RLFileDescriptorCreate(pipes[i][0], false, fd_cb, &ctx);
        RLRunLoopSourceRef s = RLFileDescriptorCreateRunLoopSource(fds[i], 0);
        RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
        RLRelease(s);
        RLFileDescriptorEnableCallBacks(fds[i], kRLFileDescriptorReadCallBack);
    }
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LE_INT(rl_test_open_fds() - before, 1); /* at most the loop's timerfd */
    for (int i = 0; i < N; i += 3) RL_ASSERT_EQ_INT(write(pipes[i][1], "x", 1), 1);
    for (int k = 0; k < 50 && fired < (N + 2) / 3; k++) RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false);
    RL_ASSERT_EQ_INT(fired, (N + 2) / 3);
    for (int i = 0; i < N; i++) {
        RLFileDescriptorInvalidate(fds[i]);
        RLRelease(fds[i]);
        close(pipes[i][0]);
        close(pipes[i][1]);
    }
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
}

/* ---- races: watch changes from other threads while the loop switches modes */

typedef struct {
    int fd;
    _Atomic long got;
} sink;

static void fd_drain(RLFileDescriptorRef f, RLOptionFlags types, void *info) {
    (void)types;
    sink *k = info;
    char buf[256];
    ssize_t n;
    while ((n = read(k->fd, buf, sizeof buf)) > 0) atomic_fetch_add(&k->got, n);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
}

static void v1_drain(void *info) {
    sink *k = info;
    char buf[256];
    ssize_t n;
    while ((n = read(k->fd, buf, sizeof buf)) > 0) atomic_fetch_add(&k->got, n);
}

static int sink_fd(void *info) {
    return ((sink *)info)->fd;
}

typedef struct {
    int fd_a, fd_b;
    long n;
    RLFileDescriptorRef f;
    _Atomic int done;
} feeder;

/* Writes one byte, retrying while the reader is behind (a full buffer). If
   the loop stops reading one of the fds, the test ends on its timeout; the
   note on stderr says which one (a lost watch) rather than leaving a bare
   timeout to guess from. */
static void feed_one(int fd, const char *name, long i) {
    long retries = 0;
    while (write(fd, name, 1) != 1) {
        if (++retries == 100000)
            fprintf(stderr, "feeder: byte %ld of '%s' not taken after %ld retries: is that fd still read?\n", i, name,
                    retries);
        rl_test_sleep(0.0001);
    }
}

static void *feed(void *arg) {
    feeder *fe = arg;
    for (long i = 0; i < fe->n; i++) {
        feed_one(fe->fd_a, "a", i);
        feed_one(fe->fd_b, "b", i);
        if ((i & 63) == 0) rl_test_sleep(0.0001);
    }
    atomic_store(&fe->done, 1);
    return NULL;
}

static void *toggle(void *arg) {
    feeder *fe = arg;
    while (!atomic_load(&fe->done)) {
        RLFileDescriptorDisableCallBacks(fe->f, kRLFileDescriptorReadCallBack);
        RLFileDescriptorEnableCallBacks(fe->f, kRLFileDescriptorReadCallBack | kRLFileDescriptorWriteCallBack);
        RLFileDescriptorDisableCallBacks(fe->f, kRLFileDescriptorWriteCallBack);
        RLFileDescriptorEnableCallBacks(fe->f, kRLFileDescriptorReadCallBack);
        /* Valgrind runs one thread at a time and does not hand the CPU over
           fairly: this loop, which rarely blocks, can keep it for long
           stretches while the feeder and the loop wait their turn, and the
           test times out with nothing wrong. One yield per cycle keeps every
           interleaving possible (the other threads still run between any two
           calls on a multiprocessor) and lets them make progress. */
        sched_yield();
    }
    return NULL;
}

static void watch_changes_race_with_mode_switches(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int sv[2], p[2];
    RL_ASSERT_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    RL_ASSERT_EQ_INT(pipe2(p, O_NONBLOCK), 0);
    sink ka = {.fd = sv[0]}, kb = {.fd = p[0]};
    RLFileDescriptorContext ctx = {0, &ka, NULL, NULL, NULL};
    RLFileDescriptorRef f = RLFileDescriptorCreate(sv[0], false, fd_drain, &ctx);
    RLRunLoopSourceRef sa = RLFileDescriptorCreateRunLoopSource(f, 0);
    RLRunLoopAddSource(rl, sa, "A");
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    RLRunLoopSourceRef sb = rl_test_source1(0, sink_fd, v1_drain, &kb);
    RLRunLoopAddSource(rl, sb, "B");
    RLRunLoopAddSource(rl, sb, "A"); /* shared by both modes */

    feeder fe = {.fd_a = sv[1], .fd_b = p[1], .n = rl_test_scaled(20000), .f = f};
    pthread_t tf, tt;
    pthread_create(&tf, NULL, feed, &fe);
    pthread_create(&tt, NULL, toggle, &fe);
    while (!atomic_load(&fe.done)) {
        RLRunLoopRunInMode("A", 0.001, false);
        RLRunLoopRunInMode("B", 0.001, false);
    }
    pthread_join(tf, NULL);
    pthread_join(tt, NULL);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    for (int k = 0; k < 2000 && (atomic_load(&ka.got) < fe.n || atomic_load(&kb.got) < fe.n); k++)
        RLRunLoopRunInMode("A", 0.01, false);
    RL_ASSERT_EQ_INT(atomic_load(&ka.got), fe.n); /* every byte sent, read */
    RL_ASSERT_EQ_INT(atomic_load(&kb.got), fe.n);
    RLFileDescriptorInvalidate(f);
    RLRelease(f);
    RLRelease(sa);
    RLRunLoopSourceInvalidate(sb);
    RLRelease(sb);
    close(sv[0]);
    close(sv[1]);
    close(p[0]);
    close(p[1]);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(watches_for_writing),
        RL_TEST(closed_fd_is_ready_only_for_sources_that_set_events),
        RL_TEST(watching_from_another_thread_wakes_the_loop),
        RL_TEST(file_descriptor_objects_hold_no_descriptors),
        RL_TEST(watch_changes_race_with_mode_switches),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
